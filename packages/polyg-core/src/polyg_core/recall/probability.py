"""Noisy-OR causal probability: how likely one causal node leads to another.

Model ("noisy-OR over independent links"): every `C_CAUSES` link `u -> v` is
present independently with probability equal to its confidence; the cause
leads to the effect when some chain of present links joins them. With one
path this is the product of its confidences; parallel paths combine as
`1 - prod(1 - p_path)` when they share no link, and exactly (inclusion of
shared links, cycles) in general. Cycles need no special case: a link back
to an already reached node changes nothing.

Computation: the links that lie on some cause -> effect path are kept (the
"relevant" subgraph), then reduced exactly: a node with one link in and one
link out is replaced by one link (the product), parallel links by one link
(noisy-OR). A chain or a series-parallel graph (chains of diamonds) of any
length reduces to a single link, so its probability is exact. Whatever remains,
up to `exact_limit` links (default 20), is computed exactly by factoring on the
links leaving the reached set (equal to enumerating every subset of links, but
pruned). Above that it is a Monte Carlo estimate with a fixed seed: `samples`
independent draws of every link, reachability per draw; the result carries the
95% Hoeffding bound `sqrt(ln(2 / 0.05) / (2 * samples))` (0.0096 for 20,000
samples) and says "monte_carlo", never "exact".

Over the stored graph the links downstream of the cause are read until none are
left or `max_edges` links were read, whatever the number of hops; a search that
hit that cap is reported as truncated (a lower bound), and not as exact.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from polyg_core.errors import InvalidInput, NodeNotFound
from polyg_core.storage.schema import CAUSAL, R_CAUSES
from polyg_core.storage.store import FalkorStore

logger = logging.getLogger(__name__)

MODEL = "noisy-OR over independent links"
EXACT_LIMIT = 20
SAMPLES = 20_000
SEED = 7
MAX_FETCH_DEPTH: int | None = None
"""No hop limit: the link cap `MAX_FETCH_EDGES` bounds the search (each hop adds a node)."""
MAX_FETCH_EDGES = 2_000
CONFIDENCE_LEVEL = 0.95

Method = Literal["exact", "monte_carlo", "trivial"]
Link = tuple[str, str, float]


@dataclass(frozen=True)
class ProbabilityEstimate:
    """P(source leads to target) under the noisy-OR model, and how it was computed.

    Attributes:
        probability: the (exact or estimated) probability, in [0, 1].
        method: "exact" (factoring), "monte_carlo" (sampled) or "trivial" (same node / no path).
        relevant_links: links on some source -> target path (the ones that matter).
        samples: draws used by the Monte Carlo estimate (0 when exact).
        error_bound: half-width of the 95% confidence interval (0 when exact).
        model: the model's name.
    """

    probability: float
    method: Method
    relevant_links: int
    samples: int = 0
    error_bound: float = 0.0
    model: str = MODEL


def hoeffding_bound(samples: int, confidence: float = CONFIDENCE_LEVEL) -> float:
    """Half-width of a two-sided Hoeffding interval for a mean of `samples` Bernoulli draws."""
    return math.sqrt(math.log(2.0 / (1.0 - confidence)) / (2.0 * samples))


def _combine(links: Iterable[Link]) -> dict[tuple[str, str], float]:
    # Parallel links between one pair are one noisy-OR link; self-loops never matter.
    merged: dict[tuple[str, str], float] = {}
    for u, v, p in links:
        if not 0.0 <= p <= 1.0 or math.isnan(p):
            raise InvalidInput(
                f"link {u!r} -> {v!r} has probability {p}; link confidences must be in [0, 1]"
            )
        if u == v or p == 0.0:
            continue
        merged[(u, v)] = 1.0 - (1.0 - merged.get((u, v), 0.0)) * (1.0 - p)
    return merged


def _reach(start: str, adj: dict[str, list[str]]) -> set[str]:
    seen = {start}
    stack = [start]
    while stack:
        for nxt in adj.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def relevant_links(links: Iterable[Link], source: str, target: str) -> dict[tuple[str, str], float]:
    """The links that lie on some source -> target path (parallel links combined)."""
    merged = _combine(links)
    fwd: dict[str, list[str]] = defaultdict(list)
    back: dict[str, list[str]] = defaultdict(list)
    for u, v in merged:
        fwd[u].append(v)
        back[v].append(u)
    from_source = _reach(source, fwd)
    to_target = _reach(target, back)
    return {
        (u, v): p
        for (u, v), p in merged.items()
        if u in from_source and v in to_target and v != source and u != target
    }


def reduce_series_parallel(
    edges: dict[tuple[str, str], float], source: str, target: str
) -> dict[tuple[str, str], float]:
    """Relevant links with every series and parallel pair replaced by one equivalent link.

    A node other than source and target with exactly one link in (u -> w, p) and one
    out (w -> v, q) is removed for u -> v with p * q (w is reached only through u and
    leads only to v); a new link parallel to an existing one joins it by noisy-OR; a
    link that comes back to where it started (u == v) changes no reachability and is
    dropped. The probability of reaching the target is unchanged, exactly.
    """
    out_links: dict[str, set[str]] = defaultdict(set)
    in_links: dict[str, set[str]] = defaultdict(set)
    reduced = dict(edges)
    for u, v in reduced:
        out_links[u].add(v)
        in_links[v].add(u)
    work = deque(sorted({n for e in reduced for n in e}))
    while work:
        w = work.popleft()
        if w in (source, target) or len(in_links[w]) != 1 or len(out_links[w]) != 1:
            continue
        (u,) = in_links[w]
        (v,) = out_links[w]
        p = reduced.pop((u, w)) * reduced.pop((w, v))
        out_links[u].discard(w)
        in_links[v].discard(w)
        in_links[w].clear()
        out_links[w].clear()
        if u != v:
            reduced[(u, v)] = 1.0 - (1.0 - reduced.get((u, v), 0.0)) * (1.0 - p)
            out_links[u].add(v)
            in_links[v].add(u)
        work.extend((u, v))
    return reduced


def _exact(edges: dict[tuple[str, str], float], source: str, target: str) -> float:
    """Factoring on frontier links: each branch decides one link leaving the reached set."""
    out: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (u, v), p in edges.items():
        out[u].append((v, p))
    memo: dict[tuple[frozenset[str], frozenset[tuple[str, str]]], float] = {}

    def solve(reached: frozenset[str], dead: frozenset[tuple[str, str]]) -> float:
        if target in reached:
            return 1.0
        dead = frozenset(e for e in dead if e[1] not in reached)
        key = (reached, dead)
        if key in memo:
            return memo[key]
        frontier = sorted(
            (u, v, p)
            for u in reached
            for v, p in out.get(u, ())
            if v not in reached and (u, v) not in dead
        )
        if not frontier:
            value = 0.0
        else:
            u, v, p = frontier[0]
            present = solve(reached | {v}, dead) if p > 0 else 0.0
            absent = solve(reached, dead | {(u, v)}) if p < 1 else 0.0
            value = p * present + (1.0 - p) * absent
        memo[key] = value
        return value

    return solve(frozenset({source}), frozenset())


def _hops_from(edges: dict[tuple[str, str], float], source: str) -> dict[str, int]:
    out: dict[str, list[str]] = defaultdict(list)
    for u, v in edges:
        out[u].append(v)
    hops = {source: 0}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        for nxt in out.get(node, ()):
            if nxt not in hops:
                hops[nxt] = hops[node] + 1
                queue.append(nxt)
    return hops


def _sampled(
    edges: dict[tuple[str, str], float], source: str, target: str, samples: int, seed: int
) -> float:
    nodes = sorted({n for e in edges for n in e})
    index = {n: i for i, n in enumerate(nodes)}
    # Links in breadth-first order from the source: one relaxation round then reaches
    # the end of a long chain, instead of one node per round.
    hops = _hops_from(edges, source)
    pairs = sorted(edges, key=lambda e: (hops.get(e[0], len(nodes)), e))
    src = [index[u] for u, _ in pairs]
    dst = [index[v] for _, v in pairs]
    probs = np.array([edges[e] for e in pairs])
    rng = np.random.default_rng(seed)
    present = rng.random((samples, len(pairs))) < probs
    reached = np.zeros((samples, len(nodes)), dtype=bool)
    reached[:, index[source]] = True
    # Bellman-Ford style relaxation over all draws at once; at most |nodes| rounds.
    for _ in range(len(nodes)):
        changed = False
        for k, (u, v) in enumerate(zip(src, dst, strict=True)):
            new = reached[:, u] & present[:, k] & ~reached[:, v]
            if new.any():
                reached[:, v] |= new
                changed = True
        if not changed:
            break
    return float(reached[:, index[target]].mean())


def noisy_or_probability(
    links: Iterable[Link],
    source: str,
    target: str,
    *,
    exact_limit: int = EXACT_LIMIT,
    samples: int = SAMPLES,
    seed: int = SEED,
) -> ProbabilityEstimate:
    """P(source leads to target) when every link `(u, v, p)` holds independently with prob. p.

    Args:
        links: directed links with their probabilities (confidences).
        source: the cause's id.
        target: the effect's id.
        exact_limit: most links, after series-parallel reduction, computed exactly by
            factoring; above, Monte Carlo (with its error bound).
        samples: Monte Carlo draws.
        seed: Monte Carlo seed (fixed, so results repeat).

    Raises:
        InvalidInput: a probability outside [0, 1], or samples < 1.
    """
    if samples < 1:
        raise InvalidInput(f"samples must be at least 1, got {samples}")
    if source == target:
        return ProbabilityEstimate(1.0, "trivial", 0)
    edges = relevant_links(links, source, target)
    if not edges:
        return ProbabilityEstimate(0.0, "trivial", 0)
    reduced = reduce_series_parallel(edges, source, target)
    if set(reduced) == {(source, target)}:
        value = reduced[(source, target)]
        return ProbabilityEstimate(min(1.0, max(0.0, value)), "exact", len(edges))
    if len(reduced) <= exact_limit:
        value = _exact(reduced, source, target)
        return ProbabilityEstimate(min(1.0, max(0.0, value)), "exact", len(edges))
    value = _sampled(reduced, source, target, samples, seed)
    return ProbabilityEstimate(value, "monte_carlo", len(edges), samples, hoeffding_bound(samples))


# -- over the stored causal graph ----------------------------------------------------------------


@dataclass(frozen=True)
class CausalProbability:
    """P(cause leads to effect) over the stored causal graph.

    Attributes:
        cause_uuid / effect_uuid: the two C_Node uuids.
        cause / effect: their descriptions.
        estimate: the probability and how it was computed.
        links_fetched: C_CAUSES links read from the store.
        truncated: True when the fetch hit its depth or size cap (paths may be missing,
            so the probability is a lower bound).
        paths: up to 5 example chains (descriptions), most probable first.
    """

    cause_uuid: str
    effect_uuid: str
    cause: str
    effect: str
    estimate: ProbabilityEstimate
    links_fetched: int
    truncated: bool
    paths: list[tuple[list[str], float]] = field(default_factory=lambda: [])

    @property
    def exact(self) -> bool:
        """True only when the probability is exact for the whole stored graph."""
        return self.estimate.method != "monte_carlo" and not self.truncated

    @property
    def explanation(self) -> str:
        """One sentence saying what the number means and how it was obtained."""
        e = self.estimate
        how = (
            f"exact over {e.relevant_links} relevant links"
            + (" found before the search stopped" if self.truncated else "")
            if e.method == "exact"
            else (
                f"Monte Carlo over {e.relevant_links} relevant links, {e.samples} samples, "
                f"±{e.error_bound:.3f} at 95%"
                if e.method == "monte_carlo"
                else "no chain of links joins them"
                if e.probability == 0.0
                else "same node"
            )
        )
        bound = " (lower bound: the search stopped at its size cap)" if self.truncated else ""
        return (
            f"P({self.cause!r} leads to {self.effect!r}) = {e.probability:.4f} under a "
            f"{e.model} model ({how}){bound}."
        )


async def _fetch_links(
    store: FalkorStore, namespace: str, start: str, *, max_depth: int | None, max_edges: int
) -> tuple[list[Link], bool]:
    """C_CAUSES links reachable downstream from `start`, hop by hop.

    Bounded by `max_edges` (every hop that goes on adds a node, so the number of hops
    is bounded too) and by `max_depth` hops when given.
    """
    links: dict[tuple[str, str], float] = {}
    seen = {start}
    frontier = [start]
    truncated = False
    hops = max_depth if max_depth is not None else max_edges + 1
    for _hop in range(hops):
        if not frontier:
            break
        res = await store.query(
            namespace,
            f"MATCH (a:{CAUSAL})-[r:{R_CAUSES}]->(b:{CAUSAL}) WHERE a.uuid IN $ids "
            "RETURN a.uuid, b.uuid, r.confidence LIMIT $cap",
            {"ids": frontier, "cap": max_edges + 1},
            read_only=True,
        )
        nxt: list[str] = []
        for a, b, conf in res.rows:
            links[(str(a), str(b))] = float(conf if conf is not None else 0.5)
            if b not in seen:
                seen.add(str(b))
                nxt.append(str(b))
        if len(links) > max_edges:
            truncated = True
            break
        frontier = nxt
    else:
        truncated = bool(frontier)
    return [(u, v, p) for (u, v), p in links.items()], truncated


def _best_paths(
    edges: dict[tuple[str, str], float], source: str, target: str, limit: int = 5
) -> list[tuple[list[str], float]]:
    out: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (u, v), p in edges.items():
        out[u].append((v, p))
    found: list[tuple[list[str], float]] = []

    def walk(path: list[str], prob: float) -> None:
        if len(found) >= 200:
            return
        node = path[-1]
        if node == target:
            found.append((list(path), prob))
            return
        for nxt, p in out.get(node, ()):
            if nxt not in path:
                path.append(nxt)
                walk(path, prob * p)
                path.pop()

    walk([source], 1.0)
    found.sort(key=lambda item: -item[1])
    return found[:limit]


async def causal_probability(
    store: FalkorStore,
    namespace: str,
    cause: str,
    effect: str,
    *,
    max_depth: int | None = MAX_FETCH_DEPTH,
    max_edges: int = MAX_FETCH_EDGES,
    exact_limit: int = EXACT_LIMIT,
    samples: int = SAMPLES,
    seed: int = SEED,
) -> CausalProbability:
    """P(cause leads to effect) under noisy-OR over the stored C_CAUSES links.

    `cause` and `effect` are C_Node uuids (resolve names first, e.g. with
    `CausalGraph.get`). Links downstream of the cause are read hop by hop up to
    `max_edges` links (and `max_depth` hops when given); only links on a cause ->
    effect path count. `explain_why` and the `causal_probability` tool call this.

    Raises:
        NodeNotFound: either uuid is not a causal node.
        InvalidInput: bad bounds.
    """
    if (max_depth is not None and max_depth < 1) or max_edges < 1:
        raise InvalidInput("max_depth and max_edges must be at least 1")
    res = await store.query(
        namespace,
        f"MATCH (c:{CAUSAL}) WHERE c.uuid IN $ids RETURN c.uuid, c.description",
        {"ids": [cause, effect]},
        read_only=True,
    )
    names: dict[str, str] = {str(u): str(d) for u, d in res.rows}
    for uuid in (cause, effect):
        if uuid not in names:
            raise NodeNotFound("causal", uuid)
    links, truncated = await _fetch_links(
        store, namespace, cause, max_depth=max_depth, max_edges=max_edges
    )
    estimate = noisy_or_probability(
        links, cause, effect, exact_limit=exact_limit, samples=samples, seed=seed
    )
    relevant = relevant_links(links, cause, effect)
    paths: list[tuple[list[str], float]] = []
    if relevant:
        ids = sorted({n for e in relevant for n in e})
        res = await store.query(
            namespace,
            f"MATCH (c:{CAUSAL}) WHERE c.uuid IN $ids RETURN c.uuid, c.description",
            {"ids": ids},
            read_only=True,
        )
        names.update({str(u): str(d) for u, d in res.rows})
        paths = [
            ([names.get(n, n) for n in path], p) for path, p in _best_paths(relevant, cause, effect)
        ]
    return CausalProbability(
        cause_uuid=cause,
        effect_uuid=effect,
        cause=names[cause],
        effect=names[effect],
        estimate=estimate,
        links_fetched=len(links),
        truncated=truncated,
        paths=paths,
    )


def probabilities_to_targets(
    links: Sequence[Link], sources: Sequence[str], targets: set[str], **kwargs: Any
) -> dict[str, float]:
    """For each source, P(it leads to any of `targets`) (a virtual sink joins the targets)."""
    sink = "\x00sink"
    joined = [*links, *((t, sink, 1.0) for t in targets)]
    out: dict[str, float] = {}
    for s in sources:
        out[s] = (
            1.0 if s in targets else noisy_or_probability(joined, s, sink, **kwargs).probability
        )
    return out
