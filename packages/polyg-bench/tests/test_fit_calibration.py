"""scripts/fit_calibration.py on invented graded answers: every model it fits is monotone
and bounded, a small group leans on its parents, weaker evidence gets less, and the
held-out figure never grades a question with a model fitted on it."""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
from pathlib import Path
from types import ModuleType

import pytest
from polyg_core.recall.answer.calibration import calibrated, group_keys
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


PENALTY = 0.5
ARGS = argparse.Namespace(penalty=PENALTY)


def test_every_fitted_model_is_monotone_and_bounded() -> None:
    for seed in range(5):
        model = fc.fit(invented(seed), PENALTY)
        fc.check(model)  # raises when not
        assert model.slope > 0  # the invented answers are right more often at higher raw
        for route in ("when", "who_what", "update", "why"):
            for source in ("p", "q", "g"):
                for form in ("s", "t", "u"):
                    keys = group_keys(route, source, form)
                    values = [calibrated(r / 50, keys, model) for r in range(51)]
                    assert values == sorted(values), keys
                    assert all(fc.BOUNDS[0] <= v <= fc.BOUNDS[1] for v in values), keys


def test_a_slope_fitted_falling_is_fixed_at_zero() -> None:
    # Answers that are right less often the more evidence they have: the model does not
    # follow (more evidence never calibrates lower), it gives the group's share.
    falling = [
        sample("dev", raw, raw < 0.5, route="when", quoted=True, spoken=True)
        for raw in (0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9)
        for _ in range(5)
    ]
    model = fc.fit(falling, PENALTY)
    assert model.slope == 0.0
    keys = group_keys("when", "p", "s")
    assert abs(calibrated(0.5, keys, model) - 0.5) < 0.05


def test_a_small_group_leans_on_its_parents() -> None:
    # Three right answers alone would claim the ceiling; beside many answers of the same
    # source and route that are seldom right, they are pulled towards those.
    many = [sample("dev", 0.5, False, route="when", quoted=True, spoken=True) for _ in range(30)]
    few = [
        sample("dev", 0.5, True, route="when", quoted=True, spoken=True, direct=False)
        for _ in range(3)
    ]
    model = fc.fit([*many, *few], PENALTY)
    share = calibrated(0.5, group_keys("when", "p", "t"), model)
    assert 0.2 < share < 0.9
    assert calibrated(0.5, group_keys("when", "p", "s"), model) < 0.1


def test_an_unseen_group_is_calibrated_as_its_source_and_form() -> None:
    # Whole turns handed over are seldom right whatever the route: a route never seen
    # with that form gets the form's share, not the route's.
    turns = [
        sample("dev", 0.5, False, route=route, quoted=True, spoken=True, direct=False)
        for route in ("who_what", "explore")
        for _ in range(20)
    ]
    values = [sample("dev", 0.5, True, route="when", quoted=True, spoken=True) for _ in range(20)]
    model = fc.fit([*turns, *values], PENALTY)
    assert calibrated(0.5, group_keys("when", "p", "t"), model) < 0.5
    assert calibrated(0.5, group_keys("when", "p", "s"), model) > 0.8


def test_weaker_evidence_gets_less() -> None:
    rising = [
        sample("scenarios", raw, raw > 0.5, route="who_what")
        for raw in (0.2, 0.3, 0.4, 0.6, 0.7, 0.8)
        for _ in range(6)
    ]
    model = fc.fit(rising, PENALTY)
    keys = group_keys("who_what", "g", "s")
    assert calibrated(0.75, keys, model) > 0.8
    assert calibrated(0.2, keys, model) < 0.2


def test_bad_fitting_input_is_refused_with_the_fix() -> None:
    with pytest.raises(SystemExit, match="penalty"):
        fc.fit(invented(1), 0.0)
    with pytest.raises(SystemExit, match="nothing to fit"):
        fc.fit([], PENALTY)


def test_each_dev_half_is_graded_by_a_model_fitted_without_it() -> None:
    # A dev set whose halves disagree completely: a model fitted on a half would grade
    # that half perfectly; graded by the other half's model, each half is far off.
    dev = [
        sample("dev", 0.6, i % 2 == 0, route="when", quoted=True, spoken=True) for i in range(40)
    ]
    even, odd = fc.cross_fitted(dev, [], ARGS)
    assert all(g.right for g in even) and not any(g.right for g in odd)
    assert all(g.confidence < 0.2 for g in even)
    assert all(g.confidence > 0.8 for g in odd)


def test_each_fold_is_graded_by_a_model_fitted_without_it() -> None:
    # Folds whose answers disagree with all the others: graded by a model fitted on the
    # other folds, each fold is far off; a model that had seen them would not be.
    folds = [i % 4 for i in range(80)]
    dev = [sample("dev", 0.6, f == 0, route="when", quoted=True, spoken=True) for f in folds]
    held = fc.partitioned(dev, [], ARGS, folds)
    assert len(held) == len(dev)
    assert [g.right for g in held] == [f == 0 for f in folds]  # question order kept
    assert all(g.confidence < 0.2 for g, f in zip(held, folds, strict=True) if f == 0)


def test_the_repeated_cross_fit_is_seeded() -> None:
    dev = [s for s in invented(7) if s.source == "dev"]  # type: ignore[attr-defined]
    first = fc.repeated_cross_fit(dev, [], ARGS, 2, 3)
    assert first == fc.repeated_cross_fit(dev, [], ARGS, 2, 3)
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
    model = fc.fit([*found, *unknown], PENALTY)
    assert calibrated(0.05, ["none", "all"], model) < 0.1
    assert calibrated(0.6, group_keys("who_what", "q", "s"), model) > 0.8


def test_the_written_model_reads_back_as_fitted(tmp_path: Path) -> None:
    model = fc.fit(invented(3), PENALTY)
    path = tmp_path / "calibration_table.py"
    fc.write_table(model, {"dev": 240}, path)
    spec = importlib.util.spec_from_file_location("written_table", path)
    assert spec is not None and spec.loader is not None
    written = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(written)
    assert model.slope == written.SLOPE
    assert model.center == written.CENTER
    assert dict(model.effects) == written.EFFECTS


def test_whole_units_are_held_out_together() -> None:
    # One session's answers are all right, the others' all wrong: dealt to the folds as a
    # whole, that session is always graded by a model that never saw it and is far off;
    # dealt answer by answer, every fold's model has seen some of it.
    units = [f"s{i % 4}" for i in range(40)]
    dev = [
        sample("dev", 0.6, unit == "s0", route="when", quoted=True, spoken=True) for unit in units
    ]
    together = fc.repeated_cross_fit(dev, [], ARGS, 2, 5, units)
    apart = fc.repeated_cross_fit(dev, [], ARGS, 2, 5)
    assert min(together) > max(apart) + 0.2


def test_sessions_are_read_from_the_first_evidence_turn(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    questions: list[dict[str, object]] = [
        {"gold": "x", "evidence": ["talk-1:D3:4", "talk-1:D5:1"]},
        {"gold": "y", "evidence": []},
        {"gold": None, "evidence": ["talk-1:D9:2"]},  # not graded, not counted
        {"gold": "z", "evidence": ["talk-1:D3:9"]},
    ]
    path.write_text(json.dumps({"questions": questions}))
    assert fc.dev_sessions(path) == ["talk-1:D3", "question 1", "talk-1:D3"]
