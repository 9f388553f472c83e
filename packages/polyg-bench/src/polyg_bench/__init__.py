"""Benchmark runners behind `polyg bench`: generator, scale, load, peers, retrieval quality.

Benchmarks report timings; they are never assertions in tests.
"""

from polyg_bench.dataset import Dataset, load_dataset
from polyg_bench.generate import Generated, generate
from polyg_bench.stats import Timing, percentile

__all__ = ["Dataset", "Generated", "Timing", "generate", "load_dataset", "percentile"]
