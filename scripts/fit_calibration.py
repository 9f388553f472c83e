"""Refit the confidence calibration (`polyg_core.recall.answer.calibration_table`).

Recall's raw confidence orders answers by their evidence; the calibration maps it, per
answer route, to how often such answers were right. This script fits that mapping on the
team's own data and checks it on data it was not fitted on:

* fitted on: the shipped scenarios' questions and probes (`polyg bench answers`), the
  update set (`polyg bench updates`) and the even-numbered questions of the dev
  conversation (`polyg bench retrieval`);
* checked on: the odd-numbered questions of the dev conversation, never fitted on.

Right means: token F1 >= 0.5 against the gold answer (dev conversation), every expected
text and no unwanted one (scenarios), the current value with the stale one only as
history (update set).

Refit after ranking or answers change (run from the repository root)::

    uv run polyg bench answers --json /tmp/cal_scenarios.json
    uv run polyg bench updates --size small --json /tmp/cal_updates.json
    uv run polyg bench retrieval ../shared/fixtures/dev-conversation/conversation.json \\
        --json /tmp/cal_dev.json
    uv run python scripts/fit_calibration.py --scenarios /tmp/cal_scenarios.json \\
        --updates /tmp/cal_updates.json --dev /tmp/cal_dev.json

It prints the held-out calibration before and after, and writes the table (``--dry-run``
only prints). The benches record each answer's raw confidence and route in its factors,
so they can be run with any table in place.

The fit: pool-adjacent-violators (isotonic regression) of right on the raw confidence,
per group of answers (route, quoted or not, of the asked shape or not; then route; then
all) whose fitted answers weigh at least ``--min-group``; blocks lighter than ``--min-block``
merge into a neighbour, and each block's share is shrunk towards its group's overall
share (``--prior`` answers' weight) so a small block does not claim 0 % or 100 %. A dev
answer weighs ``--dev-weight`` (the conversation is the kind of data recall is judged on,
and it grades by token F1 where the others grade by containment).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polyg_bench.answers import Graded, calibration_table, expected_calibration_error, grade
from polyg_core.recall.answer.calibration import calibrated_from_factors, group_keys, route_of

TABLE = Path("packages/polyg-core/src/polyg_core/recall/answer/calibration_table.py")


@dataclass(frozen=True)
class Sample:
    """One graded answer: where it came from, its route, raw confidence and factors."""

    source: str
    route: str
    raw: float
    right: bool
    factors: dict[str, float]

    @property
    def keys(self) -> list[str]:
        """The calibration groups this answer belongs to, most specific first."""
        return group_keys(
            self.route,
            self.factors.get("quoted") == 1.0,
            self.factors.get("shaped", 1.0) == 1.0,
        )


def _samples(source: str, rows: Sequence[tuple[dict[str, float], bool]]) -> list[Sample]:
    out: list[Sample] = []
    for factors, right in rows:
        if "raw" not in factors:
            raise SystemExit(
                f"{source}: an answer without a raw confidence in its factors; rerun the "
                "bench with this version of polyg"
            )
        out.append(Sample(source, route_of(factors), float(factors["raw"]), right, factors))
    return out


def load_scenarios(path: Path) -> list[Sample]:
    data = json.loads(path.read_text())
    return _samples("scenarios", [(a["factors"], bool(a["right"])) for a in data["answers"]])


def load_updates(path: Path) -> list[Sample]:
    data = json.loads(path.read_text())
    return _samples("updates", [(r["factors"], bool(r["answer_right"])) for r in data["results"]])


def load_dev(path: Path) -> tuple[list[Sample], list[Sample]]:
    """The dev conversation's graded answers: (even-numbered, odd-numbered) questions."""
    data = json.loads(path.read_text())
    graded = [q for q in data["questions"] if q.get("gold")]
    rows = [(q["factors"], grade(q["category"], q["answer"], q["gold"], 0.0).right) for q in graded]
    return _samples("dev", rows[0::2]), _samples("dev", rows[1::2])


@dataclass
class _Block:
    raw_sum: float  # weighted
    right: float  # weighted
    n: float  # total weight

    @property
    def share(self) -> float:
        return self.right / self.n

    def merge(self, other: _Block) -> _Block:
        return _Block(self.raw_sum + other.raw_sum, self.right + other.right, self.n + other.n)


def _pav(blocks: list[_Block]) -> list[_Block]:
    """Pool adjacent violators: merge neighbours until the shares never fall."""
    out: list[_Block] = []
    for b in blocks:
        out.append(b)
        while len(out) > 1 and out[-2].share >= out[-1].share:
            last = out.pop()
            out[-1] = out[-1].merge(last)
    return out


def _merge_small(blocks: list[_Block], min_block: float) -> list[_Block]:
    blocks = list(blocks)
    while len(blocks) > 1 and (small := min(blocks, key=lambda b: b.n)).n < min_block:
        i = blocks.index(small)
        j = i - 1 if i == len(blocks) - 1 else i + 1
        if 0 < i < len(blocks) - 1:
            # The neighbour whose share is closer.
            left, right = blocks[i - 1], blocks[i + 1]
            j = i - 1 if abs(left.share - small.share) <= abs(right.share - small.share) else i + 1
        lo, hi = min(i, j), max(i, j)
        blocks[lo : hi + 1] = [blocks[lo].merge(blocks[hi])]
    return blocks


def fit_group(
    samples: Sequence[Sample],
    weights: Mapping[str, float],
    min_block: int,
    prior_weight: float,
) -> tuple[tuple[float, float], ...]:
    """Isotonic knots (mean raw, shrunk share right) for one group's samples, each
    weighted by its source's weight."""
    ordered = sorted(samples, key=lambda s: s.raw)
    w = [weights.get(s.source, 1.0) for s in ordered]
    prior = sum(wi * s.right for wi, s in zip(w, ordered, strict=True)) / sum(w)
    blocks = _pav(
        [_Block(wi * s.raw, wi * float(s.right), wi) for wi, s in zip(w, ordered, strict=True)]
    )
    blocks = _pav(_merge_small(blocks, min_block))
    knots: list[tuple[float, float]] = []
    for b in blocks:
        share = (b.right + prior_weight * prior) / (b.n + prior_weight)
        if knots and share < knots[-1][1]:
            share = knots[-1][1]  # shrinking towards the prior may not undo the order
        knots.append((round(b.raw_sum / b.n, 4), round(share, 4)))
    return tuple(knots)


def platt_group(
    samples: Sequence[Sample], weights: Mapping[str, float], prior_weight: float
) -> tuple[tuple[float, float], ...]:
    """Platt scaling: share right = 1 / (1 + exp(-(a * raw + b))), fitted by Newton's
    method on the weighted log loss (with `prior_weight` pseudo-answers at the group's
    share so a group all right or all wrong stays finite), written out as knots every
    0.05 of raw confidence."""
    w = [weights.get(s.source, 1.0) for s in samples]
    prior = sum(wi * s.right for wi, s in zip(w, samples, strict=True)) / sum(w)
    xs = [s.raw for s in samples] + [0.0, 1.0]
    ys = [float(s.right) for s in samples] + [prior, prior]
    ws = [*w, prior_weight / 2, prior_weight / 2]
    a, b = 0.0, math.log((prior + 1e-3) / (1 - prior + 1e-3))
    for _ in range(100):
        ga = gb = haa = hab = hbb = 0.0
        for x, y, wi in zip(xs, ys, ws, strict=True):
            p = 1.0 / (1.0 + math.exp(-(a * x + b)))
            ga += wi * (p - y) * x
            gb += wi * (p - y)
            h = wi * p * (1 - p)
            haa += h * x * x
            hab += h * x
            hbb += h
        det = haa * hbb - hab * hab + 1e-9
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        a, b = a - da, b - db
        if abs(da) + abs(db) < 1e-7:
            break
    return tuple(
        (round(x / 20, 2), round(1.0 / (1.0 + math.exp(-(a * x / 20 + b))), 4)) for x in range(21)
    )


def fit(
    samples: Sequence[Sample],
    weights: Mapping[str, float],
    min_group: int,
    min_block: int,
    prior_weight: float,
    method: str = "platt",
) -> dict[str, tuple[tuple[float, float], ...]]:
    """A table per group (see `group_keys`) whose samples weigh at least `min_group`."""
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        for key in s.keys:
            groups.setdefault(key, []).append(s)
    return {
        key: platt_group(mine, weights, prior_weight)
        if method == "platt"
        else fit_group(mine, weights, min_block, prior_weight)
        for key, mine in sorted(groups.items())
        if sum(weights.get(s.source, 1.0) for s in mine) >= min_group or key == "all"
    }


def graded(
    samples: Sequence[Sample], table: Mapping[str, Sequence[tuple[float, float]]] | None
) -> list[Graded]:
    """The samples with their confidence under `table` (None: the raw confidence)."""
    out: list[Graded] = []
    for s in samples:
        conf = s.raw if table is None else calibrated_from_factors(s.factors, table)
        out.append(Graded(s.source, conf if conf is not None else s.raw, None, s.right))
    return out


def _report(title: str, rows: list[Graded]) -> dict[str, Any]:
    table = calibration_table(rows)
    ece = expected_calibration_error(rows)
    print(f"\n{title}: {len(rows)} answers, {sum(g.right for g in rows)} right, ECE {ece}")
    print("| confidence | n | right | accuracy | mean_confidence |")
    print("|---|---|---|---|---|")
    for r in table:
        if r["n"]:
            print(
                f"| {r['confidence']} | {r['n']} | {r['right']} | {r['accuracy']} "
                f"| {r['mean_confidence']} |"
            )
    overconfident = [
        r["confidence"]
        for r in table
        if r["n"] and r["mean_confidence"] >= 0.8 and (r["accuracy"] or 0.0) < 0.8
    ]
    if overconfident:
        print(f"buckets at 0.8 or above right less than 80 %: {', '.join(overconfident)}")
    return {"ece": ece, "table": table}


def write_table(
    table: Mapping[str, Sequence[tuple[float, float]]], counts: Mapping[str, int], path: Path
) -> None:
    lines = [
        '"""Generated by scripts/fit_calibration.py; do not edit by hand (refit instead).',
        "",
        "Per answer route, (raw confidence, share right) knots, raw ascending. Fitted on "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
        + " answers.",
        '"""',
        "",
        "KNOTS: dict[str, tuple[tuple[float, float], ...]] = {",
    ]
    for route, knots in table.items():
        pairs = ", ".join(f"({x}, {y})" for x, y in knots)
        lines.append(f"    {route!r}: ({pairs},),")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--scenarios", type=Path, required=True)
    parser.add_argument("--updates", type=Path, required=True)
    parser.add_argument("--dev", type=Path, required=True)
    parser.add_argument("--method", choices=("platt", "isotonic"), default="platt")
    parser.add_argument("--min-group", type=int, default=12)
    parser.add_argument("--min-block", type=int, default=6)
    parser.add_argument("--prior", type=float, default=2.0)
    parser.add_argument(
        "--dev-weight",
        type=float,
        default=10.0,
        help="Weight of a dev-conversation answer against a scenario's or update case's "
        "(their answers are graded by containment, the conversation's by token F1).",
    )
    parser.add_argument("--out", type=Path, default=TABLE)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()

    dev_fit, dev_check = load_dev(args.dev)
    fit_on = [*load_scenarios(args.scenarios), *load_updates(args.updates), *dev_fit]
    weights = {"dev": args.dev_weight}
    table = fit(fit_on, weights, args.min_group, args.min_block, args.prior, args.method)
    counts = {
        src: sum(1 for s in fit_on if s.source == src) for src in ("scenarios", "updates", "dev")
    }
    print("fitted on:", counts, "routes:", {r: len(k) for r, k in table.items()})
    _report("held out (dev, odd questions), raw confidence", graded(dev_check, None))
    _report("held out (dev, odd questions), calibrated", graded(dev_check, table))
    _report("fitted on, calibrated", graded(fit_on, table))
    if not args.dry_run:
        write_table(table, counts, args.out)
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
