"""Calibrated confidence: the raw confidence mapped to how often such answers are right.

The raw confidence (`confidence.confidence_of`) orders answers by their evidence; it does
not say how often they are right. The mapping here does: answers fall into groups by
three features that say what kind of answer it is, and each group has a monotone table of
(raw confidence, share right) knots fitted on the team's own data — the shipped
scenarios' questions and probes, the update set and the dev conversation — by
`scripts/fit_calibration.py`, which writes `calibration_table.py`. The features:

* the route (`confidence.ROUTES`): which answer the question took (a time, a value at a
  time, an entity's facts, a causal chain, an update's current value, a summary);
* what it rests on: words someone said in a conversation (`p`: a quoted turn, or what the
  graphs read from turns, see `Evidence.spoken`), a quoted note (`q`), or what the graphs
  hold otherwise (`g`);
* its form: the asked value itself (`s`), a whole text, a time that is only when a text
  was recorded, or a day computed from a weekday name (`t`, see `Evidence.direct` and
  `Evidence.weekday`), or not of the asked shape at all (`u`).

A group with too few fitted answers uses the table of its route and source, else of its
source, else the pooled one (`all`). Answers that say nothing was found form one group of
their own (`none`): "I don't know" is calibrated by how often such answers were right.
Between knots the share is interpolated; outside them it is the nearest knot's. Evidence
about another entity or time, a memory a later one changed, or nothing found, stays
capped whatever the table says (`confidence.CONTRADICTED_CAP`, `NOT_FOUND_CAP`).

Refit after a change to ranking or answers: run the benches with `--json` and the script
(see its docstring).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence

from polyg_core.recall.answer.calibration_table import KNOTS
from polyg_core.recall.answer.confidence import (
    CONTRADICTED_CAP,
    NOT_FOUND_CAP,
    Evidence,
    factors_of,
    off_chain,
)

__all__ = [
    "NOT_FOUND_KEY",
    "calibrated",
    "calibrated_confidence",
    "calibrated_from_factors",
    "group_keys",
    "keys_of",
    "route_of",
    "source_of",
]

Knots = Sequence[tuple[float, float]]

NOT_FOUND_KEY = "none"
"""The group of answers that say nothing in memory answers the question."""


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


def form_of(shaped: bool, direct: bool) -> str:
    """`s`: the asked value itself; `t`: a whole text, or a time only of its recording;
    `u`: not of the asked shape."""
    if not shaped:
        return "u"
    return "s" if direct else "t"


def source_of(quoted: bool, spoken: bool) -> str:
    """`p`: words said in a conversation (quoted, or what the graphs read from them);
    `q`: a quoted note; `g`: what the graphs hold otherwise."""
    if spoken:
        return "p"
    return "q" if quoted else "g"


def group_keys(route: str, source: str, form: str) -> list[str]:
    """The table keys an answer may use, most specific first: its route, source
    (`source_of`) and form (`form_of`); then route and source; then the source; then the
    pooled table (`all`). Each key's parent is the next one."""
    return [f"{route}/{source}/{form}", f"{route}/{source}", source, "all"]


def route_of(factors: Mapping[str, float]) -> str:
    """The route named in an answer's factors (`route_<name>`), "other" when none is."""
    return next((k[len("route_") :] for k in factors if k.startswith("route_")), "other")


def keys_of(factors: Mapping[str, float]) -> list[str]:
    """The table keys of an answer with these reported factors (`confidence.factors_of`).
    An answer that says nothing was found is calibrated on its own (`NOT_FOUND_KEY`): it
    gives no value, whatever route it took or source it looked in."""
    if factors.get("found") == 0.0:
        return [NOT_FOUND_KEY, "all"]
    direct = factors.get("direct", 1.0) == 1.0 and factors.get("weekday") != 1.0
    form = form_of(factors.get("shaped", 1.0) == 1.0, direct)
    source = source_of(factors.get("quoted") == 1.0, factors.get("spoken") == 1.0)
    return group_keys(route_of(factors), source, form)


def calibrated(raw: float, keys: Sequence[str], table: Mapping[str, Knots] = KNOTS) -> float:
    """The share of answers like this one (the first of `keys` the table has) with raw
    confidence `raw` that were right; with no table, `raw` itself."""
    knots = next((table[k] for k in keys if table.get(k)), None)
    if not knots:
        return raw
    return round(min(1.0, max(0.0, _interpolate(knots, raw))), 3)


def calibrated_from_factors(
    factors: Mapping[str, float], table: Mapping[str, Knots] = KNOTS
) -> float | None:
    """The calibrated confidence of an answer with these reported factors (None when they
    hold no raw confidence): the same rule at run time and when refitting from benchmark
    output."""
    raw = factors.get("raw")
    if raw is None:
        return None
    value = calibrated(raw, keys_of(factors), table)
    # Evidence about another entity or time than the one asked, a value that no longer
    # holds, or none at all, stays capped whatever the table says; a causal answer is no
    # surer than its chain.
    if factors.get("found") == 0.0:
        value = min(value, NOT_FOUND_CAP)
    if (
        factors.get("entity_found") == 0.0
        or factors.get("time_found") == 0.0
        or factors.get("stale") == 1.0
        or off_chain(factors.get("chain"), factors.get("match", 1.0))
    ):
        value = min(value, CONTRADICTED_CAP)
    chain = factors.get("chain")
    return min(value, round(chain, 3)) if chain is not None else value


def calibrated_confidence(evidence: Evidence, table: Mapping[str, Knots] = KNOTS) -> float:
    """The answer's calibrated confidence (see the module doc)."""
    value = calibrated_from_factors(factors_of(evidence), table)
    assert value is not None  # factors_of always reports the raw confidence
    return value
