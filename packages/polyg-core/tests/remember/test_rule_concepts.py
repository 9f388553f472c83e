"""What the rule extractor keeps as concepts: ideas, never the contracted function words
of chat ("it's", "i'm", "don't")."""

from __future__ import annotations

import anyio
import pytest
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.remember.extract_rules import concepts_of
from polyg_core.remember.write import RememberWriter
from polyg_core.storage.store import FalkorStore
from polyg_shared.intents import ExtractedConcept, Extraction


def _names(text: str, limit: int = 10) -> list[str]:
    return [name for name, _ in concepts_of(text, [], [], limit)]


@pytest.mark.parametrize(
    "text",
    [
        "It's raining again and that's why I'm inside with the violin.",
        "You're right, what's left is the violin. We'll see, I've tried, she'd agree.",
        "There's a violin here. Let's keep it. Everyone's happy and nobody's upset.",
        "Don't worry, it isn't broken and the violin can't fall; they won't mind.",
        # A typeset apostrophe is the same contraction.
        "It\u2019s the violin. I\u2019m sure it isn\u2019t broken, and we didn\u2019t drop it.",
    ],
)
def test_contractions_of_function_words_are_never_concepts(text: str) -> None:
    names = _names(text)
    assert "violin" in names
    for name in names:
        for word in name.split():
            assert "'" not in word or word.endswith("'s"), name
            assert word not in {"isn", "didn", "don", "won", "can"}, name
    assert not {n for n in names if n.split()[0] in {"it's", "i'm", "let's", "everyone's"}}


def test_a_contracted_word_that_is_not_a_function_word_still_counts() -> None:
    # "garden's" is the garden's: the idea stays; "today's" is as little an idea as "today".
    names = _names(
        "The garden's fence fell over. Today's storm did it; the garden's fence is gone."
    )
    assert any("garden's" in n for n in names)
    assert not any("today's" in n for n in names)


async def _similar_pairs(store: FalkorStore, namespace: str) -> set[frozenset[str]]:
    got = await store.query(
        namespace, "MATCH (a:S_Concept)-[:S_SIMILAR_TO]-(b:S_Concept) RETURN a.name, b.name"
    )
    return {frozenset((str(r[0]), str(r[1]))) for r in got.rows}


@pytest.mark.anyio
async def test_concepts_of_one_sentence_are_not_similar_for_sharing_it(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(60):
        await mem.remember("I fixed the old bicycle, then planted tomatoes in the garden.")
    names = await store.query(namespace, "MATCH (c:S_Concept) RETURN c.name, c.description")
    # The sentence stays the description shown; only the vector is the name's.
    assert {str(r[0]) for r in names.rows} >= {"bicycle", "tomatoes", "garden"}
    assert all(str(r[1]).startswith("I fixed") for r in names.rows)
    assert await _similar_pairs(store, namespace) == set()


@pytest.mark.anyio
async def test_concepts_of_two_texts_that_mean_alike_are_similar(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    with anyio.fail_after(60):
        await mem.remember("I fixed the old bicycle, then planted tomatoes in the garden.")
        await mem.remember("My bike needs a new chain before the race.")
    pairs = await _similar_pairs(store, namespace)
    assert frozenset(("bike", "bicycle")) in pairs
    assert all(not ({"bike", "chain", "race"} & p and {"tomatoes", "garden"} & p) for p in pairs)


@pytest.mark.anyio
async def test_a_given_description_is_still_embedded_with_the_name(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    # An extractor's own description (not a passage of the text) says what the concept
    # means, so it stays in the vector; a quoted sentence does not.
    given = "a two-wheeled bicycle of the 1860s"
    ex = Extraction(
        concepts=[
            ExtractedConcept(name="velocipede", description=given),
            ExtractedConcept(name="hall", description="The velocipede stood in the hall."),
        ]
    )
    mem = Memory(store=store, embedder=embedder, namespace=namespace)
    writer = RememberWriter(mem.entities, mem.temporal)
    with anyio.fail_after(60):
        await writer.write(
            namespace,
            "The velocipede stood in the hall.",
            ex,
            category=None,
            tags=[],
            source_id=None,
        )
        want = await embedder.embed([f"velocipede: {given}", "hall"])
    got = await store.query(
        namespace, "MATCH (c:S_Concept) RETURN c.name, c.embedding ORDER BY c.name"
    )
    stored = {str(r[0]): [float(x) for x in r[1]] for r in got.rows}
    for name, vec in zip(("velocipede", "hall"), want, strict=True):
        assert max(abs(a - b) for a, b in zip(stored[name], vec, strict=True)) < 1e-4, name
