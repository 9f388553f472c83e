"""Direct-read tools: one entity, facts, a timeline, causal chains, explanations."""

from __future__ import annotations

from typing import Any

from polyg_core.errors import NodeNotFound
from polyg_shared.causal import CausalChain
from polyg_shared.edges import CausalPath
from polyg_shared.nodes import CausalNode
from polyg_shared.timeutil import utc_now
from polyg_shared.tools import (
    CausalChainOutput,
    EntityDetail,
    ExplainWhyInput,
    ExplainWhyOutput,
    Explanation,
    ExplanationStep,
    FactHistoryInput,
    FactHistoryOutput,
    FactsOutput,
    GetCausalChainInput,
    GetEntityInput,
    QueryFactsInput,
    QueryTimelineInput,
    TimelineOutput,
)

from polyg_server.context import ServerContext
from polyg_server.paging import Page
from polyg_server.registry import READ_ONLY, ToolSpec
from polyg_server.tools.memory import memory_and_ns


async def get_entity(ctx: ServerContext, inp: GetEntityInput) -> EntityDetail:
    from polyg_core.graphs.entity import to_entity  # the graphs: on first use, not at listing

    mem, ns = memory_and_ns(ctx, inp.graph)
    page = Page.open(inp, limit=inp.limit)
    if not inp.include_relationships:
        found = await mem.entities.resolve(ns, inp.entity)
        relations = []
    else:
        found, relations = await mem.entities.resolve_with_relationships(
            ns, inp.entity, "both", limit=page.fetch
        )
    entity = to_entity(found.properties)
    # A name matched by meaning answers, but says so (requested, matched, score, others).
    match = found.as_match(inp.entity)
    return page.fill(
        page.window(relations),
        lambda part: EntityDetail(entity=entity, relationships=part, match=match),
    )


async def query_timeline(ctx: ServerContext, inp: QueryTimelineInput) -> TimelineOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    page = Page.open(inp, limit=inp.limit)
    events = await mem.temporal.timeline(
        ns, start=inp.start, end=inp.end, entity=inp.entity, limit=page.fetch, order=inp.order
    )
    return page.fill(page.window(events), lambda part: TimelineOutput(events=part, count=len(part)))


async def query_facts(ctx: ServerContext, inp: QueryFactsInput) -> FactsOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    page = Page.open(inp, limit=inp.limit)
    facts = await mem.temporal.facts(
        ns,
        subject=inp.subject,
        predicate=inp.predicate,
        entity=inp.entity,
        as_of=inp.as_of,
        history=inp.history,
        limit=page.fetch,
        start=inp.start,
        end=inp.end,
    )
    return page.fill(page.window(facts), lambda part: FactsOutput(facts=part, count=len(part)))


async def fact_history(ctx: ServerContext, inp: FactHistoryInput) -> FactHistoryOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    page = Page.open(inp, limit=inp.limit)
    versions = await mem.temporal.fact_history(
        ns, inp.fact, subject=inp.subject, predicate=inp.predicate, limit=page.fetch
    )
    now = utc_now()
    current = next(
        (f for f in versions if f.valid_from <= now and (f.valid_to is None or f.valid_to > now)),
        None,
    )
    return page.fill(
        page.window(versions),
        lambda part: FactHistoryOutput(
            subject=versions[0].subject,
            predicate=versions[0].predicate,
            versions=part,
            current=current,
        ),
    )


CHAIN_PATHS = 200
"""Paths get_causal_chain reads per direction, paged from there."""


async def get_causal_chain(ctx: ServerContext, inp: GetCausalChainInput) -> CausalChainOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    page = Page.open(inp, limit=inp.max_paths, limit_field="max_paths")
    root = await mem.causal.get(ns, inp.node)
    directions = ("upstream", "downstream") if inp.direction == "both" else (inp.direction,)
    # The same paths for every page: which paths the walk keeps depends on how many it
    # may keep, so that number does not follow the page.
    chains = [
        await mem.causal.chain_from(ns, root, inp.depth, d, max_paths=CHAIN_PATHS)
        for d in directions
    ]
    # One list of paths, upstream first, paged as any other; each page regrouped by chain.
    paths = [(chain.direction, path) for chain in chains for path in chain.paths]

    def answer(part: list[tuple[str, CausalPath]]) -> CausalChainOutput:
        grouped = [
            chain.model_copy(
                update={
                    "paths": [CausalPath.model_validate(p) for d, p in part if d == chain.direction]
                }
            )
            for chain in chains
        ]
        return CausalChainOutput(root=root, chains=grouped)

    return page.fill(page.window(paths), answer)


def _maximal(paths: list[CausalPath]) -> list[CausalPath]:
    """Paths that are not the tail of a longer path (they start at a root cause)."""
    tails = {tuple(p.node_ids[1:]) for p in paths if len(p.node_ids) > 2}
    return [p for p in paths if tuple(p.node_ids) not in tails]


def _explanation(path: CausalPath) -> Explanation:
    steps = [
        ExplanationStep(cause=path.nodes[i], effect=path.nodes[i + 1], confidence=c)
        for i, c in enumerate(path.confidences)
    ]
    return Explanation(steps=steps, confidence=path.confidence, node_ids=list(path.node_ids))


async def explain_why(ctx: ServerContext, inp: ExplainWhyInput) -> ExplainWhyOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    page = Page.open(inp, limit=inp.max_paths, limit_field="max_paths")
    try:
        effects: list[CausalNode] = [await mem.causal.get(ns, inp.effect)]
    except NodeNotFound as not_causal:
        try:
            entity = await mem.entities.get(ns, inp.effect)
        except NodeNotFound:
            raise not_causal from None
        effects = await mem.causal.nodes_for_entities(ns, [entity.uuid])
        if not effects:
            raise NodeNotFound("causal", inp.effect, not_causal.candidates) from None
    chains: list[CausalChain] = [
        await mem.causal.chain_from(ns, node, inp.depth, "upstream", max_paths=50)
        for node in effects
    ]
    paths = _maximal([p for chain in chains for p in chain.paths])
    paths.sort(key=lambda p: (-len(p.node_ids), -p.confidence, tuple(p.node_ids)))
    explanations = [_explanation(p) for p in paths]
    roots = list(dict.fromkeys(e.steps[0].cause for e in explanations if e.steps))
    if explanations:
        best = explanations[0]
        chain_text = " → ".join([best.steps[0].cause, *(s.effect for s in best.steps)])
        answer = (
            f"{best.steps[-1].effect} was most likely caused by {best.steps[0].cause}: "
            f"{chain_text} (path confidence {best.confidence:.2f})."
        )
        if len(roots) > 1:
            answer += " Other root causes: " + ", ".join(roots[1:]) + "."
    else:
        names = ", ".join(repr(e.description) for e in effects)
        answer = (
            f"No recorded causes lead to {names}. Record one with add_causal_link, or ask "
            "recall for a broader answer."
        )
    return page.fill(
        page.window(explanations),
        lambda part: ExplainWhyOutput(
            answer=answer, effects=effects, root_causes=roots, explanations=part
        ),
    )


TOOLS: tuple[ToolSpec[Any, Any], ...] = (
    ToolSpec(
        name="get_entity",
        description=(
            "Everything stored about one person, system or thing: its properties and its "
            "relationships. Name it by name or uuid; an unknown name answers with the "
            "closest names."
        ),
        input_model=GetEntityInput,
        output_model=EntityDetail,
        handler=get_entity,
        annotations=READ_ONLY,
        profile="memory",
    ),
    ToolSpec(
        name="query_timeline",
        description=(
            "Events in time order, optionally between start and end and only those "
            "involving one entity. Use it for what happened when, and in what order."
        ),
        input_model=QueryTimelineInput,
        output_model=TimelineOutput,
        handler=query_timeline,
        annotations=READ_ONLY,
        profile="memory",
    ),
    ToolSpec(
        name="query_facts",
        description=(
            "Facts (subject predicate object) valid now, at as_of, at some time in [start, "
            "end], or every version with history; filter by subject, predicate or entity. "
            "Use it for current values: a role, an owner, a setting."
        ),
        input_model=QueryFactsInput,
        output_model=FactsOutput,
        handler=query_facts,
        annotations=READ_ONLY,
        profile="memory",
    ),
    ToolSpec(
        name="fact_history",
        description=(
            "The history of one statement: give a fact uuid, or subject and predicate. "
            "Returns every version oldest first with who stated it (source), when it was "
            "valid, when it was recorded, when it was invalidated and by which fact, and "
            "the version valid now."
        ),
        input_model=FactHistoryInput,
        output_model=FactHistoryOutput,
        handler=fact_history,
        annotations=READ_ONLY,
        profile="graph",
    ),
    ToolSpec(
        name="get_causal_chain",
        description=(
            "Walk the causal graph from one causal node (uuid or description, matched "
            "fuzzily): upstream gives its causes, downstream its effects, both gives both. "
            "Returns every path with per-hop confidences and the path confidence (their "
            "product), best first."
        ),
        input_model=GetCausalChainInput,
        output_model=CausalChainOutput,
        handler=get_causal_chain,
        annotations=READ_ONLY,
        profile="graph",
    ),
    ToolSpec(
        name="explain_why",
        description=(
            "Why did something happen? Give the outcome (its description, or an entity to "
            "explain what affected it). Returns an answer sentence, the root causes and "
            "each recorded chain from cause to effect with its confidence, most likely "
            "first."
        ),
        input_model=ExplainWhyInput,
        output_model=ExplainWhyOutput,
        handler=explain_why,
        annotations=READ_ONLY,
        profile="memory",
    ),
)
