"""Latency of recall's non-LLM part (seed → expand → merge → linearize → synthesize) on a scenario.

    uv run python scripts/bench_recall.py [--scenario incident_response] [--rounds 20]
    uv run python scripts/bench_recall.py --entities 10000 [--rounds 20]

With `--entities N` the namespace is the `polyg bench scale` generator's (seed 7) and
each round asks the scale benchmark's three question forms about random entities.

Classification is excluded from the reported numbers (it is measured separately), so
the figures are the graph side of the pipeline on the rule-based path.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from polyg_bench.generate import START_MS, YEAR_MS, generate
from polyg_bench.scale import QUESTION_FORMS, when
from polyg_core.config import Settings, StorageSettings
from polyg_core.memory import Memory
from polyg_core.scenarios import load_scenario, read_scenario


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def _report(graph_ms: list[float], classify_ms: list[float], questions: int) -> None:
    print(f"{len(graph_ms)} recalls over {questions} questions")
    print(
        f"recall without classification: median {statistics.median(graph_ms):.1f} ms, "
        f"p95 {_pct(graph_ms, 95):.1f} ms"
    )
    print(
        f"rule-based classification: median {statistics.median(classify_ms):.1f} ms, "
        f"p95 {_pct(classify_ms, 95):.1f} ms"
    )


async def main(scenario: str, rounds: int, entities: int | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(storage=StorageSettings(data_dir=Path(tmp)))
        memory = await Memory.open(settings, namespace="bench_recall")
        try:
            started = time.perf_counter()
            reference = None
            if entities is None:
                await load_scenario(memory, scenario, "bench_recall")
                print(f"loaded {scenario} in {time.perf_counter() - started:.1f}s")
                questions = [q.input for q in read_scenario(scenario).queries]
            else:
                gen = await generate(
                    memory.store, "bench_recall", entities, dimension=memory.embedder.dimension
                )
                print(f"generated {gen.nodes} nodes, {gen.edges} edges in {gen.seconds:.1f}s")
                rng = random.Random(11)
                questions = [
                    rng.choice(QUESTION_FORMS).format(rng.choice(gen.entity_names))
                    for _ in range(10)
                ]
                reference = when(START_MS + YEAR_MS)
            await memory.recall(questions[0], reference_time=reference)  # warm the caches
            graph_ms: list[float] = []
            classify_ms: list[float] = []
            for _ in range(rounds):
                for q in questions:
                    r = await memory.recall(q, reference_time=reference)
                    classify_ms.append(r.timings_ms["classify"])
                    graph_ms.append(r.timings_ms["total"] - r.timings_ms["classify"])
            _report(graph_ms, classify_ms, len(questions))
        finally:
            await memory.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", default="incident_response")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--entities", type=int, default=None, help="generated namespace size")
    args = parser.parse_args()
    anyio.run(main, args.scenario, args.rounds, args.entities)
