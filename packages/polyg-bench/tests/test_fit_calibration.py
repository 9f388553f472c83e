"""scripts/fit_calibration.py on invented graded answers: every table it fits is monotone
and bounded, a small group leans on its parent, an answer weaker than any a group was
fitted on does not get the group's share, and the held-out figure never grades a
question with a table fitted on it."""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from types import ModuleType

from polyg_core.recall.answer.calibration import calibrated
from polyg_core.recall.answer.confidence import Evidence, factors_of
from polyg_core.testing.scripts import load_script

ROOT = Path(__file__).resolve().parents[3]


def _script() -> ModuleType:
    return load_script(ROOT / "scripts" / "fit_calibration.py")


fc = _script()


def sample(source: str, raw: float, right: bool, **evidence: object) -> object:
    factors = factors_of(Evidence(**evidence))  # type: ignore[arg-type]
    factors["raw"] = raw
    return fc.Sample(source, raw, right, factors)


def invented(seed: int) -> list[object]:
    """Answers whose chance of being right rises with raw confidence, in a few groups."""
    rng = random.Random(seed)
    out: list[object] = []
    kinds = [
        {"route": "when", "quoted": True, "spoken": True},
        {"route": "who_what", "quoted": True, "spoken": True, "direct": False},
        {"route": "who_what", "quoted": False},
        {"route": "update", "quoted": True},
    ]
    for _ in range(240):
        kind = rng.choice(kinds)
        raw = rng.random()
        out.append(sample(rng.choice(["dev", "updates"]), raw, rng.random() < raw, **kind))
    return out


def test_every_fitted_table_is_monotone_and_bounded() -> None:
    for seed in range(5):
        table = fc.fit(invented(seed), 3, 2.0, 6)
        fc.check(table)  # raises when not
        for key in table:
            values = [calibrated(r / 50, [key], table) for r in range(51)]
            assert values == sorted(values), key
            assert all(fc.BOUNDS[0] <= v <= fc.BOUNDS[1] for v in values), key


def test_a_small_group_leans_on_its_parent() -> None:
    # Two right answers alone would claim the ceiling; beside a route that is seldom
    # right they are shrunk towards it.
    many = [sample("dev", 0.5, False, route="when", quoted=True, spoken=True) for _ in range(30)]
    few = [
        sample("dev", 0.5, True, route="when", quoted=True, spoken=True, direct=False)
        for _ in range(3)
    ]
    table = fc.fit([*many, *few], 3, 2.0, 6)
    share = calibrated(0.5, ["when/p/t"], table)
    assert 0.3 < share < 0.95


def test_weaker_evidence_than_any_fitted_does_not_get_the_groups_share() -> None:
    strong = [sample("scenarios", 0.7 + i / 100, True, route="who_what") for i in range(12)]
    table = fc.fit(strong, 3, 2.0, 6)
    keys = ["who_what/g/s", "who_what/g", "g", "all"]
    assert calibrated(0.75, keys, table) > 0.8
    assert calibrated(0.2, keys, table) < 0.4


def test_each_dev_half_is_graded_by_a_table_fitted_without_it() -> None:
    # A dev set whose halves disagree completely: a table fitted on a half would grade
    # that half perfectly; graded by the other half's table, each half is far off.
    dev = [
        sample("dev", 0.6, i % 2 == 0, route="when", quoted=True, spoken=True) for i in range(40)
    ]
    args = argparse.Namespace(min_group=3, prior=2.0, min_block=6)
    even, odd = fc.cross_fitted(dev, [], args)
    assert all(g.right for g in even) and not any(g.right for g in odd)
    assert all(g.confidence < 0.2 for g in even)
    assert all(g.confidence > 0.8 for g in odd)


def test_each_fold_is_graded_by_a_table_fitted_without_it() -> None:
    # Folds whose answers disagree with all the others: graded by a table fitted on the
    # other folds, each fold is far off; a table that had seen them would not be.
    folds = [i % 4 for i in range(80)]
    dev = [sample("dev", 0.6, f == 0, route="when", quoted=True, spoken=True) for f in folds]
    args = argparse.Namespace(min_group=3, prior=2.0, min_block=6)
    held = fc.partitioned(dev, [], args, folds)
    assert len(held) == len(dev)
    assert [g.right for g in held] == [f == 0 for f in folds]  # question order kept
    assert all(g.confidence < 0.2 for g, f in zip(held, folds, strict=True) if f == 0)


def test_the_repeated_cross_fit_is_seeded() -> None:
    args = argparse.Namespace(min_group=3, prior=2.0, min_block=6)
    dev = [s for s in invented(7) if s.source == "dev"]  # type: ignore[attr-defined]
    first = fc.repeated_cross_fit(dev, [], args, 2, 3)
    assert first == fc.repeated_cross_fit(dev, [], args, 2, 3)
    assert len(first) == 3 and all(0.0 <= e <= 1.0 for e in first)


def test_the_noise_floor_is_what_exact_confidences_show() -> None:
    # Confidences of 0 and 1 are never off; 0.5 on ten answers is off by chance.
    sure = [fc.Graded("dev", c, None, c == 1.0) for c in (0.0, 1.0) * 20]
    assert fc.noise_floor(sure, 50) == 0.0
    coin = [fc.Graded("dev", 0.5, None, False) for _ in range(10)]
    assert 0.05 < fc.noise_floor(coin, 200) < 0.3


def test_answers_that_found_nothing_get_a_share_of_their_own() -> None:
    # Routes whose answers are mostly right do not lend their share to "I don't know".
    found = [sample("updates", 0.6, True, route="who_what", quoted=True) for _ in range(40)]
    unknown = [
        sample("scenarios", 0.05, False, route="who_what", quoted=True, found=False)
        for _ in range(20)
    ]
    table = fc.fit([*found, *unknown], 3, 2.0, 6)
    assert calibrated(0.05, ["none", "all"], table) < 0.1
    assert calibrated(0.6, ["who_what/q/s", "who_what/q", "q", "all"], table) > 0.8
