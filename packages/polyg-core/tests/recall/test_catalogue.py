"""The memory catalogue's file: a new process reads what a question touches, not every memory.

The file scores like the in-process BM25 index, follows writes and deletions made by
others, and survives a restart of FalkorDB.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.recall import catalogue_index
from polyg_core.recall.catalogue import MemoryCatalogue, NamespaceCatalogue
from polyg_core.recall.catalogue_index import CatalogueEntry, CatalogueReader, CatalogueWriter
from polyg_core.recall.lexical import LexicalIndex
from polyg_core.storage.store import FalkorStore
from polyg_core.testing.restart import RestartableFalkorDB
from polyg_core.transfer import RecordWriter
from polyg_core.transfer.reader import iter_jsonl

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)
TOPICS = [
    "the pottery kiln",
    "the allotment beans",
    "the choir rehearsal",
    "the bicycle chain",
    "the sourdough starter",
    "the lighthouse lamp",
    "the chess club",
    "the rooftop beehive",
]
FILLER = [
    f"{who}: I spent {day} on {topic}, it went {how}."
    for who in ("Imogen", "Tobias", "Wren")
    for day in ("Monday", "Thursday", "the weekend")
    for topic in TOPICS
    for how in ("well", "badly")
]
TARGET = "Tobias: the lighthouse lamp needs a new brass gimbal before the winter gales."
QUESTION = "What does the lighthouse lamp need before the gales?"


def _entry(i: int, text: str) -> CatalogueEntry:
    return CatalogueEntry(
        uuid=f"m{i:04d}",
        content=text,
        source_id=None,
        created_at=1_000 * i,
        recorded_at=1_000 * i,
        category="episodic",
        tags=(),
        concepts=(f"c{i % 3}",),
        author=text.split(":")[0] if ":" in text else None,
    )


async def _write(memory: Memory, texts: list[str]) -> list[str]:
    out: list[str] = []
    for i, text in enumerate(texts):
        mem, _ = await memory.semantic.add_memory(
            memory.namespace, text, created_at=NOW - timedelta(minutes=len(texts) - i)
        )
        out.append(mem.uuid)
    return out


@pytest.mark.anyio
async def test_a_new_process_reads_no_memory_before_its_first_recall(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    first = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(300):
        uuids = await _write(first, [*FILLER, TARGET])
        warm = await first.recall(QUESTION, reference_time=NOW)
    assert warm.memories[0].uuid == uuids[-1]
    assert first.pipeline.catalogue.fetched == len(uuids)  # the first recall ever builds it

    # Another process: its own pipeline and catalogue, the same data dir.
    fresh = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(120):
        cold = await fresh.recall(QUESTION, reference_time=NOW)
    catalogue = fresh.pipeline.catalogue
    assert [m.uuid for m in cold.memories] == [m.uuid for m in warm.memories]
    assert catalogue.fetched == 0  # no memory read from FalkorDB into the process
    loaded = (await catalogue.get(namespace)).loaded
    assert 0 < loaded < len(uuids) / 2, loaded  # only the memories the question touched


@pytest.mark.anyio
async def test_the_catalogue_file_survives_a_restart_and_follows_later_writes(
    restartable_falkordb: RestartableFalkorDB, embedder: Embedder
) -> None:
    server = restartable_falkordb
    ns = "catalogue_restart"
    async with server.store() as store:
        memory = Memory(store=store, embedder=embedder, namespace=ns)
        with anyio.fail_after(300):
            await _write(memory, [*FILLER[:40], TARGET])
            await memory.recall(QUESTION, reference_time=NOW)
    await anyio.to_thread.run_sync(server.restart)
    async with server.store() as store:
        memory = Memory(store=store, embedder=embedder, namespace=ns)
        with anyio.fail_after(120):
            result = await memory.recall(QUESTION, reference_time=NOW)
            assert result.memories[0].content == TARGET
            assert memory.pipeline.catalogue.fetched == 0
            later, _ = await memory.semantic.add_memory(
                ns, "Wren: the gimbal arrived by ferry on Friday.", created_at=NOW
            )
            result = await memory.recall("When did the gimbal arrive by ferry?", reference_time=NOW)
        assert result.memories[0].uuid == later.uuid
        assert memory.pipeline.catalogue.fetched == 1  # only the new memory


@pytest.mark.anyio
async def test_a_deletion_elsewhere_rebuilds_the_file(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(120):
        kept, gone = await _write(memory, ["The kiln shed roof leaks.", "The kiln fan rattles."])
        catalogue = MemoryCatalogue(store, directory=tmp_path)
        assert len(await catalogue.get(namespace)) == 2
        await store.query(namespace, "MATCH (m:S_Memory {uuid: $u}) DETACH DELETE m", {"u": gone})
        cat = await catalogue.get(namespace)
    assert [e.uuid for e, _ in cat.bm25("kiln", 5)] == [kept]
    assert cat.get(gone) is None


@pytest.mark.anyio
async def test_a_namespace_back_in_an_older_state_rebuilds_the_file(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    """As after a restore: the file's newest memory is gone and an older one is back, with
    the count unchanged and nothing recorded after the file's newest."""
    memory = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(120):
        kept, newest = await _write(memory, ["The kiln shed roof leaks.", "The kiln fan rattles."])
        catalogue = MemoryCatalogue(store, directory=tmp_path)
        assert len(await catalogue.get(namespace)) == 2
        await store.query(namespace, "MATCH (m:S_Memory {uuid: $u}) DETACH DELETE m", {"u": newest})
        (back,) = await _write(memory, ["The kiln door hinge squeaks."])
        await store.query(
            namespace,
            "MATCH (k:S_Memory {uuid: $k}), (m:S_Memory {uuid: $u}) "
            "SET m.recorded_at = k.recorded_at",
            {"k": kept, "u": back},
        )
        cat = await catalogue.get(namespace)
    assert cat.get(newest) is None
    assert cat.get(back) is not None
    assert {e.uuid for e, _ in cat.bm25("kiln", 5)} == {kept, back}


def _catalogue(path: Path, entries: list[CatalogueEntry], batches: list[int]) -> NamespaceCatalogue:
    """A catalogue file written in batches of the given sizes (the rest in a last one)."""
    writer = CatalogueWriter(path)
    done = 0
    for size in [*batches, len(entries)]:
        part = entries[done : done + size]
        if not part:
            continue
        base = (done, 1_000 * (done - 1)) if done else (0, 0)
        assert writer.append(part, base, (done + len(part), 1_000 * (done + len(part) - 1)))
        done += len(part)
    writer.close()
    cat = NamespaceCatalogue(CatalogueReader(path))
    cat.refresh()
    return cat


WORDS = ["kiln", "glaze", "cone", "shed", "bees", "hive", "honey", "the", "gale", "lamp"]


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join),
        min_size=1,
        max_size=40,
    ),
    st.lists(st.integers(min_value=1, max_value=5), max_size=12),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
)
def test_the_file_ranks_exactly_as_the_in_process_index(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], batches: list[int], query: str
) -> None:
    path = tmp_path_factory.mktemp("cat") / "ns.sqlite"
    old = catalogue_index.MAX_CHUNKS
    catalogue_index.MAX_CHUNKS = 2  # merge chunks often
    try:
        cat = _catalogue(path, [_entry(i, t) for i, t in enumerate(texts)], batches)
    finally:
        catalogue_index.MAX_CHUNKS = old
    index = LexicalIndex()
    for t in texts:
        index.add(t)
    assert cat.lexical.search(query, 10) == index.search(query, 10)
    for term in index.tokens(query):
        assert cat.lexical.idf(term, at_least=50) == index.idf(term, at_least=50)
    word = query.split()[0]
    assert cat.mention_uuids(word) == [e.uuid for e in cat.mentions(word)]
    assert [e.uuid for e in cat.mentions(word)] == [
        f"m{i:04d}" for i, t in enumerate(texts) if word in t.split()
    ]
    cat.reader.close()


def test_a_name_said_in_the_possessive_is_mentioned(tmp_path: Path) -> None:
    texts = ["Orsolya's kiln is lit", "the kiln of Orsolya Bene", "Orsolya Bene's glaze", "kiln"]
    cat = _catalogue(tmp_path / "ns.sqlite", [_entry(i, t) for i, t in enumerate(texts)], [2])
    assert cat.mention_uuids("Orsolya") == ["m0000", "m0001", "m0002"]
    assert cat.mention_uuids("Orsolya Bene") == ["m0001", "m0002"]
    cat.reader.close()


def test_an_author_whose_name_is_a_word_is_asked_about_only_by_name(tmp_path: Path) -> None:
    texts = ["Will: kiln lit", "Imogen: glaze mixed", "Will: cone bent"]
    cat = _catalogue(tmp_path / "ns.sqlite", [_entry(i, t) for i, t in enumerate(texts)], [1, 2])
    assert cat.authors_in("What will Imogen glaze next?") == ["imogen"]
    assert cat.authors_in("Will Imogen glaze the bowl?") == ["imogen"]
    assert cat.authors_in("What did Will say about the kiln?") == ["will"]
    assert cat.authors_in("What did Imogen tell Will?") == ["will", "imogen"]
    cat.reader.close()


def test_time_order_authors_and_concepts_come_from_the_file(tmp_path: Path) -> None:
    texts = ["Imogen: kiln lit", "Tobias: glaze mixed", "Imogen: cone bent", "no author here"]
    cat = _catalogue(tmp_path / "ns.sqlite", [_entry(i, t) for i, t in enumerate(texts)], [1, 2])
    first, second, third, fourth = (cat.get(f"m{i:04d}") for i in range(4))
    assert first and second and third and fourth
    assert [e.uuid for e in cat.neighbours(second.uuid, 1_000)] == [first.uuid, third.uuid]
    assert cat.neighbours(second.uuid, 10) == []  # outside the window
    assert cat.follows(third, second) and not cat.follows(second, third)
    assert cat.authors_in("What did imogen and Tobias do?") == ["imogen", "tobias"]
    assert [e.uuid for e in cat.authored_by("Imogen")] == [first.uuid, third.uuid]
    assert [e.uuid for e in cat.about("c0")] == [first.uuid, fourth.uuid]
    assert cat.about_uuids("c0") == [first.uuid, fourth.uuid]
    assert cat.authored_uuids("imogen") == [first.uuid, third.uuid]
    assert cat.created_between(1_000, 2_000) == [second.uuid, third.uuid]
    assert cat.entries[cat.position[third.uuid]] is third  # one memory, one object
    assert len(cat) == 4 and [e.uuid for e in cat.entries] == [f"m{i:04d}" for i in range(4)]
    cat.reader.close()


def test_a_words_idf_is_read_once_and_follows_a_later_write(tmp_path: Path) -> None:
    path = tmp_path / "ns.sqlite"
    first = ["Imogen: kiln lit", "Tobias: glaze mixed", "Imogen: kiln cooled"]
    cat = _catalogue(path, [_entry(i, t) for i, t in enumerate(first)], [])
    index = LexicalIndex()
    for t in first:
        index.add(t)
    (kiln,) = index.tokens("kiln")
    assert cat.lexical.idf(kiln) == index.idf(kiln)
    assert cat.lexical.idf(kiln) == cat.lexical.idf(kiln, at_least=0)  # asked again: kept
    # Another process adds memories holding the word: the next refresh reads it again.
    later = ["Wren: kiln relit", "Wren: kiln shelf cracked"]
    writer = CatalogueWriter(path)
    assert writer.append([_entry(3 + i, t) for i, t in enumerate(later)], (3, 2_000), (5, 4_000))
    writer.close()
    for t in later:
        index.add(t)
    assert cat.lexical.idf(kiln) != index.idf(kiln)  # the file's state the catalogue knows
    cat.refresh()
    assert cat.lexical.idf(kiln) == index.idf(kiln)
    assert cat.lexical.idf(kiln, at_least=50) == index.idf(kiln, at_least=50)
    cat.reader.close()


def test_a_concepts_memories_are_kept_and_follow_a_later_write(tmp_path: Path) -> None:
    path = tmp_path / "ns.sqlite"
    first = ["Imogen: kiln lit", "Tobias: glaze mixed", "Imogen: kiln cooled", "Wren: shelf"]
    cat = _catalogue(path, [_entry(i, t) for i, t in enumerate(first)], [])
    assert cat.about_uuids("c0") == ["m0000", "m0003"]
    before = cat.concept_specificity("c0")
    assert before == cat.specificity(2)
    # Asked again: the same answer (kept), and what a caller does with it changes nothing.
    cat.about_uuids("c0").append("m9999")
    assert cat.about_uuids("c0") == ["m0000", "m0003"]
    assert [e.uuid for e in cat.about("c0")] == ["m0000", "m0003"]
    # Another process adds memories about the concept: the next refresh reads them.
    later = ["Wren: kiln relit", "Wren: kiln shelf cracked", "Tobias: glaze sieved"]
    writer = CatalogueWriter(path)
    assert writer.append([_entry(4 + i, t) for i, t in enumerate(later)], (4, 3_000), (7, 6_000))
    writer.close()
    cat.refresh()
    assert cat.about_uuids("c0") == ["m0000", "m0003", "m0006"]
    assert cat.concept_specificity("c0") == cat.specificity(3) != before
    cat.reader.close()


def test_a_write_on_a_stale_base_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ns.sqlite"
    one, two = CatalogueWriter(path), CatalogueWriter(path)
    assert one.append([_entry(0, "kiln lit")], (0, 0), (1, 0))
    # The other process saw the empty file too; its write would number a memory twice.
    assert not two.append([_entry(1, "glaze mixed")], (0, 0), (1, 1_000))
    assert two.append([_entry(1, "glaze mixed")], (1, 0), (2, 1_000))
    assert one.append([_entry(1, "glaze mixed")], (1, 0), (2, 1_000))  # already there: kept
    one.close()
    two.close()
    reader = CatalogueReader(path)
    assert reader.state().n_docs == 2
    reader.close()


@pytest.mark.anyio
async def test_an_import_of_memories_leaves_the_catalogue_ready_for_a_new_process(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    texts = [*FILLER[:30], TARGET]
    path = tmp_path / "memories.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "kind": "memory",
                    "content": text,
                    "created_at": (NOW - timedelta(minutes=len(texts) - i)).isoformat(),
                }
            )
            + "\n"
            for i, text in enumerate(texts)
        )
    )
    importer = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(300):
        report = await RecordWriter.of(importer).run(namespace, lambda: iter_jsonl(path))
    assert report.kind("memory").created == len(texts)
    # The import brought the catalogue file up to date itself, reading each memory once.
    assert importer.pipeline.catalogue.fetched == len(texts)

    fresh = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(120):
        result = await fresh.recall(QUESTION, reference_time=NOW)
    assert result.memories[0].content == TARGET
    assert fresh.pipeline.catalogue.fetched == 0  # the first recall built nothing


@pytest.mark.anyio
async def test_an_import_without_memories_leaves_the_catalogue_alone(
    store: FalkorStore, embedder: Embedder, namespace: str, tmp_path: Path
) -> None:
    path = tmp_path / "entities.jsonl"
    path.write_text('{"kind": "entity", "name": "Harbour crane", "entity_type": "Thing"}\n')
    importer = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(120):
        report = await RecordWriter.of(importer).run(namespace, lambda: iter_jsonl(path))
    assert report.kind("entity").created == 1
    assert importer.pipeline.catalogue.fetched == 0
    assert not importer.pipeline.catalogue.path(namespace).exists()
