"""Calibrated confidence: the raw confidence mapped to how often such answers are right.

The raw confidence (`confidence.confidence_of`) orders answers by their evidence; it does
not say how often they are right. The mapping here does: a small logistic model whose
log-odds are one slope on the raw confidence plus what the answer's kind adds, fitted on
the team's own data — the shipped scenarios' questions and probes, the update set and the
dev conversation — by `scripts/fit_calibration.py`, which writes `calibration_table.py`.
An answer's kind is three features:

* the route (`confidence.ROUTES`): which answer the question took (a time, a value at a
  time, an entity's facts, a causal chain, an update's current value, a summary);
* what it rests on: words someone said in a conversation (`p`: a quoted turn, or what the
  graphs read from turns, see `Evidence.spoken`), a quoted note (`q`), or what the graphs
  hold otherwise (`g`);
* its form: the asked value itself (`s`), a whole text or a time that is only when a
  text was recorded (`t`, see `Evidence.direct`), or not of the asked shape at all (`u`).

The kind is read as a hierarchy of groups (`group_keys`): the source, the source with
the route, the source with the form, and all three; each group adds its own log-odds.
The fit pulls each group's term towards zero (a Gaussian prior: empirical-Bayes
shrinkage), so a group of a few answers stays near what its parents say and a group
never seen adds nothing: an unseen route of a seen source and form is calibrated as
that source and form are. One slope for all groups keeps the mapping monotone in the
raw confidence with few numbers to fit. Answers that say nothing was found form one
group of their own (`none`): "I don't know" is calibrated by how often such answers
were right. Evidence about another entity or time, a memory a later one changed, or
nothing found, stays capped whatever the model says (`confidence.CONTRADICTED_CAP`,
`NOT_FOUND_CAP`).

Refit after a change to ranking or answers: `uv run python scripts/fit_calibration.py
--run` (see its docstring).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from polyg_core.recall.answer import calibration_table
from polyg_core.recall.answer.confidence import (
    CEILING,
    CONTRADICTED_CAP,
    FLOOR,
    NOT_FOUND_CAP,
    Evidence,
    factors_of,
    off_chain,
)

__all__ = [
    "NOT_FOUND_KEY",
    "SHIPPED",
    "Calibration",
    "calibrated",
    "calibrated_confidence",
    "calibrated_from_factors",
    "group_keys",
    "keys_of",
    "route_of",
    "source_of",
]

NOT_FOUND_KEY = "none"
"""The group of answers that say nothing in memory answers the question."""


@dataclass(frozen=True)
class Calibration:
    """A fitted mapping: log-odds = `slope` x (raw - `center`) + the `effects` of the
    answer's groups (a group absent adds nothing), read as a share in [FLOOR, CEILING].

    Attributes:
        effects: log-odds each group adds (`group_keys`).
        slope: log-odds per unit of raw confidence, never negative (more evidence never
            calibrates lower).
        center: the raw confidence the effects are read at.
    """

    effects: Mapping[str, float] = field(default_factory=dict[str, float])
    slope: float = 0.0
    center: float = 0.5

    def __post_init__(self) -> None:
        if self.slope < 0 or not math.isfinite(self.slope):
            raise ValueError(f"a calibration slope must be finite and >= 0, got {self.slope}")

    def share(self, raw: float, keys: Sequence[str]) -> float:
        """How often answers of these groups with raw confidence `raw` are right."""
        z = self.slope * (raw - self.center) + sum(self.effects.get(k, 0.0) for k in keys)
        return min(CEILING, max(FLOOR, 1.0 / (1.0 + math.exp(-z))))


SHIPPED = Calibration(calibration_table.EFFECTS, calibration_table.SLOPE, calibration_table.CENTER)
"""The mapping fitted by `scripts/fit_calibration.py` (`calibration_table.py`)."""


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
    """The groups an answer belongs to, most specific first: route, source and form;
    source and form; route and source; the source; all answers. Each adds its log-odds."""
    return [f"{route}/{source}/{form}", f"{source}/{form}", f"{route}/{source}", source, "all"]


def route_of(factors: Mapping[str, float]) -> str:
    """The route named in an answer's factors (`route_<name>`), "other" when none is."""
    return next((k[len("route_") :] for k in factors if k.startswith("route_")), "other")


def keys_of(factors: Mapping[str, float]) -> list[str]:
    """The groups of an answer with these reported factors (`confidence.factors_of`).
    An answer that says nothing was found is calibrated on its own (`NOT_FOUND_KEY`): it
    gives no value, whatever route it took or source it looked in."""
    if factors.get("found") == 0.0:
        return [NOT_FOUND_KEY, "all"]
    form = form_of(factors.get("shaped", 1.0) == 1.0, factors.get("direct", 1.0) == 1.0)
    source = source_of(factors.get("quoted") == 1.0, factors.get("spoken") == 1.0)
    return group_keys(route_of(factors), source, form)


def calibrated(raw: float, keys: Sequence[str], model: Calibration = SHIPPED) -> float:
    """The share of answers of these groups with raw confidence `raw` that were right;
    with a model that knows none of the groups and has no slope, `raw` itself."""
    if not model.effects and model.slope == 0.0:
        return raw
    return round(model.share(raw, keys), 3)


def calibrated_from_factors(
    factors: Mapping[str, float], model: Calibration = SHIPPED
) -> float | None:
    """The calibrated confidence of an answer with these reported factors (None when they
    hold no raw confidence): the same rule at run time and when refitting from benchmark
    output."""
    raw = factors.get("raw")
    if raw is None:
        return None
    value = calibrated(raw, keys_of(factors), model)
    # Evidence about another entity or time than the one asked, a value that no longer
    # holds, or none at all, stays capped whatever the model says; a causal answer is no
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


def calibrated_confidence(evidence: Evidence, model: Calibration = SHIPPED) -> float:
    """The answer's calibrated confidence (see the module doc)."""
    value = calibrated_from_factors(factors_of(evidence), model)
    assert value is not None  # factors_of always reports the raw confidence
    return value
