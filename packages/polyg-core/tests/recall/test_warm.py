"""warm_recall loads what a first recall would otherwise import mid-question."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import sys
import polyg_core.recall.pipeline
before = {m for m in ("scipy.sparse", "dateparser") if m in sys.modules}
from polyg_core.recall.warm import warm_recall
warm_recall()
after = {m for m in ("scipy.sparse", "dateparser") if m in sys.modules}
print(sorted(before), sorted(after))
"""


def test_a_new_process_loads_pagerank_and_dateparser_only_when_warmed() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[] ['dateparser', 'scipy.sparse']", done.stderr


_FREEZE_PROBE = """
import gc, weakref
from polyg_core.recall.warm import freeze_heap

class Node:
    pass

kept = Node()
kept.me = kept  # a cycle alive at start-up
left = Node()
left.me = left
gone_before = weakref.ref(left)
del left  # garbage before the freeze: collected by it, not frozen
freeze_heap()
frozen = gc.get_freeze_count()
later = Node()
later.me = later
gone_after = weakref.ref(later)
del later  # garbage made after the freeze: full passes still collect it
for _ in range(20_000):  # young passes still run on their own, less often
    cycle = Node()
    cycle.me = cycle
print(gc.get_threshold()[0], gc.get_count()[0] < 10_000)
gc.collect()
print(frozen > 0, gone_before() is None, gone_after() is None, kept.me is kept)
"""


def test_freezing_the_heap_collects_its_garbage_first_and_what_comes_after_as_before() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FREEZE_PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip().splitlines() == ["10000 True", "True True True True"], done.stderr
