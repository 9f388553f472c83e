"""Probabilistic tools (profile "graph"): the noisy-OR causal probability between two nodes."""

from __future__ import annotations

from typing import Any

from polyg_shared.retrieval import CausalPathProbability, CausalProbabilityResult
from polyg_shared.tools import MemoryInput, Ref
from pydantic import Field

from polyg_server.context import ServerContext
from polyg_server.registry import READ_ONLY, ToolSpec

PROFILE = "graph"


class CausalProbabilityInput(MemoryInput):
    """Arguments of causal_probability."""

    cause: Ref = Field(description="The cause: a causal node's description or uuid.")
    effect: Ref = Field(description="The effect: a causal node's description or uuid.")


async def causal_probability(
    ctx: ServerContext, inp: CausalProbabilityInput
) -> CausalProbabilityResult:
    mem = ctx.require_memory()
    found = await mem.causal_probability(inp.cause, inp.effect, graph=ctx.namespace(inp.graph))
    e = found.estimate
    return CausalProbabilityResult(
        cause=found.cause,
        effect=found.effect,
        cause_uuid=found.cause_uuid,
        effect_uuid=found.effect_uuid,
        probability=round(e.probability, 6),
        model=e.model,
        method=e.method,
        exact=found.exact,
        relevant_links=e.relevant_links,
        samples=e.samples,
        error_bound=round(e.error_bound, 6),
        truncated=found.truncated,
        paths=[
            CausalPathProbability(nodes=nodes, probability=round(p, 6)) for nodes, p in found.paths
        ],
        explanation=found.explanation,
    )


TOOLS: tuple[ToolSpec[Any, Any], ...] = (
    ToolSpec(
        name="causal_probability",
        description=(
            "Probability that one causal node leads to another, over every chain of causal "
            "links between them (noisy-OR: each link holds independently with its confidence; "
            "parallel chains combine, cycles are handled). Exact on chains and chains of "
            "diamonds of any length and on any graph of up to 20 links once those are "
            "reduced, otherwise a seeded Monte Carlo estimate with its 95% error bound. Use it to weigh "
            "a suspected root cause against an outcome; explain_why lists the chains."
        ),
        input_model=CausalProbabilityInput,
        output_model=CausalProbabilityResult,
        handler=causal_probability,
        annotations=READ_ONLY,
        profile=PROFILE,
    ),
)
