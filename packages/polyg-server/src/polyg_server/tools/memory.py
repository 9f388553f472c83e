"""Memory tools (profile "memory"): recall, remember, the write tools, delete and admin.

Each handler resolves names the way the core does (writes: uuid → exact →
normalised, else a new node, with near-duplicates reported; reads add embedding
similarity) and raises polyg-core errors, which the registry turns into tool
errors that say what to do.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any, Final, Literal

from polyg_core.config import Settings
from polyg_core.errors import AmbiguousName, Candidate, InvalidInput, NodeNotFound
from polyg_core.recall.filters import prefixed_tags
from polyg_core.resolve import CAUSAL_NAMES, CONCEPT_NAMES, ENTITY_NAMES, similar_nodes
from polyg_core.storage.schema import EVENT
from polyg_shared.causal import CausalLinkResult
from polyg_shared.edges import EntityRelation
from polyg_shared.jobs import JobRef
from polyg_shared.nodes import Fact
from polyg_shared.pages import DEFAULT_PAGE_TOKENS
from polyg_shared.retrieval import Reasoning, RecallResult, RememberResult
from polyg_shared.temporal import EventWrite, FactWrite
from polyg_shared.tools import (
    AddCausalLinkInput,
    AddConceptInput,
    AddEntityInput,
    AddEventInput,
    AddFactInput,
    ClearGraphInput,
    ClearGraphOutput,
    ConceptWriteOutput,
    DeleteCausalLinkInput,
    DeleteCausalLinkOutput,
    DeleteNodeInput,
    DeleteNodeOutput,
    DeleteRelationInput,
    DeleteRelationOutput,
    EntityOutput,
    EntityWriteOutput,
    ExportGraphInput,
    ExportGraphOutput,
    ImportGraphInput,
    ImportGraphOutput,
    InvalidateFactInput,
    InvalidateFactOutput,
    LinkEntitiesInput,
    MergeEntitiesInput,
    MergeEntitiesOutput,
    RecallInput,
    RememberInput,
    UpdateEntityInput,
    UpdateEventInput,
)
from pydantic import BaseModel, ConfigDict, Field, RootModel

from polyg_server.access import access_log
from polyg_server.context import ServerContext
from polyg_server.paging import within_budget
from polyg_server.registry import DESTRUCTIVE, READ_ONLY, WRITE, WRITE_IDEMPOTENT, ToolSpec
from polyg_server.tools.jobs import job_queue

if TYPE_CHECKING:
    from polyg_core.memory import Memory


REMEMBER_WAIT_MAX_CHARS: Final[int] = Settings.model_fields["remember_wait_max_chars"].default
"""remember without `wait` answers when written for content up to this many characters
and queues longer content (the default of POLYG_REMEMBER_WAIT_MAX_CHARS)."""


def memory_and_ns(ctx: ServerContext, graph: str | None) -> tuple[Memory, str]:
    """The memory facade and the namespace a call works on."""
    return ctx.require_memory(), ctx.namespace(graph)


def require_confirm(ctx: ServerContext, confirm: bool, what: str) -> None:
    """Refuse a destructive call unless `confirm: true` or POLYG_ALLOW_DESTRUCTIVE is set.

    Raises:
        InvalidInput: neither is set.
    """
    if not (confirm or ctx.settings.allow_destructive):
        raise InvalidInput(
            f"{what} is irreversible: call again with confirm: true (or start the server "
            "with POLYG_ALLOW_DESTRUCTIVE=true)"
        )


# -- recall / remember -------------------------------------------------------------------------


RECALL_DETAILS = (
    "edges",
    "nodes",
    "extended",
    "core",
    "ranking",
    "views",
    "timings_ms",
    "context",
    "intent",
    "packed",
    "follow_ups",
    "confidence_factors",
)
"""What recall's answer leaves out first when it would exceed max_tokens: how the answer
was found, the list of what packing left out (its counts stay), follow-up questions and
the confidence's factors. Then the least
relevant memories go, then sources."""


async def recall(ctx: ServerContext, inp: RecallInput) -> RecallResult:
    mem, ns = memory_and_ns(ctx, inp.graph)
    budget = inp.max_tokens or DEFAULT_PAGE_TOKENS
    result = await mem.recall(
        inp.question,
        graph=ns,
        reference_time=inp.reference_time,
        max_tokens=budget,
        mode=inp.mode,
        decay=inp.decay,
        ppr=inp.ppr,
        category=inp.category.value if inp.category else None,
        tags=list(inp.tags) or None,
        project=inp.project,
        who=inp.who,
        retrievers=inp.retrievers,
        memory_limit=inp.memory_limit,
    )
    if not inp.include_reasoning:
        result.reasoning = Reasoning()
    # Recall writes nothing; the server records the memories it answered with afterwards.
    access_log(ctx).note(ns, (m.uuid for m in result.memories))
    trim = ("memories", "source_nodes", "sources")
    bounded, omitted = within_budget(result, budget, RECALL_DETAILS, trim)
    return bounded.model_copy(update={"truncated": bool(omitted), "omitted": omitted})


class RememberArgs(RememberInput):
    """Arguments of remember: RememberInput and whether to wait for the writes."""

    wait: bool | None = Field(
        default=None,
        description=(
            "true: answer when everything is written (the RememberResult). false: queue "
            "the text as a background job and answer at once with its job_id; follow it "
            "with get_job until status is done (or failed). Default: true for text up to "
            f"{REMEMBER_WAIT_MAX_CHARS:,} characters (POLYG_REMEMBER_WAIT_MAX_CHARS), "
            "false above; always true when the client lends its model (MCP sampling), "
            "which only the call itself can ask."
        ),
    )


class RememberQueued(JobRef):
    """remember's answer when the text was queued: the job to follow with get_job."""

    queued: Literal[True] = Field(
        default=True, description="Always true: the text is queued, nothing is written yet."
    )
    next_step: str = Field(description="What to call to see the result.")


class RememberOutput(RootModel[RememberResult | RememberQueued]):
    """What remember wrote (wait) or the job that will write it (queued: true)."""

    model_config = ConfigDict(json_schema_extra={"type": "object"})


def _next_step(ctx: ServerContext, ref: JobRef) -> str:
    step = (
        f"call get_job with job_id {ref.job_id!r} until status is done (the result then "
        "lists what was written) or failed (the error says why)"
    )
    if ctx.jobs.workers == 0:
        step += (
            "; this server runs no job worker (POLYG_JOB_WORKERS=0), so the job waits for a "
            "`polyg worker` process"
        )
    return step


async def remember(ctx: ServerContext, inp: RememberArgs) -> RememberOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    category = inp.category.value if inp.category else None
    wait = inp.wait
    if wait is None:
        # The client's model can be asked only while this call runs; a queued job could
        # not reach it and would extract with rules.
        wait = ctx.client_model or len(inp.content) <= ctx.settings.remember_wait_max_chars
    if not wait:
        tags = prefixed_tags(inp.tags, who=inp.who, project=inp.project, why=inp.why)
        ref = await (await job_queue(ctx)).enqueue_remember(
            inp.content,
            graph=ns,
            reference_time=inp.reference_time,
            category=category,
            tags=tags,
            source_id=inp.source_id,
        )
        return RememberOutput(RememberQueued(**ref.model_dump(), next_step=_next_step(ctx, ref)))
    result = await mem.remember(
        inp.content,
        graph=ns,
        reference_time=inp.reference_time,
        category=category,
        tags=list(inp.tags),
        source_id=inp.source_id,
        who=inp.who,
        project=inp.project,
        why=inp.why,
    )
    return RememberOutput(result)


# -- writes ------------------------------------------------------------------------------------


def _something_to_update(inp: BaseModel, *fields: str) -> None:
    """An update call names at least one of the fields it can change.

    Raises:
        InvalidInput: every one of `fields` is unset (None).
    """
    if all(getattr(inp, name) is None for name in fields):
        raise InvalidInput(
            f"nothing to update: give {', '.join(fields[:-1])} or {fields[-1]} (or several)"
        )


async def add_entity(ctx: ServerContext, inp: AddEntityInput) -> EntityWriteOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    entity, created = await mem.entities.add(ns, inp.name, inp.entity_type, inp.properties or None)
    similar = (
        await mem.resolver.similar_to_written(ns, ENTITY_NAMES, entity.uuid, entity.name)
        if created
        else []
    )
    return EntityWriteOutput(
        entity=entity, created=created, similar_existing=similar_nodes(similar)
    )


async def update_entity(ctx: ServerContext, inp: UpdateEntityInput) -> EntityOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    _something_to_update(inp, "properties", "new_name", "entity_type")
    entity = await mem.entities.update(
        ns,
        inp.entity,
        properties=inp.properties,
        mode=inp.mode,
        new_name=inp.new_name,
        entity_type=inp.entity_type,
    )
    return EntityOutput(entity=entity)


async def link_entities(ctx: ServerContext, inp: LinkEntitiesInput) -> EntityRelation:
    mem, ns = memory_and_ns(ctx, inp.graph)
    return await mem.entities.link(
        ns,
        inp.source,
        inp.target,
        inp.relationship_type,
        inp.properties or None,
        valid_from=inp.valid_from,
        valid_to=inp.valid_to,
    )


async def add_event(ctx: ServerContext, inp: AddEventInput) -> EventWrite:
    mem, ns = memory_and_ns(ctx, inp.graph)
    return await mem.temporal.add_event(
        ns, inp.description, inp.occurred_at, duration_ms=inp.duration_ms, entities=inp.entities
    )


async def update_event(ctx: ServerContext, inp: UpdateEventInput) -> EventWrite:
    mem, ns = memory_and_ns(ctx, inp.graph)
    _something_to_update(inp, "description", "occurred_at", "duration_ms", "entities")
    return await mem.temporal.update_event(
        ns,
        inp.event,
        description=inp.description,
        occurred_at=inp.occurred_at,
        duration_ms=inp.duration_ms,
        entities=inp.entities,
    )


async def add_fact(ctx: ServerContext, inp: AddFactInput) -> FactWrite:
    mem, ns = memory_and_ns(ctx, inp.graph)
    return await mem.temporal.add_fact(
        ns,
        inp.subject,
        inp.predicate,
        inp.object,
        valid_from=inp.valid_from,
        valid_to=inp.valid_to,
        entities=inp.entities,
        source=inp.source,
        cardinality=inp.cardinality,
    )


async def invalidate_fact(ctx: ServerContext, inp: InvalidateFactInput) -> InvalidateFactOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    if inp.fact:
        return InvalidateFactOutput(
            invalidated=[await mem.temporal.invalidate_fact(ns, inp.fact, inp.at)]
        )
    if not (inp.subject and inp.predicate):
        raise InvalidInput(
            "say which fact to end: give its uuid as fact, or subject and predicate to end "
            "the facts currently valid for them"
        )
    current: list[Fact] = await mem.temporal.facts(ns, subject=inp.subject, predicate=inp.predicate)
    if not current:
        raise NodeNotFound("current fact", f"{inp.subject} {inp.predicate}")
    ended = [await mem.temporal.invalidate_fact(ns, f.uuid, inp.at) for f in current]
    return InvalidateFactOutput(invalidated=ended)


async def add_concept(ctx: ServerContext, inp: AddConceptInput) -> ConceptWriteOutput:
    from polyg_core.graphs.entity_refs import created_entities

    mem, ns = memory_and_ns(ctx, inp.graph)
    made: dict[str, str] = {}
    concept, created = await mem.semantic.add_concept(
        ns, inp.name, inp.description, inp.entities, created_entities=made
    )
    return ConceptWriteOutput(
        concept=concept,
        created=created,
        created_entities=await created_entities(mem.resolver, ns, made),
    )


async def add_causal_link(ctx: ServerContext, inp: AddCausalLinkInput) -> CausalLinkResult:
    mem, ns = memory_and_ns(ctx, inp.graph)
    return await mem.causal.add_link(
        ns,
        inp.cause,
        inp.effect,
        inp.confidence,
        evidence=inp.evidence,
        entities=inp.entities,
        events=inp.events,
    )


async def _exact_matches(mem: Memory, ns: str, ref: str) -> list[Candidate]:
    found: list[Candidate] = []
    for spec in (ENTITY_NAMES, CAUSAL_NAMES, CONCEPT_NAMES):
        try:
            hit = await mem.resolver.find(ns, spec, ref, fuzzy=False)
        except AmbiguousName as exc:
            found.extend(exc.candidates)
            continue
        if hit is not None:
            found.append(Candidate(hit.uuid, hit.name, hit.label, 1.0))
    res = await mem.store.query(
        ns,
        f"MATCH (n:{EVENT} {{description: $d}}) RETURN n.uuid, n.description LIMIT 6",
        {"d": ref.strip()},
        read_only=True,
    )
    found.extend(Candidate(str(u), str(d), EVENT, 1.0) for u, d in res.rows)
    return found


async def delete_node(ctx: ServerContext, inp: DeleteNodeInput) -> DeleteNodeOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    require_confirm(ctx, inp.confirm, "deleting a node")
    label = await mem.crosslinks.label_of(ns, inp.node)
    if label is not None:
        target = Candidate(inp.node, inp.node, label, 1.0)
    else:
        matches = await _exact_matches(mem, ns, inp.node)
        if not matches:
            raise NodeNotFound("memory", inp.node)
        if len(matches) > 1:
            raise AmbiguousName("memory", inp.node, matches)
        target = matches[0]
    deleted = await mem.crosslinks.delete_node(ns, target.uuid, delete_facts=inp.delete_facts)
    message = (
        f"deleted {target.label} {target.name!r} with its edges and cross-links"
        if deleted
        else f"{target.name!r} was already gone"
    )
    return DeleteNodeOutput(
        deleted=deleted, uuid=target.uuid, label=target.label, name=target.name, message=message
    )


async def delete_relation(ctx: ServerContext, inp: DeleteRelationInput) -> DeleteRelationOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    require_confirm(ctx, inp.confirm, "deleting a relation")
    removed = await mem.entities.unlink(ns, inp.source, inp.target, inp.relationship_type)
    return DeleteRelationOutput(deleted=removed)


async def merge_entities(ctx: ServerContext, inp: MergeEntitiesInput) -> MergeEntitiesOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    require_confirm(ctx, inp.confirm, "merging entities")
    entity, merged_from = await mem.entities.merge(ns, inp.source, inp.target)
    return MergeEntitiesOutput(entity=entity, merged_from=merged_from)


async def delete_causal_link(
    ctx: ServerContext, inp: DeleteCausalLinkInput
) -> DeleteCausalLinkOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    require_confirm(ctx, inp.confirm, "deleting a causal link")
    return DeleteCausalLinkOutput(deleted=await mem.causal.remove_link(ns, inp.cause, inp.effect))


# -- admin -------------------------------------------------------------------------------------


async def clear_graph(ctx: ServerContext, inp: ClearGraphInput) -> ClearGraphOutput:
    mem, ns = memory_and_ns(ctx, inp.graph)
    require_confirm(ctx, inp.confirm, f"clearing the {inp.which} graph(s)")
    result = await mem.crosslinks.clear(ns, inp.which)
    return ClearGraphOutput(
        graph=ns,
        which=inp.which,
        nodes_deleted=result.nodes_deleted,
        relationships_deleted=result.relationships_deleted,
    )


async def _export_cypher(ctx: ServerContext, ns: str, inp: ExportGraphInput) -> ExportGraphOutput:
    """The CLI's Cypher dump (`polyg export --format cypher`), within the same bounds."""
    from polyg_core.transfer.cypher_dump import edge_statement, index_statements, statement
    from polyg_core.transfer.export import iter_exported, iter_late_edges

    lines = [
        f"// polyg memory dump of graph {ns!r}: one statement per line.",
        "// Replay: run each line with GRAPH.QUERY (no embeddings, no vector indexes).",
        *index_statements(),
    ]
    size = sum(len(line) + 1 for line in lines)
    count = 0
    truncated = False
    records = iter_exported(ctx.store, ns)
    async for item in records:
        line = statement(item)
        if count >= inp.max_records or size + len(line) + 1 > inp.max_chars:
            truncated = True
            break
        lines.append(line)
        size += len(line) + 1
        count += 1
    aclose = getattr(records, "aclose", None)
    if aclose is not None:
        await aclose()
    # The T_BEFORE / S_SIMILAR_TO edges join written nodes: only a whole dump has them.
    if not truncated:
        async for label, rel, a, b, edge in iter_late_edges(ctx.store, ns):
            line = edge_statement(label, rel, a, b, edge)
            if size + len(line) + 1 > inp.max_chars:
                truncated = True
                break
            lines.append(line)
            size += len(line) + 1
    return ExportGraphOutput(
        graph=ns, format="cypher", records=count, truncated=truncated, text="\n".join(lines) + "\n"
    )


async def export_graph(ctx: ServerContext, inp: ExportGraphInput) -> ExportGraphOutput:
    from polyg_core.transfer import iter_export, record_json

    ns = ctx.namespace(inp.graph)
    if inp.format == "cypher":
        return await _export_cypher(ctx, ns, inp)
    out = io.StringIO()
    count = 0
    truncated = False
    size = 0
    records = iter_export(ctx.store, ns)
    async for record in records:
        line = record_json(record) + "\n"
        if count >= inp.max_records or size + len(line) > inp.max_chars:
            truncated = True
            break
        out.write(line)
        size += len(line)
        count += 1
    aclose = getattr(records, "aclose", None)
    if aclose is not None:
        await aclose()
    text = out.getvalue()
    if inp.format == "json":
        text = "[" + ",".join(text.splitlines()) + "]"
    return ExportGraphOutput(
        graph=ns, format=inp.format, records=count, truncated=truncated, text=text
    )


def _jsonl_items(text: str) -> list[tuple[int, Any]]:
    from polyg_core.transfer import LineError
    from polyg_core.transfer.records import parse_record

    items: list[tuple[int, Any]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            items.append((number, LineError(number, f"not valid JSON ({exc})")))
            continue
        items.append((number, parse_record(data, number)))
    return items


async def import_graph(ctx: ServerContext, inp: ImportGraphInput) -> ImportGraphOutput:
    from polyg_core.transfer import RecordWriter

    mem, ns = memory_and_ns(ctx, inp.graph)
    items = _jsonl_items(inp.text)
    report = await RecordWriter.of(mem).run(
        ns, lambda: iter(items), strict=inp.strict, dry_run=inp.dry_run
    )
    return ImportGraphOutput.model_validate(report.to_dict())


_IDS = (
    " Nodes can be named by uuid or by name (descriptions for events and causal nodes); "
    "names are matched exactly, then ignoring case and punctuation, then by meaning."
)

_CREATED = (
    " An entity name that matches no stored entity by uuid, exact or normalised name "
    "creates a new entity, never one close in meaning; `created_entities` lists them, each "
    "with `similar_existing` (stored entities with a close name: merge_entities merges a "
    "duplicate on purpose)."
)

TOOLS: tuple[ToolSpec[Any, Any], ...] = (
    ToolSpec(
        name="recall",
        description=(
            "Answer a question from long-term memory. Use it first whenever something may "
            "have been remembered before: who, what, when, why, what is current. Returns "
            "`answer` with `confidence`, the `memories` that support it (best first) and "
            "`sources`; `degraded: true` with reasons when a fallback answered."
        ),
        input_model=RecallInput,
        output_model=RecallResult,
        handler=recall,
        annotations=READ_ONLY,
        profile="memory",
        uses_llm=True,
    ),
    ToolSpec(
        name="remember",
        description=(
            "Store what is worth keeping for later conversations: facts, decisions, events, "
            "incidents, preferences. People, things, times and causes in the text are "
            "extracted and linked; remembering the same text again changes nothing. Returns "
            "what was stored; long text is queued instead (`queued: true` with a job_id for "
            "get_job)."
        ),
        input_model=RememberArgs,
        output_model=RememberOutput,
        handler=remember,
        annotations=WRITE_IDEMPOTENT,
        profile="memory",
        uses_llm=True,
    ),
    ToolSpec(
        name="add_entity",
        description=(
            "Create an entity (person, service, deployment, ...) or update the one with the "
            "same name and type (its properties are merged). Returns the entity and `created`."
        ),
        input_model=AddEntityInput,
        output_model=EntityWriteOutput,
        handler=add_entity,
        annotations=WRITE_IDEMPOTENT,
        profile="graph",
    ),
    ToolSpec(
        name="update_entity",
        description=(
            "Correct or extend what is stored about one person, system or thing: its "
            "properties (merged, or replaced), its name or its type. Returns the updated "
            "entity."
        ),
        input_model=UpdateEntityInput,
        output_model=EntityOutput,
        handler=update_entity,
        annotations=WRITE_IDEMPOTENT,
        profile="memory",
    ),
    ToolSpec(
        name="link_entities",
        description=(
            "Relate two existing entities with a named relationship (owns, depends_on, ...). "
            "Linking the same pair with the same type again is a no-op. Returns the relation."
            + _IDS
        ),
        input_model=LinkEntitiesInput,
        output_model=EntityRelation,
        handler=link_entities,
        annotations=WRITE_IDEMPOTENT,
        profile="graph",
    ),
    ToolSpec(
        name="add_event",
        description=(
            "Record something that happened at a time, linked to the entities it involves. "
            "Returns the event with its uuid." + _CREATED
        ),
        input_model=AddEventInput,
        output_model=EventWrite,
        handler=add_event,
        annotations=WRITE_IDEMPOTENT,
        profile="graph",
    ),
    ToolSpec(
        name="update_event",
        description=(
            "Change an event's description, time, duration or entities (omitted: unchanged; "
            "entities replace the old ones). The event is named by uuid or exact description; "
            "the entities' timelines are re-ordered. Returns the event." + _CREATED
        ),
        input_model=UpdateEventInput,
        output_model=EventWrite,
        handler=update_event,
        annotations=WRITE_IDEMPOTENT,
        profile="graph",
    ),
    ToolSpec(
        name="add_fact",
        description=(
            "Record that 'subject predicate object' holds from valid_from (default now). A "
            "new value for the same subject and a single-valued predicate (team, city) ends "
            "the old one's validity; multi-valued ones (skills, likes) accumulate. "
            "Returns the fact, what happened (created/superseded/existing/extended) and the "
            "facts it closed." + _CREATED
        ),
        input_model=AddFactInput,
        output_model=FactWrite,
        handler=add_fact,
        annotations=WRITE,
        profile="graph",
    ),
    ToolSpec(
        name="invalidate_fact",
        description=(
            "Mark facts as no longer true from `at` (default now); they stay in the "
            "history. Give the fact's uuid, or subject and predicate to end the ones "
            "currently valid. Returns the ended facts."
        ),
        input_model=InvalidateFactInput,
        output_model=InvalidateFactOutput,
        handler=invalidate_fact,
        annotations=WRITE_IDEMPOTENT,
        profile="memory",
    ),
    ToolSpec(
        name="add_concept",
        description=(
            "Create or update a concept (a named idea, searchable by meaning) and link it to "
            "the entities it represents; semantic_search and recall start from concepts. "
            "Returns the concept and `created`." + _CREATED
        ),
        input_model=AddConceptInput,
        output_model=ConceptWriteOutput,
        handler=add_concept,
        annotations=WRITE_IDEMPOTENT,
        profile="graph",
    ),
    ToolSpec(
        name="add_causal_link",
        description=(
            "Record that a cause leads to an effect with a confidence (0-1). Descriptions are "
            "matched to existing causal nodes so chains connect; the same pair again updates "
            "the link. Links both nodes to affected entities and referenced events. Returns "
            "both nodes, the link and how each description was matched." + _CREATED
        ),
        input_model=AddCausalLinkInput,
        output_model=CausalLinkResult,
        handler=add_causal_link,
        annotations=WRITE_IDEMPOTENT,
        profile="graph",
    ),
    ToolSpec(
        name="delete_node",
        description=(
            "Forget one stored item (entity, event, fact, causal node, concept or memory) "
            "with its links. Irreversible: needs confirm: true. Takes a uuid or an exact "
            "name; an ambiguous name answers with the candidates."
        ),
        input_model=DeleteNodeInput,
        output_model=DeleteNodeOutput,
        handler=delete_node,
        annotations=DESTRUCTIVE,
        profile="memory",
    ),
    ToolSpec(
        name="delete_relation",
        description=(
            "Delete the relations from one entity to another (of one relationship type, or "
            "all); the entities stay. Irreversible: needs confirm: true. Ends are uuids or "
            "exact names; a name that matches nothing answers with the closest names."
        ),
        input_model=DeleteRelationInput,
        output_model=DeleteRelationOutput,
        handler=delete_relation,
        annotations=DESTRUCTIVE,
        profile="graph",
    ),
    ToolSpec(
        name="merge_entities",
        description=(
            "Merge one entity into another on purpose (a typo, a duplicate that a write "
            "reported in similar_existing): its relations, events, facts, concepts and causal "
            "links move to the target, which keeps the source's name in merged_from; the "
            "source is deleted. Irreversible: needs confirm: true. Names must be exact."
        ),
        input_model=MergeEntitiesInput,
        output_model=MergeEntitiesOutput,
        handler=merge_entities,
        annotations=DESTRUCTIVE,
        profile="graph",
    ),
    ToolSpec(
        name="delete_causal_link",
        description=(
            "Delete one cause -> effect link; both causal nodes stay. Irreversible: needs "
            "confirm: true. Cause and effect are uuids or exact descriptions."
        ),
        input_model=DeleteCausalLinkInput,
        output_model=DeleteCausalLinkOutput,
        handler=delete_causal_link,
        annotations=DESTRUCTIVE,
        profile="graph",
    ),
    ToolSpec(
        name="clear_graph",
        description=(
            "Remove every node of one memory graph (semantic, temporal, causal, entity) or of "
            "all four, with their cross-links; the other graphs stay. Irreversible: needs "
            "confirm: true. Returns the counts removed per label."
        ),
        input_model=ClearGraphInput,
        output_model=ClearGraphOutput,
        handler=clear_graph,
        annotations=DESTRUCTIVE,
        profile="admin",
    ),
    ToolSpec(
        name="export_graph",
        description=(
            "Export a memory graph as polyg JSONL records (entities, relations, events, facts, "
            "causal links, concepts, memories; no embeddings), bounded by max_records and "
            "max_chars (`truncated` says when cut). import_graph reads the text back. "
            "format cypher: the CLI's Cypher dump, one statement per line."
        ),
        input_model=ExportGraphInput,
        output_model=ExportGraphOutput,
        handler=export_graph,
        annotations=READ_ONLY,
        profile="admin",
    ),
    ToolSpec(
        name="import_graph",
        description=(
            "Import polyg JSONL records (export_graph's format, one JSON object per line with "
            "a `kind`) into a memory graph; known nodes are merged, not duplicated. Returns "
            "counts per kind and every bad line with what is wrong."
        ),
        input_model=ImportGraphInput,
        output_model=ImportGraphOutput,
        handler=import_graph,
        annotations=WRITE_IDEMPOTENT,
        profile="admin",
    ),
)
