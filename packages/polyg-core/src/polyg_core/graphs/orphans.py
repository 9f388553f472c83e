"""Which nodes exist only to be linked, and their removal once every link is gone.

Every delete and clear calls `remove_orphans`, so a node created implicitly as a
link target does not outlive the last thing that named it.
"""

from __future__ import annotations

from typing import Final

from polyg_core.storage.schema import CONCEPT, ENTITY
from polyg_core.storage.store import FalkorStore

ORIGIN_LABELS: Final = ((ENTITY, "ensure"), (CONCEPT, "implicit"))
"""Labels whose nodes `remove_orphans` may remove, and the `origin` that marks them."""


async def remove_orphans(store: FalkorStore, namespace: str) -> int:
    """Remove the implicitly created nodes that have no edge left; how many were removed.

    Entities created as cross-link targets (`origin = "ensure"`) and concepts
    created only because a memory named them (`origin = "implicit"`) go once they
    have no edge at all. Anything a user added explicitly stays, linked or not.
    """
    removed = 0
    for label, origin in ORIGIN_LABELS:
        res = await store.query(
            namespace,
            f"MATCH (n:{label}) WHERE n.origin = $o AND NOT (n)--() DELETE n",
            {"o": origin},
        )
        removed += res.nodes_deleted
    return removed
