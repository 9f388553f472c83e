"""Refit the confidence calibration (`polyg_core.recall.answer.calibration_table`).

Recall's raw confidence orders answers by their evidence; the calibration maps it to how
often such answers were right: a small logistic model, one slope on the raw confidence
plus a log-odds term per group the answer belongs to (route, what it rests on, its form,
read as a hierarchy: `calibration.group_keys`). This script fits that model on the team's
own data:

* the shipped scenarios' questions and probes (`polyg bench answers`),
* the update set (`polyg bench updates`),
* the dev conversation's questions (`polyg bench retrieval`).

Right means: token F1 >= 0.5 against the gold answer (dev conversation), every expected
text and no unwanted one (scenarios), the current value with the stale one only as
history (update set).

The fit is penalised logistic regression (Newton's method): each group's term has a
Gaussian prior at zero (``--penalty``, the prior's precision: 0.5 is a standard deviation
of about 1.4 in log-odds), so a group of a few answers stays near its parents (the
source, the source with its route or form) and a group never seen adds nothing. The slope
is shared by all groups and never negative (fitted below zero, it is fixed at zero): the
mapping is monotone in the raw confidence and bounded by the raw confidence's own bounds.

It never reports a figure on questions it was fitted on as held out. The dev
conversation is split in two halves (even- and odd-numbered questions): each half is
predicted by a model fitted on the other half plus the scenarios and the update set. One
split's ECE on 150 answers moves by about 0.02 with the split, so the script also prints
the mean and spread over 40 seeded random partitions into two folds and into five (each
fold predicted by a model fitted on the others): compare fits on those. It does the same
with whole sessions of the conversation dealt to the folds (questions grouped by the
session of their first evidence turn), nearer to meeting a conversation not seen. It also prints
the noise floor: the ECE the written model's confidences would show on the dev answers if
each were exactly right (outcomes drawn from them; about 0.04 on 150 answers). The model
written is then fitted on all of it; `polyg bench retrieval` on the dev conversation
afterwards measures it on questions it was fitted on, which the docs say.

One command refits (from the repository root; about six minutes on a quiet machine, the
benches run in temporary namespaces)::

    uv run python scripts/fit_calibration.py --run

or, with benchmark output already written by a version that records the factors::

    uv run python scripts/fit_calibration.py --scenarios S.json --updates U.json --dev D.json

``--dry-run`` only prints. The benches record each answer's raw confidence and factors,
so they can run with any model in place.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from polyg_bench.answers import Graded, calibration_table, expected_calibration_error, grade
from polyg_core.recall.answer.calibration import Calibration, calibrated_from_factors, keys_of
from polyg_core.recall.answer.confidence import CEILING, FLOOR

TABLE = Path("packages/polyg-core/src/polyg_core/recall/answer/calibration_table.py")
DEV = Path("../shared/fixtures/dev-conversation/conversation.json")
BOUNDS = (FLOOR, CEILING)  # no group claims never or always: the raw confidence's bounds


@dataclass(frozen=True)
class Sample:
    """One graded answer: where it came from, its raw confidence, factors, and weight."""

    source: str
    raw: float
    right: bool
    factors: dict[str, float]
    weight: float = 1.0

    @property
    def keys(self) -> list[str]:
        """The calibration groups this answer belongs to, most specific first."""
        return keys_of(self.factors)


def _samples(source: str, rows: Sequence[tuple[dict[str, float], bool]]) -> list[Sample]:
    out: list[Sample] = []
    for factors, right in rows:
        if "raw" not in factors:
            raise SystemExit(
                f"{source}: an answer without a raw confidence in its factors; rerun the "
                "bench with this version of polyg"
            )
        out.append(Sample(source, float(factors["raw"]), right, factors))
    return out


def load_scenarios(path: Path) -> list[Sample]:
    data = json.loads(path.read_text())
    return _samples("scenarios", [(a["factors"], bool(a["right"])) for a in data["answers"]])


def load_updates(path: Path) -> list[Sample]:
    data = json.loads(path.read_text())
    return _samples("updates", [(r["factors"], bool(r["answer_right"])) for r in data["results"]])


def load_dev(path: Path) -> list[Sample]:
    """The dev conversation's graded answers, in question order."""
    data = json.loads(path.read_text())
    graded = [q for q in data["questions"] if q.get("gold")]
    rows = [(q["factors"], grade(q["category"], q["answer"], q["gold"], 0.0).right) for q in graded]
    return _samples("dev", rows)


def dev_sessions(path: Path) -> list[str]:
    """Per graded dev question (in question order), the session its first evidence turn
    belongs to (turn ids "conversation:session:turn"); a question without evidence is a
    unit of its own. Questions about one session share people, topic and days: held out
    together, they say how the model does on talk it has not seen."""
    data = json.loads(path.read_text())
    graded = [q for q in data["questions"] if q.get("gold")]
    return [
        str(q["evidence"][0]).rsplit(":", 1)[0] if q.get("evidence") else f"question {i}"
        for i, q in enumerate(graded)
    ]


def weighed(samples: Sequence[Sample], dev_weight: float) -> list[Sample]:
    """The samples with their weights: 1 for a dev answer, 1 / dev_weight otherwise."""
    return [
        Sample(s.source, s.raw, s.right, s.factors, 1.0 if s.source == "dev" else 1 / dev_weight)
        for s in samples
    ]


CENTER = 0.4  # the raw confidence the groups' terms are read at
SLOPE_PENALTY = 0.01  # the slope and the pooled term are all but free
_NEWTON_STEPS = 100


def _design(
    samples: Sequence[Sample], keys: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One row per answer: a 1 for each group it belongs to, then raw - CENTER; its
    outcome and weight."""
    column = {k: i for i, k in enumerate(keys)}
    x = np.zeros((len(samples), len(keys) + 1))
    for row, s in enumerate(samples):
        for key in s.keys:
            x[row, column[key]] = 1.0
        x[row, -1] = s.raw - CENTER
    y = np.array([1.0 if s.right else 0.0 for s in samples])
    w = np.array([s.weight for s in samples])
    return x, y, w


def _newton(x: np.ndarray, y: np.ndarray, w: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """The penalised maximum-likelihood coefficients of a logistic model."""
    beta = np.zeros(x.shape[1])
    for _ in range(_NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (w * (p - y)) + penalty * beta
        hessian = (x.T * (w * p * (1.0 - p))) @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        beta = beta - step
        if float(np.abs(step).max()) < 1e-9:
            break
    return beta


def fit(samples: Sequence[Sample], penalty: float) -> Calibration:
    """The calibration model fitted on `samples`: a log-odds term per group any of them
    belongs to, each with a Gaussian prior at zero of precision `penalty` (the pooled
    `all` term nearly free), and one slope on the raw confidence, never negative."""
    if not samples:
        raise SystemExit("nothing to fit: no graded answers")
    if penalty <= 0:
        raise SystemExit(f"--penalty must be > 0 (a prior's precision), got {penalty}")
    keys = sorted({k for s in samples for k in s.keys})
    x, y, w = _design(samples, keys)
    prior = np.array([SLOPE_PENALTY if k == "all" else penalty for k in keys] + [SLOPE_PENALTY])
    beta = _newton(x, y, w, prior)
    if beta[-1] < 0:
        # More evidence never calibrates lower: fitted falling, the slope is fixed at zero.
        beta = np.append(_newton(x[:, :-1], y, w, prior[:-1]), 0.0)
    effects = {k: round(float(b), 4) for k, b in zip(keys, beta[:-1], strict=True)}
    model = Calibration(effects, round(float(beta[-1]), 4), CENTER)
    check(model)
    return model


def check(model: Calibration) -> None:
    """The model is monotone in the raw confidence and bounded for every group it knows;
    else the fit is wrong and nothing is written."""
    for key in model.effects:
        values = [model.share(r / 20, [key]) for r in range(21)]
        if values != sorted(values):
            raise SystemExit(f"group {key!r}: the share falls as raw confidence rises")
        if not all(BOUNDS[0] <= v <= BOUNDS[1] for v in values):
            raise SystemExit(f"group {key!r}: a share outside {BOUNDS}")


def share_of(samples: Sequence[Sample]) -> float:
    """The weighted share right."""
    return sum(s.weight * s.right for s in samples) / sum(s.weight for s in samples)


def graded(samples: Sequence[Sample], model: Calibration | None) -> list[Graded]:
    """The samples with their confidence under `model` (None: the raw confidence)."""
    out: list[Graded] = []
    for s in samples:
        conf = s.raw if model is None else calibrated_from_factors(s.factors, model)
        out.append(Graded(s.source, conf if conf is not None else s.raw, None, s.right))
    return out


def cross_fitted(
    dev: Sequence[Sample], others: Sequence[Sample], args: argparse.Namespace
) -> tuple[list[Graded], list[Graded]]:
    """Each half of the dev conversation graded by a model fitted on the other half and
    the other sources: (even-numbered questions, odd-numbered questions)."""
    even, odd = list(dev[0::2]), list(dev[1::2])
    on_odd = fit([*others, *odd], args.penalty)
    on_even = fit([*others, *even], args.penalty)
    return graded(even, on_odd), graded(odd, on_even)


def partitioned(
    dev: Sequence[Sample], others: Sequence[Sample], args: argparse.Namespace, folds: list[int]
) -> list[Graded]:
    """Each dev answer graded by a model fitted on the other folds' dev answers and the
    other sources; `folds[i]` is answer i's fold. In question order."""
    out: list[Graded | None] = [None] * len(dev)
    for fold in sorted(set(folds)):
        held = [i for i, f in enumerate(folds) if f == fold]
        rest = [s for s, f in zip(dev, folds, strict=True) if f != fold]
        model = fit([*others, *rest], args.penalty)
        for i, g in zip(held, graded([dev[i] for i in held], model), strict=True):
            out[i] = g
    return [g for g in out if g is not None]


def repeated_cross_fit(
    dev: Sequence[Sample],
    others: Sequence[Sample],
    args: argparse.Namespace,
    folds: int,
    repeats: int,
    units: Sequence[str] | None = None,
) -> list[float]:
    """The held-out ECE of `repeats` random partitions of the dev answers into `folds`
    folds (seeded: the same figures on the same bench output). One partition's ECE on
    150 answers moves by about 0.02 with the partition; their mean says more. With
    `units` (one per answer, e.g. its session), whole units are dealt to the folds, so
    answers of one unit are always held out together."""
    names = sorted(set(units)) if units is not None else [str(i) for i in range(len(dev))]
    unit_of = list(units) if units is not None else names
    out: list[float] = []
    for seed in range(repeats):
        order = list(names)
        random.Random(seed).shuffle(order)
        fold_of_unit = {name: rank % folds for rank, name in enumerate(order)}
        fold_of = [fold_of_unit[u] for u in unit_of]
        ece = expected_calibration_error(partitioned(dev, others, args, fold_of))
        out.append(ece if ece is not None else 0.0)
    return out


def noise_floor(rows: Sequence[Graded], repeats: int = 500) -> float:
    """The mean ECE of these confidences if they were exactly right: each answer's outcome
    drawn with its own confidence, `repeats` times (seeded). On 150 answers a perfectly
    calibrated table still shows about this much; a held-out figure near it is as good as
    the data can show."""
    rng = random.Random(0)
    total = 0.0
    for _ in range(repeats):
        drawn = [Graded(g.category, g.confidence, None, rng.random() < g.confidence) for g in rows]
        total += expected_calibration_error(drawn) or 0.0
    return round(total / repeats, 4)


def _report(title: str, rows: list[Graded]) -> dict[str, Any]:
    table = calibration_table(rows)
    ece = expected_calibration_error(rows)
    brier = sum((g.confidence - g.right) ** 2 for g in rows) / len(rows)
    print(
        f"\n{title}: {len(rows)} answers, {sum(g.right for g in rows)} right, ECE {ece}, "
        f"Brier {brier:.4f}"
    )
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


def write_table(model: Calibration, counts: Mapping[str, int], path: Path) -> None:
    lines = [
        '"""Generated by scripts/fit_calibration.py; do not edit by hand (refit instead).',
        "",
        "The calibration model (`calibration.Calibration`): log-odds = SLOPE x (raw - CENTER)",
        "+ the EFFECTS of the answer's groups (`calibration.group_keys`). Fitted on",
        ", ".join(f"{k} {v}" for k, v in counts.items()) + " answers.",
        '"""',
        "",
        f"CENTER = {model.center}",
        f"SLOPE = {model.slope}",
        "EFFECTS: dict[str, float] = {",
    ]
    # Written as the formatter writes it, so the file passes `ruff format --check`.
    lines.extend(f'    "{key}": {value},' for key, value in sorted(model.effects.items()))
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


def groups_report(samples: Sequence[Sample], model: Calibration) -> None:
    """Per most specific group: answers, right, mean raw and mean calibrated confidence."""
    by: dict[str, list[Sample]] = {}
    for s in samples:
        by.setdefault(s.keys[0], []).append(s)
    print("\n| group | n | right | mean raw | mean calibrated |")
    print("|---|---|---|---|---|")
    for key in sorted(by):
        rows = by[key]
        conf = [g.confidence for g in graded(rows, model)]
        print(
            f"| {key} | {len(rows)} | {sum(s.right for s in rows)} "
            f"| {sum(s.raw for s in rows) / len(rows):.3f} | {sum(conf) / len(conf):.3f} |"
        )
    print(f"slope {model.slope} per unit of raw confidence, read at {model.center}")


def run_benches(folder: Path, dev: Path) -> tuple[Path, Path, Path]:
    """Run the three benches with `--json` into `folder` (rule-based path)."""
    paths = (folder / "scenarios.json", folder / "updates.json", folder / "dev.json")
    commands = [
        ["polyg", "bench", "answers", "--json", str(paths[0])],
        ["polyg", "bench", "updates", "--size", "small", "--json", str(paths[1])],
        ["polyg", "bench", "retrieval", str(dev), "--json", str(paths[2])],
    ]
    for command in commands:
        print("running:", " ".join(command), file=sys.stderr)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="Run the three benches first.")
    parser.add_argument("--keep", type=Path, help="With --run: keep the bench output here.")
    parser.add_argument("--dev-conversation", type=Path, default=DEV)
    parser.add_argument("--scenarios", type=Path)
    parser.add_argument("--updates", type=Path)
    parser.add_argument("--dev", type=Path)
    parser.add_argument(
        "--penalty",
        type=float,
        default=0.5,
        help="The precision of each group's prior at zero log-odds (more: nearer the parents).",
    )
    parser.add_argument(
        "--dev-weight",
        type=float,
        default=1.0,
        help="How many scenario or update answers weigh as much as one dev answer.",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=40,
        help="Random partitions of the dev answers for the repeated cross-fitted ECE.",
    )
    parser.add_argument("--out", type=Path, default=TABLE)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()

    if args.run:
        folder = args.keep or Path(tempfile.mkdtemp(prefix="polyg-calibration-"))
        folder.mkdir(parents=True, exist_ok=True)
        args.scenarios, args.updates, args.dev = run_benches(folder, args.dev_conversation)
    if not (args.scenarios and args.updates and args.dev):
        parser.error("give --run, or all of --scenarios, --updates and --dev")

    others = weighed(
        [*load_scenarios(args.scenarios), *load_updates(args.updates)], args.dev_weight
    )
    dev = weighed(load_dev(args.dev), args.dev_weight)
    counts = {"scenarios": 0, "updates": 0, "dev": len(dev)}
    for s in others:
        counts[s.source] += 1

    even, odd = cross_fitted(dev, others, args)
    _report("dev, raw confidence", graded(dev, None))
    _report("dev, held out (each half by a model fitted on the other)", [*even, *odd])
    _report("dev, even questions, held out", even)
    _report("dev, odd questions, held out", odd)
    print()
    sessions = dev_sessions(args.dev)
    for units, what in ((None, "questions"), (sessions, "whole sessions")):
        for folds in (2, 5):
            eces = repeated_cross_fit(dev, others, args, folds, args.repeats, units)
            mean = sum(eces) / len(eces)
            spread = (sum((e - mean) ** 2 for e in eces) / len(eces)) ** 0.5
            print(
                f"dev, held out by {folds}-fold cross-fitting of {what} over {len(eces)} "
                f"random partitions: mean ECE {mean:.4f} (sd {spread:.4f}, "
                f"min {min(eces):.4f}, max {max(eces):.4f})"
            )
    model = fit([*others, *dev], args.penalty)
    _report("dev, fitted on (the model written)", graded(dev, model))
    print(
        "noise floor: the ECE these confidences would show on the dev answers if they were "
        f"exactly right (outcomes drawn from them): {noise_floor(graded(dev, model))}"
    )
    _report("scenarios and update set, fitted on", graded(others, model))
    groups_report([*others, *dev], model)
    if not args.dry_run:
        write_table(model, counts, args.out)
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
