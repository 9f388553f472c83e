"""Calibrated confidence: the raw confidence mapped to how often such answers are right.

The raw confidence (`confidence.confidence_of`) orders answers by the evidence they rest
on; it does not say how often they are right. The mapping here does: for each answer
route (`confidence.ROUTES`), a monotone table of (raw confidence, share right) knots fitted
on the team's own data — the shipped scenarios' questions and probes, the update set and
half of the dev conversation — by `scripts/fit_calibration.py`, which writes
`calibration_table.py`. Answers are grouped by route, by whether they quote a stored text
and by whether they have the asked shape (`group_keys`); a group with too few fitted
answers uses its route's table, else the pooled one (`all`). Between knots the share is
interpolated; outside them it is the nearest knot's.

Refit after a change to ranking or answers: run the benches with `--json` and the script
(see its docstring).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence

from polyg_core.recall.answer.calibration_table import KNOTS
from polyg_core.recall.answer.confidence import (
    CONTRADICTED_CAP,
    Evidence,
    confidence_of,
)

__all__ = [
    "calibrated",
    "calibrated_confidence",
    "calibrated_from_factors",
    "group_keys",
    "route_of",
]

Knots = Sequence[tuple[float, float]]


def _interpolate(knots: Knots, raw: float) -> float:
    xs = [x for x, _ in knots]
    i = bisect_right(xs, raw)
    if i == 0:
        return knots[0][1]
    if i == len(knots):
        return knots[-1][1]
    (x0, y0), (x1, y1) = knots[i - 1], knots[i]
    if x1 <= x0:
        return y1
    return y0 + (y1 - y0) * (raw - x0) / (x1 - x0)


def group_keys(route: str, quoted: bool, shaped: bool) -> list[str]:
    """The table keys an answer may use, most specific first: route, whether it quotes a
    stored text (`q`) or states what the graphs hold (`g`), whether it has the asked shape
    (`s`) or not (`u`); then the route alone; then the pooled table (`all`)."""
    return [f"{route}/{'q' if quoted else 'g'}/{'s' if shaped else 'u'}", route, "all"]


def calibrated(raw: float, keys: Sequence[str], table: Mapping[str, Knots] = KNOTS) -> float:
    """The share of answers like this one (the first of `keys` the table has) with raw
    confidence `raw` that were right; with no table, `raw` itself."""
    knots = next((table[k] for k in keys if table.get(k)), None)
    if not knots:
        return raw
    return round(min(1.0, max(0.0, _interpolate(knots, raw))), 3)


def _capped(value: float, contradicted: bool, chain: float | None) -> float:
    # Evidence about another entity or time than the one asked, or none at all, stays
    # capped whatever the table says; a causal answer is no surer than its chain.
    if contradicted:
        value = min(value, CONTRADICTED_CAP)
    return min(value, round(chain, 3)) if chain is not None else value


def calibrated_confidence(evidence: Evidence, table: Mapping[str, Knots] = KNOTS) -> float:
    """The answer's calibrated confidence (capped at `CONTRADICTED_CAP` when the evidence
    is about another entity or time, or nothing was found; at the chain's confidence for
    a causal answer)."""
    keys = group_keys(evidence.route, evidence.quoted, evidence.shaped)
    value = calibrated(confidence_of(evidence), keys, table)
    contradicted = evidence.entity == 0.0 or evidence.time == 0.0 or not evidence.found
    return _capped(value, contradicted, evidence.chain)


def route_of(factors: Mapping[str, float]) -> str:
    """The route named in an answer's factors (`route_<name>`), "other" when none is."""
    return next((k[len("route_") :] for k in factors if k.startswith("route_")), "other")


def calibrated_from_factors(
    factors: Mapping[str, float], table: Mapping[str, Knots] = KNOTS
) -> float | None:
    """What `calibrated_confidence` gives an answer with these reported factors (None
    when they hold no raw confidence); for refitting and checking from benchmark output."""
    raw = factors.get("raw")
    if raw is None:
        return None
    keys = group_keys(
        route_of(factors), factors.get("quoted") == 1.0, factors.get("shaped", 1.0) == 1.0
    )
    value = calibrated(raw, keys, table)
    contradicted = (
        factors.get("entity_found") == 0.0
        or factors.get("time_found") == 0.0
        or factors.get("found") == 0.0
    )
    return _capped(value, contradicted, factors.get("chain"))
