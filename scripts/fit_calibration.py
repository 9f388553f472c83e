"""Refit the confidence calibration (`polyg_core.recall.answer.calibration_table`).

Recall's raw confidence orders answers by their evidence; the calibration maps it, per
group of answers (route; what it rests on: the graphs, a quoted note, or words said in a
conversation; the asked value itself, a whole text, or not of the asked shape:
`calibration.keys_of`), to how often such answers were right.
This script fits that mapping on the team's own data:

* the shipped scenarios' questions and probes (`polyg bench answers`),
* the update set (`polyg bench updates`),
* the dev conversation's questions (`polyg bench retrieval`).

Right means: token F1 >= 0.5 against the gold answer (dev conversation), every expected
text and no unwanted one (scenarios), the current value with the stale one only as
history (update set).

It never reports a figure on questions it was fitted on as held out. The dev
conversation is split in two halves (even- and odd-numbered questions): each half is
predicted by a table fitted on the other half plus the scenarios and the update set, so
all 150 questions get a held-out confidence, and that is the ECE printed as held out.
One split's ECE on 150 answers moves by about 0.01 with the split, so the script also
prints the mean over 40 seeded random partitions into two folds and into five (each
fold predicted by a table fitted on the others): compare fits on those means. It also
prints the noise floor: the ECE the written table's confidences would show on the dev
answers if each were exactly right (outcomes drawn from them; about 0.04 on 150 answers).
The table written is then fitted on all of it (more answers per group for the
conversations it will meet); `polyg bench retrieval` on the dev conversation afterwards
measures that table on questions it was fitted on, which the docs say.

One command refits (from the repository root; about five minutes on a quiet machine,
the benches run in temporary namespaces)::

    uv run python scripts/fit_calibration.py --run

or, with benchmark output already written by a version that records the factors::

    uv run python scripts/fit_calibration.py --scenarios S.json --updates U.json --dev D.json

``--dry-run`` only prints. The benches record each answer's raw confidence and factors,
so they can run with any table in place.

The fit, per group: the share right (``--dev-weight`` can weigh a dev answer as several
scenario or update answers; by default all weigh the same, since the groups already tell
a conversation's turns from notes), shrunk towards its parent's share (route/source/form ->
route/source -> source -> all)
by ``--prior`` answers' worth, so a group of a few answers does not claim 0 % or 100 %.
A group whose answers weigh at least twice ``--min-block`` is also split by raw
confidence into isotonic blocks (pool-adjacent-violators) of at least that weight, each
shrunk the same way (so a split rests on the conversation answers, not on many
containment-graded ones); a smaller group has one share (``--min-block inf``: every group one share).
Every table written is checked monotone and bounded.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polyg_bench.answers import Graded, calibration_table, expected_calibration_error, grade
from polyg_core.recall.answer.calibration import calibrated_from_factors, keys_of
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


def weighed(samples: Sequence[Sample], dev_weight: float) -> list[Sample]:
    """The samples with their weights: 1 for a dev answer, 1 / dev_weight otherwise."""
    return [
        Sample(s.source, s.raw, s.right, s.factors, 1.0 if s.source == "dev" else 1 / dev_weight)
        for s in samples
    ]


@dataclass
class _Block:
    raw_sum: float  # weighted
    right: float  # weighted
    n: float  # total weight
    count: int  # answers

    @property
    def share(self) -> float:
        return self.right / self.n

    def merge(self, other: _Block) -> _Block:
        return _Block(
            self.raw_sum + other.raw_sum,
            self.right + other.right,
            self.n + other.n,
            self.count + other.count,
        )


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


def _shrunk(share: float, count: int, prior_share: float, prior_weight: float) -> float:
    # The weights mix the sources inside a group; how far a group's share is trusted
    # against its parent's depends on how many answers it has.
    shrunk = (count * share + prior_weight * prior_share) / (count + prior_weight)
    return round(min(BOUNDS[1], max(BOUNDS[0], shrunk)), 4)


def share_of(samples: Sequence[Sample]) -> float:
    """The weighted share right."""
    return sum(s.weight * s.right for s in samples) / sum(s.weight for s in samples)


def fit_group(
    samples: Sequence[Sample], prior_share: float, prior_weight: float, min_block: float
) -> tuple[tuple[float, float], ...]:
    """Knots (raw, share right) for one group: one share (the group's, shrunk towards
    `prior_share`), or isotonic blocks of at least `min_block` weight each (a dev answer
    weighs 1: a split by raw confidence needs that many conversation answers in each
    block, or many more of the others).

    The knots span the raw confidences the group was fitted on; below them the share falls
    linearly to `BOUNDS[0]` at raw 0, so an answer with weaker evidence than any fitted one
    is not given the group's share (above them it keeps the last share)."""
    ordered = sorted(samples, key=lambda s: s.raw)
    lo, hi = round(ordered[0].raw, 4), round(ordered[-1].raw, 4)
    if math.isinf(min_block) or sum(s.weight for s in samples) < 2 * min_block:
        share = _shrunk(share_of(samples), len(samples), prior_share, prior_weight)
        return _anchored([(lo, share), (hi, share)])
    blocks = _pav(
        [_Block(s.weight * s.raw, s.weight * float(s.right), s.weight, 1) for s in ordered]
    )
    blocks = _pav(_merge_small(blocks, min_block))
    knots: list[tuple[float, float]] = []
    for b in blocks:
        share = _shrunk(b.share, b.count, prior_share, prior_weight)
        if knots and share < knots[-1][1]:
            share = knots[-1][1]  # shrinking may not undo the order
        knots.append((round(b.raw_sum / b.n, 4), share))
    return _anchored([(lo, knots[0][1]), *knots, (hi, knots[-1][1])])


def _anchored(knots: list[tuple[float, float]]) -> tuple[tuple[float, float], ...]:
    """The knots with raw 0 anchored at the lowest share, one knot per raw value."""
    if knots[0][0] > 0.0:
        knots = [(0.0, BOUNDS[0]), *knots]
    out: list[tuple[float, float]] = []
    for x, y in knots:
        if out and x <= out[-1][0]:
            out[-1] = (out[-1][0], max(out[-1][1], y))
        else:
            out.append((x, y))
    return tuple(out)


def fit(
    samples: Sequence[Sample], min_group: int, prior_weight: float, min_block: float
) -> dict[str, tuple[tuple[float, float], ...]]:
    """A table per group of at least `min_group` answers (and always `all`), each shrunk
    towards its parent's share: the next key in the answers' chain (`group_keys`:
    route/source/form -> route/source -> source -> all)."""
    groups: dict[str, list[Sample]] = {}
    parent: dict[str, str] = {}
    depth: dict[str, int] = {}
    for s in samples:
        keys = s.keys
        for i, key in enumerate(keys):
            groups.setdefault(key, []).append(s)
            depth[key] = len(keys) - 1 - i
            if i + 1 < len(keys):
                parent[key] = keys[i + 1]
    shares: dict[str, float] = {}
    table: dict[str, tuple[tuple[float, float], ...]] = {}
    for key in sorted(groups, key=lambda k: (depth[k], k)):  # parents first
        mine = groups[key]
        prior = shares[parent[key]] if key in parent else share_of(mine)
        shares[key] = _shrunk(share_of(mine), len(mine), prior, prior_weight)
        if len(mine) >= min_group or key not in parent:
            table[key] = fit_group(mine, prior, prior_weight, min_block)
    check(table)
    return table


def check(table: Mapping[str, Sequence[tuple[float, float]]]) -> None:
    """Every group's knots ascend in raw confidence, never fall in share, and stay within
    `BOUNDS`; else the fit is wrong and nothing is written."""
    for key, knots in table.items():
        xs = [x for x, _ in knots]
        ys = [y for _, y in knots]
        if not knots or xs != sorted(xs) or ys != sorted(ys):
            raise SystemExit(f"group {key!r}: knots not monotone: {knots}")
        if not all(BOUNDS[0] <= y <= BOUNDS[1] for y in ys):
            raise SystemExit(f"group {key!r}: a share outside {BOUNDS}: {knots}")


def graded(
    samples: Sequence[Sample], table: Mapping[str, Sequence[tuple[float, float]]] | None
) -> list[Graded]:
    """The samples with their confidence under `table` (None: the raw confidence)."""
    out: list[Graded] = []
    for s in samples:
        conf = s.raw if table is None else calibrated_from_factors(s.factors, table)
        out.append(Graded(s.source, conf if conf is not None else s.raw, None, s.right))
    return out


def cross_fitted(
    dev: Sequence[Sample], others: Sequence[Sample], args: argparse.Namespace
) -> tuple[list[Graded], list[Graded]]:
    """Each half of the dev conversation graded by a table fitted on the other half and
    the other sources: (even-numbered questions, odd-numbered questions)."""
    even, odd = list(dev[0::2]), list(dev[1::2])
    on_odd = fit([*others, *odd], args.min_group, args.prior, args.min_block)
    on_even = fit([*others, *even], args.min_group, args.prior, args.min_block)
    return graded(even, on_odd), graded(odd, on_even)


def partitioned(
    dev: Sequence[Sample], others: Sequence[Sample], args: argparse.Namespace, folds: list[int]
) -> list[Graded]:
    """Each dev answer graded by a table fitted on the other folds' dev answers and the
    other sources; `folds[i]` is answer i's fold. In question order."""
    out: list[Graded | None] = [None] * len(dev)
    for fold in sorted(set(folds)):
        held = [i for i, f in enumerate(folds) if f == fold]
        rest = [s for s, f in zip(dev, folds, strict=True) if f != fold]
        table = fit([*others, *rest], args.min_group, args.prior, args.min_block)
        for i, g in zip(held, graded([dev[i] for i in held], table), strict=True):
            out[i] = g
    return [g for g in out if g is not None]


def repeated_cross_fit(
    dev: Sequence[Sample],
    others: Sequence[Sample],
    args: argparse.Namespace,
    folds: int,
    repeats: int,
) -> list[float]:
    """The held-out ECE of `repeats` random partitions of the dev answers into `folds`
    folds (seeded: the same figures on the same bench output). One partition's ECE on
    150 answers moves by about 0.01 with the partition; their mean says more."""
    out: list[float] = []
    for seed in range(repeats):
        order = list(range(len(dev)))
        random.Random(seed).shuffle(order)
        fold_of = [0] * len(dev)
        for rank, i in enumerate(order):
            fold_of[i] = rank % folds
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
        "Per answer group (`calibration.keys_of`), (raw confidence, share right) knots, raw",
        "ascending. Fitted on " + ", ".join(f"{k} {v}" for k, v in counts.items()) + " answers.",
        '"""',
        "",
        "KNOTS: dict[str, tuple[tuple[float, float], ...]] = {",
    ]
    # Written as the formatter writes it (one knot a line), so the file passes
    # `ruff format --check` as generated.
    for key, knots in table.items():
        lines.append(f'    "{key}": (')
        lines.extend(f"        ({x}, {y})," for x, y in knots)
        lines.append("    ),")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


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
        "--min-group", type=int, default=3, help="Least answers of a group with a table."
    )
    parser.add_argument(
        "--prior",
        type=float,
        default=2.0,
        help="How many answers' worth the parent's share counts in a group's.",
    )
    parser.add_argument(
        "--min-block",
        type=float,
        default=6,
        help="Split a group by raw confidence into blocks of at least this weight.",
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
    _report("dev, held out (each half by a table fitted on the other)", [*even, *odd])
    _report("dev, even questions, held out", even)
    _report("dev, odd questions, held out", odd)
    print()
    for folds in (2, 5):
        eces = repeated_cross_fit(dev, others, args, folds, args.repeats)
        print(
            f"dev, held out by {folds}-fold cross-fitting over {len(eces)} random partitions: "
            f"mean ECE {sum(eces) / len(eces):.4f} (min {min(eces):.4f}, max {max(eces):.4f})"
        )
    table = fit([*others, *dev], args.min_group, args.prior, args.min_block)
    _report("dev, fitted on (the table written)", graded(dev, table))
    print(
        "noise floor: the ECE these confidences would show on the dev answers if they were "
        f"exactly right (outcomes drawn from them): {noise_floor(graded(dev, table))}"
    )
    _report("scenarios and update set, fitted on", graded(others, table))
    print(
        "\ngroups:",
        {k: v[0][1] if len(v) == 2 and v[0][1] == v[1][1] else v for k, v in table.items()},
    )
    if not args.dry_run:
        write_table(table, counts, args.out)
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
