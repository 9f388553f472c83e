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
