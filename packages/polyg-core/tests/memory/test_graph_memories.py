"""A gathering question about someone reaches their memories through the graph side: the
memories they said, most like the question by their concepts and vectors, lead the graph
retriever, and those of the other speaker do not."""

from __future__ import annotations

import anyio
import numpy as np
import numpy.typing as npt
import pytest
from polyg_core.config import Settings
from polyg_core.memory import Memory
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.recall.catalogue import MemoryCatalogue, NamespaceCatalogue
from polyg_core.recall.graph_memories import (
    PERSON_ATTRIBUTE,
    asks_back,
    graph_signal,
    people_memories,
    speaks_to_listener,
)
from polyg_core.storage.store import FalkorStore
from polyg_shared.retrieval import ContextNode

pytestmark = pytest.mark.anyio

REF = "2026-03-02T10:00:00Z"

# Two people talk; what Ines did with her family is said in words far from the question
# ("sons", "daughter", "the little ones"), while Tomas asks about it in the question's own
# words and talks about his own hobbies.
TURNS = [
    ("Ines", "We spent Sunday morning flipping pancakes with my two sons."),
    ("Tomas", "What activities do you like doing with your family, Ines?"),
    ("Ines", "Took my daughter to the aquarium, she loved the jellyfish."),
    ("Tomas", "My family activities are mostly board games, honestly."),
    ("Ines", "The little ones and I planted tomatoes in the backyard yesterday."),
    ("Tomas", "I repaired the fence at the allotment this weekend."),
    ("Ines", "The quarterly budget review ran long at work today."),
    ("Tomas", "Family activities sound lovely, I should plan some too."),
    ("Ines", "My manager approved the new laptop order."),
    ("Tomas", "The train to the coast was delayed by an hour."),
]
FAMILY = {TURNS[0][1], TURNS[2][1], TURNS[4][1]}
QUESTION = "What activities has Ines done with her family?"


async def remember_turns(memory: Memory, turns: list[tuple[str, str]] = TURNS) -> None:
    for who, text in turns:
        await memory.remember(f"{who}: {text}", who=who, reference_time=REF)


def _memory(store: FalkorStore, embedder: Embedder, namespace: str) -> Memory:
    # A generous view timeout: these tests assert what runs, not how fast.
    return Memory(
        store=store,
        embedder=embedder,
        namespace=namespace,
        settings=Settings(parallel_timeout_s=120),
    )


async def conversation(store: FalkorStore, embedder: Embedder, namespace: str) -> Memory:
    """A memory that has remembered TURNS."""
    memory = _memory(store, embedder, namespace)
    with anyio.fail_after(300):
        await remember_turns(memory)
    return memory


async def remembered_catalogue(
    store: FalkorStore, embedder: Embedder, namespace: str, turns: list[tuple[str, str]]
) -> NamespaceCatalogue:
    """Remember the turns in a fresh memory and read back the namespace's catalogue."""
    await remember_turns(_memory(store, embedder, namespace), turns)
    return await MemoryCatalogue(store).get(namespace)


async def embedded(embedder: Embedder, text: str) -> npt.NDArray[np.float32]:
    return np.asarray((await embedder.embed([text]))[0], dtype=np.float32)


async def people_nodes(
    store: FalkorStore,
    embedder: Embedder,
    namespace: str,
    turns: list[tuple[str, str]],
    people: list[str],
    query: str,
) -> list[ContextNode]:
    """Remember the turns, then the people's memories most like the query."""
    with anyio.fail_after(300):
        catalogue = await remembered_catalogue(store, embedder, namespace, turns)
        vector = await embedded(embedder, query)
        return await people_memories(store, namespace, catalogue, people, vector)


async def test_a_gathering_question_reaches_the_persons_own_memories(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    nodes = await people_nodes(store, embedder, namespace, TURNS, ["Ines"], "activities family")
    texts = [n.text for n in nodes]
    # Only what Ines said, each marked as a named person's memory, best first in [0, 1].
    assert texts and all(t.startswith("Ines:") for t in texts)
    assert all(n.attributes.get(PERSON_ATTRIBUTE) for n in nodes)
    assert nodes[0].score == 1.0 and all(0.0 < n.score <= 1.0 for n in nodes)
    # Her family memories come before her work memories.
    family_ranks = [i for i, t in enumerate(texts) if t.split(": ", 1)[1] in FAMILY]
    work_ranks = [i for i, t in enumerate(texts) if "work" in t or "manager" in t]
    assert len(family_ranks) == 3 and max(family_ranks) < min(work_ranks)


async def test_a_name_nobody_has_reaches_no_memories(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    nobody = await people_nodes(store, embedder, namespace, TURNS, ["Ximena"], "family")
    assert nobody == []


# Two people; each likes many things, and one thing (kayaking) both like, said in each
# one's own words.
BOTH_TURNS = [
    ("Ines", "Baking sourdough bread with my sister is a joy."),
    ("Ines", "I go kayaking on the river at dawn."),
    ("Ines", "Painting watercolour birds calms me in the evening."),
    ("Ines", "Knitting scarves for the winter market keeps my hands busy."),
    ("Tomas", "Restoring old radios in the garage is so satisfying."),
    ("Tomas", "I collect vintage stamps from Japan."),
    ("Tomas", "Kayaking with friends became my new passion."),
    ("Tomas", "Brewing cider from our apple trees is great fun."),
]


async def test_a_question_naming_two_people_reaches_what_joins_them(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    nodes = await people_nodes(
        store,
        embedder,
        namespace,
        BOTH_TURNS,
        ["Ines", "Tomas"],
        "What do they both enjoy making at home?",
    )
    # Each speaker has half the memories: each one's own still count, both people's.
    texts = [n.text for n in nodes]
    assert any(t.startswith("Ines:") for t in texts) and any(t.startswith("Tomas:") for t in texts)
    # What both said about the thing they share leads.
    assert {t.split(": ", 1)[1] for t in texts[:2]} == {BOTH_TURNS[1][1], BOTH_TURNS[6][1]}, texts


async def test_the_persons_memories_lead_the_graph_retriever_in_recall(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    memory = await conversation(store, embedder, namespace)
    with anyio.fail_after(300):
        result = await memory.recall(QUESTION, reference_time=REF)
        catalogue = await MemoryCatalogue(store).get(namespace)
    assert result.intent["multi_hop"] is True  # PPR and the graph side run by themselves
    assert [v.status for v in result.views if v.view == "ppr"] == ["ok"]
    graph = {m.content: m.retrievers.get("graph", 0.0) for m in result.memories}
    family = [f"Ines: {t}" for t in FAMILY]
    # The graph retriever scores Ines's family memories above everything Tomas said.
    tomas_best = max((s for c, s in graph.items() if c.startswith("Tomas:")), default=0.0)
    assert all(graph.get(c, 0.0) > tomas_best for c in family)
    # ... and all three are among the first five memories recall returns.
    top5 = [m.content for m in result.memories[:5]]
    assert set(family) <= set(top5), top5
    # The signal itself: people lead, and their weight is the people weight.
    signal, weight = graph_signal(catalogue, {}, [])
    assert signal == {} and weight > 0


# Ines talks about music on many days in the question's own kind of words; the one memory
# that answers "which bands" names the band and says nothing of music.
NAMED_TURNS = [
    ("Ines", "Music gets me through every long train ride."),
    ("Ines", "I listen to music while I cook dinner, Tomas."),
    ("Ines", "Concerts make me so happy, the crowd singing along."),
    ("Ines", "It was Harbor Lights at the old theatre, what a night!"),
    ("Ines", "My playlist for running is mostly upbeat music."),
    ("Ines", "The budget review ran long at work today."),
    ("Tomas", "Which band did you see on Friday?"),
    ("Tomas", "I fixed the fence at the allotment."),
    ("Tomas", "Thanks, Ines! The soup recipe worked."),
    ("Tomas", "My train was delayed again."),
]


async def test_a_question_for_named_things_reaches_the_memory_that_names_one(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    with anyio.fail_after(300):
        catalogue = await remembered_catalogue(store, embedder, namespace, NAMED_TURNS)
        question = "Which bands has Ines seen?"
        vector = await embedded(embedder, "Which bands has seen?")
        asked = await people_memories(store, namespace, catalogue, ["Ines"], vector, question)
        plain = await people_memories(store, namespace, catalogue, ["Ines"], vector)
    named = f"Ines: {NAMED_TURNS[3][1]}"
    # Asked for bands, the memory naming one leads Ines's memories; without the question's
    # shape it ranks below her memories about music in general.
    assert asked[0].text == named, [n.text for n in asked]
    assert [n.text for n in plain].index(named) > 0


def test_a_memory_about_the_listener_is_told_from_one_about_its_author() -> None:
    assert speaks_to_listener("Rafa: You'll be a great coach, your team is lucky to have you!")
    assert speaks_to_listener("Wow, Rafa, you did it! Your garden looks amazing. I'm proud.")
    assert not speaks_to_listener("Rafa: I took my nephews to the zoo, you would have loved it.")
    assert not speaks_to_listener("We baked bread with our kids on Sunday.")
    # A caption and the speaker's name say nothing of who the memory is about.
    assert not speaks_to_listener("You: I planted roses. [shares a photo of you and your dog]")
    assert not speaks_to_listener("Thanks! That sounds fun.")


# Ines talks about her own weekends, and about Tomas's in the question's own words ("your
# family", "activities"): what she says to him is about him, not what she did.
ADDRESSED_TURNS = [
    ("Ines", "Your family activities sound amazing, Tomas, you're such a fun dad!"),
    ("Ines", "You and your kids always find new activities, your family is lucky."),
    ("Ines", "I took my nephews sledding on the hill last weekend."),
    ("Ines", "We baked apple pies with my mother on Sunday."),
    ("Ines", "The quarterly budget review ran long at work today."),
    ("Tomas", "We went fishing at the lake with my daughters."),
    ("Tomas", "What did you do with your family this weekend, Ines?"),
    ("Tomas", "My train was delayed again."),
    ("Tomas", "The new printer at the office jams every morning."),
    ("Tomas", "I repaired the bike's brakes myself."),
]


async def test_a_persons_words_about_their_listener_rank_below_what_they_did(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    nodes = await people_nodes(store, embedder, namespace, ADDRESSED_TURNS, ["Ines"], QUESTION)
    texts = [n.text.split(": ", 1)[1] for n in nodes]
    own = [texts.index(t) for _, t in ADDRESSED_TURNS[2:4]]
    to_tomas = [texts.index(t) for _, t in ADDRESSED_TURNS[:2]]
    # What she did with her family leads, though her words to Tomas share the question's.
    assert max(own) < min(to_tomas), texts


def test_a_memory_that_closes_on_a_question_asks_back() -> None:
    assert asks_back("Lovely colours! Which paints did the class use?")
    assert asks_back("I repotted the fern. What are you growing? [shares a photo of a fern]")
    assert not asks_back("Did it rain? We planted the beans anyway.")
    assert not asks_back("We planted beans. [shares a photo: what is this?]")


# Ines plants things on several days in her own words; between them she asks about
# planting in the question's words, handing the turn to whoever she talks to.
ASKING_TURNS = [
    ("Ines", "Planting season is finally here and I love it! Which seeds did the others plant?"),
    ("Ines", "Planting with the whole street is the best. Did anyone else plant near the pond?"),
    ("Ines", "We put tomato seedlings into the raised beds yesterday."),
    ("Ines", "I dug three rose bushes in by the gate this morning."),
    ("Ines", "The quarterly budget review ran long at work today."),
    ("Tomas", "We went fishing at the lake with my daughters."),
    ("Tomas", "My train was delayed again."),
    ("Tomas", "The new printer at the office jams every morning."),
    ("Tomas", "I repaired the bike's brakes myself."),
    ("Tomas", "Our team finally shipped the billing release."),
]


async def test_a_persons_questions_rank_below_what_they_did(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    nodes = await people_nodes(
        store, embedder, namespace, ASKING_TURNS, ["Ines"], "What has Ines planted?"
    )
    texts = [n.text.split(": ", 1)[1] for n in nodes]
    deeds = [texts.index(t) for _, t in ASKING_TURNS[2:4]]
    asking = [texts.index(t) for _, t in ASKING_TURNS[:2]]
    # What she planted leads, though her questions share the asked word.
    assert max(deeds) < min(asking), texts


async def test_the_graph_side_lifts_what_text_retrieval_alone_ranks_low(
    store: FalkorStore, embedder: Embedder, namespace: str
) -> None:
    memory = await conversation(store, embedder, namespace)
    with anyio.fail_after(300):
        full = await memory.recall(QUESTION, reference_time=REF)
        text_only = await memory.recall(
            QUESTION, reference_time=REF, retrievers=["lexical", "dense"]
        )
    family = {f"Ines: {t}" for t in FAMILY}

    def ranks(result_memories: list[str]) -> list[int]:
        return sorted(i for i, c in enumerate(result_memories) if c in family)

    full_ranks = ranks([m.content for m in full.memories])
    text_ranks = ranks([m.content for m in text_only.memories])
    # Text retrieval alone leaves some of Ines's family memories below Tomas's words, which
    # share the question's; with the graph side all three lead.
    assert full_ranks == [0, 1, 2], full_ranks
    assert not text_ranks or text_ranks[0] > 0, text_ranks
