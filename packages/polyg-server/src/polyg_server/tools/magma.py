"""Retrieval-step tools (profile "retrieval"): the recall pipeline one step at a time, for
agents that want to drive retrieval themselves. Each step is the recall pipeline's
own (`polyg_core.recall.pipeline`), the one `recall` runs.

semantic_search → entity_lookup / temporal_expand / causal_expand → subgraph_merge →
linearize_context. semantic_search puts the seed entity ids first, with the tools
that take them, because agents otherwise pass concept ids to the expansion tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from polyg_core.errors import InvalidInput
from polyg_core.resolve import ENTITY_NAMES
from polyg_core.storage.schema import CAUSAL, ENTITY, EVENT
from polyg_shared.intents import Intent, Timeframe
from polyg_shared.retrieval import LinearizedContext, MergedSubgraph, ViewResult
from polyg_shared.timeutil import RANGE_TEXT
from polyg_shared.tools import (
    CausalExpandInput,
    EntityLookupInput,
    LinearizeContextInput,
    SemanticHit,
    SemanticSearchInput,
    SemanticSearchOutput,
    SubgraphMergeInput,
    TemporalExpandInput,
    ViewOutput,
)
from pydantic import ValidationError

from polyg_server.context import ServerContext
from polyg_server.paging import Page
from polyg_server.registry import READ_ONLY, ToolSpec
from polyg_server.tools.memory import memory_and_ns

if TYPE_CHECKING:
    from polyg_core.memory import Memory

PROFILE = "retrieval"

_MERGE_HINT = (
    "Pass this `view` (with the other views, including semantic_search's) to subgraph_merge "
    "as `views`."
)


async def _entity_ids(mem: Memory, ns: str, refs: list[str]) -> dict[str, float]:
    ids: dict[str, float] = {}
    for ref in refs:
        found = await mem.resolver.resolve(ns, ENTITY_NAMES, ref)
        ids[found.uuid] = 1.0
    return ids


async def semantic_search(ctx: ServerContext, inp: SemanticSearchInput) -> SemanticSearchOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    # k decides which hits there are (k per node kind): it stays the same on every page.
    page = Page.open(inp, limit=inp.k, limit_field=None)
    min_score = (
        inp.min_score if inp.min_score is not None else ctx.settings.magma_min_semantic_score
    )
    vector = await mem.pipeline.embed_for(ns, inp.query)
    seeds = await mem.pipeline.seeds(
        ns, Intent(semantic_query=inp.query), vector, top_k=inp.k, min_score=min_score
    )
    linked: dict[str, list[str]] = {}
    for edge in seeds.semantic.edges:
        linked.setdefault(edge.source, []).append(edge.target)
    hits = sorted(
        (
            SemanticHit(
                uuid=n.uuid,
                label=n.label,
                graph=n.graph,
                text=n.text,
                score=round(n.score, 4),
                linked_entity_ids=linked.get(n.uuid, []),
            )
            for n in seeds.semantic.nodes
        ),
        key=lambda h: (-h.score, h.uuid),
    )[: inp.k]
    # k is the number of hits answered: each node kind is searched for k, and the best k
    # of them all are kept, in the hits and in the view passed on to subgraph_merge.
    kept = {h.uuid for h in hits}
    view = seeds.semantic.model_copy(
        update={
            "nodes": [n for n in seeds.semantic.nodes if n.uuid in kept],
            "edges": [e for e in seeds.semantic.edges if e.source in kept],
        }
    )
    entity_ids = [u for u, _ in sorted(seeds.entities.items(), key=lambda kv: -kv[1])]
    if entity_ids:
        instruction = (
            "Use seed_entity_ids (not the hit uuids) as `entities` for entity_lookup and "
            "temporal_expand and as `nodes` for causal_expand; then pass every tool's `view`, "
            "with this `view`, to subgraph_merge."
        )
    elif seeds.causal or seeds.events:
        instruction = (
            "No entity matched. Pass seed_causal_ids as `nodes` to causal_expand; or "
            "pass this `view` to subgraph_merge."
        )
    else:
        instruction = (
            "Nothing matched: try other words, a lower min_score, or recall for a full answer."
        )
    return page.fill(
        page.window(hits),
        lambda part: SemanticSearchOutput(
            seed_entity_ids=entity_ids,
            seed_entity_count=len(entity_ids),
            instruction=instruction,
            seed_event_ids=list(seeds.events),
            seed_causal_ids=list(seeds.causal),
            hits=part,
            view=view,
        ),
    )


def _view_output(seeds: list[str], view: ViewResult) -> ViewOutput:
    if view.status == "skipped":
        hint = f"Nothing to expand ({view.error}). {_MERGE_HINT}"
    else:
        hint = _MERGE_HINT
    return ViewOutput(next_step=hint, seeds=seeds, view=view)


async def entity_lookup(ctx: ServerContext, inp: EntityLookupInput) -> ViewOutput:
    from polyg_core.recall.views import Seeds  # numpy and the PPR view: on first use

    mem, ns = memory_and_ns(ctx, inp.graph)
    ids = await _entity_ids(mem, ns, inp.entities)
    view = await mem.pipeline.expand("entity", ns, Intent(), Seeds(entities=ids), inp.depth)
    return _view_output(list(ids), view)


async def temporal_expand(ctx: ServerContext, inp: TemporalExpandInput) -> ViewOutput:
    from polyg_core.recall.views import Seeds  # numpy and the PPR view: on first use

    mem, ns = memory_and_ns(ctx, inp.graph)
    if not inp.entities and inp.start is None and inp.end is None:
        raise InvalidInput(
            "give entities (seed_entity_ids from semantic_search, or names) or a time window "
            "(start and/or end)"
        )
    ids = await _entity_ids(mem, ns, inp.entities)
    timeframe = None
    if inp.start is not None or inp.end is not None:
        try:
            timeframe = Timeframe.model_validate({"start": inp.start, "end": inp.end})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise InvalidInput(
                f"the time window is not valid ({problems}); give start/end as ISO 8601 "
                f"timestamps {RANGE_TEXT}, e.g. 2026-01-07T14:00:00Z"
            ) from exc
    view = await mem.pipeline.expand(
        "temporal", ns, Intent(timeframe=timeframe), Seeds(entities=ids), inp.depth
    )
    return _view_output(list(ids), view)


async def causal_expand(ctx: ServerContext, inp: CausalExpandInput) -> ViewOutput:
    from polyg_core.recall.views import Seeds  # numpy and the PPR view: on first use

    mem, ns = memory_and_ns(ctx, inp.graph)
    seeds = Seeds()
    for ref in inp.nodes:
        label = await mem.crosslinks.label_of(ns, ref)
        if label == ENTITY:
            seeds.entities[ref] = 1.0
        elif label == CAUSAL:
            seeds.causal[ref] = 1.0
        elif label == EVENT:
            seeds.events[ref] = 1.0
        elif label is not None:
            raise InvalidInput(
                f"{ref!r} is a {label} node; causal_expand starts from entities, events or "
                "causal nodes (use seed_entity_ids from semantic_search)"
            )
        else:
            entity = await mem.resolver.find(ns, ENTITY_NAMES, ref, fuzzy=False)
            if entity is not None:
                seeds.entities[entity.uuid] = 1.0
            else:
                seeds.causal[(await mem.causal.get(ns, ref)).uuid] = 1.0
    started = [*seeds.entities, *seeds.events, *seeds.causal]
    view = await mem.pipeline.expand(
        "causal", ns, Intent(causal_direction=inp.direction), seeds, inp.depth
    )
    return _view_output(started, view)


async def subgraph_merge(ctx: ServerContext, inp: SubgraphMergeInput) -> MergedSubgraph:
    mem = ctx.require_memory()
    views = [
        ViewResult(view=v.view, status=v.status, nodes=v.nodes, edges=v.edges) for v in inp.views
    ]
    return mem.pipeline.merge(views, boost=inp.boost)


async def linearize_context(ctx: ServerContext, inp: LinearizeContextInput) -> LinearizedContext:
    mem = ctx.require_memory()
    sub = MergedSubgraph(
        nodes=inp.subgraph.nodes, edges=inp.subgraph.edges, views=inp.subgraph.views
    )
    return mem.pipeline.linearize(sub, inp.intent_type.value, max_tokens=inp.max_tokens)


TOOLS: tuple[ToolSpec[Any, Any], ...] = (
    ToolSpec(
        name="semantic_search",
        description=(
            "First retrieval step: find nodes similar in meaning to a query (concepts, "
            "memories, entities, causal nodes) through the vector index, and events and facts "
            "that share its words (score: the share of the query's words they hold). "
            "Returns seed_entity_ids FIRST (entities matched directly or represented by "
            "matching concepts): pass those to entity_lookup, temporal_expand and "
            "causal_expand. Then the hits with scores, and `view` for subgraph_merge."
        ),
        input_model=SemanticSearchInput,
        output_model=SemanticSearchOutput,
        handler=semantic_search,
        annotations=READ_ONLY,
        profile=PROFILE,
    ),
    # Seed 000's name for the same tool, among its direct graph tools: in the memory
    # profile, so a POLYG_TOOLS=memory server offers the specification's whole surface.
    ToolSpec(
        name="search_semantic",
        description=(
            "Find nodes similar in meaning to a query through the vector index; the same "
            "tool as semantic_search under another name (`limit` for `k`)."
        ),
        input_model=SemanticSearchInput,
        output_model=SemanticSearchOutput,
        handler=semantic_search,
        annotations=READ_ONLY,
        profile=PROFILE,
    ),
    ToolSpec(
        name="entity_lookup",
        description=(
            "Retrieval step: expand the entity graph breadth-first from seed entities (uuids from "
            "semantic_search's seed_entity_ids, or names) to `depth` hops. Use for WHO/WHAT "
            "questions. Returns `view` (entities scored by distance, relations) for "
            "subgraph_merge."
        ),
        input_model=EntityLookupInput,
        output_model=ViewOutput,
        handler=entity_lookup,
        annotations=READ_ONLY,
        profile=PROFILE,
    ),
    ToolSpec(
        name="temporal_expand",
        description=(
            "Retrieval step: events and currently valid facts involving seed entities (uuids or "
            "names), optionally within start..end, followed along each entity's timeline to "
            "`depth`. Use for WHEN questions. Returns `view` for subgraph_merge."
        ),
        input_model=TemporalExpandInput,
        output_model=ViewOutput,
        handler=temporal_expand,
        annotations=READ_ONLY,
        profile=PROFILE,
    ),
    ToolSpec(
        name="causal_expand",
        description=(
            "Retrieval step: causal chains from seed entities (the causal nodes that affect them) "
            "or from causal nodes (uuid or description), upstream (causes), downstream "
            "(effects) or both, to `depth`. Use for WHY questions. Returns `view` with "
            "C_CAUSES edges and their confidences, for subgraph_merge."
        ),
        input_model=CausalExpandInput,
        output_model=ViewOutput,
        handler=causal_expand,
        annotations=READ_ONLY,
        profile=PROFILE,
    ),
    ToolSpec(
        name="subgraph_merge",
        description=(
            "Retrieval step: merge the `view` objects of semantic_search and the expansion tools "
            "into one subgraph: one node per uuid, score = mean × boost^(views − 1), so nodes "
            "found by several views rank higher. Pass the result to linearize_context."
        ),
        input_model=SubgraphMergeInput,
        output_model=MergedSubgraph,
        handler=subgraph_merge,
        annotations=READ_ONLY,
        profile=PROFILE,
    ),
    ToolSpec(
        name="linearize_context",
        description=(
            "Retrieval step: write a merged subgraph out as text within max_tokens, ordered for "
            "the question type: WHY causes before effects, WHEN by time, WHO/WHAT by "
            "relevance, EXPLORE by how many views found a node. Returns the text to reason "
            "over and which nodes it includes."
        ),
        input_model=LinearizeContextInput,
        output_model=LinearizedContext,
        handler=linearize_context,
        annotations=READ_ONLY,
        profile=PROFILE,
    ),
)
