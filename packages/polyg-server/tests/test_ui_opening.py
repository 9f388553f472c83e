"""What the explorer first shows, in real headless Chromium: the graph that holds memory (or
a chooser when several do), drawn with labels that do not overlap.

Needs Debian's `chromium` (/usr/bin/chromium), Node.js, and the explorer's npm packages
(`npm ci` in packages/polyg-server/ui-src, which brings playwright-core); skipped with the
install lines when one is missing.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from polyg_cli.demo import SCENARIOS
from polyg_core.config import Settings
from polyg_core.providers.embeddings.base import Embedder
from polyg_core.scenarios import load_scenario
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import create_http_app
from polyg_server.testing import serving
from polyg_server.ui import queries
from polyg_server.ui.models import LAYERS

pytestmark = pytest.mark.anyio

UI_SRC = Path(__file__).resolve().parents[1] / "ui-src"
SCRIPT = UI_SRC / "e2e" / "opening.mjs"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM}: apt-get install -y chromium"
    if shutil.which("node") is None:
        return "no Node.js: install node (>= 18) and npm"
    if not (UI_SRC / "node_modules" / "playwright-core").is_dir():
        return f"playwright-core not installed: npm ci --prefix {UI_SRC}"
    return None


async def open_explorer(base: str, screenshot: Path | None, *, choose: bool = False) -> Any:
    args = ["node", str(SCRIPT), base, str(screenshot or "")]
    if choose:
        args.append("choose")
    with anyio.fail_after(150):
        done = await anyio.run_process(
            args, env={**os.environ, "CHROMIUM_PATH": CHROMIUM}, check=False
        )
    sys.stderr.write(done.stderr.decode(errors="replace"))
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    seen = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert "failure" not in seen, seen.get("failure")
    assert seen["errors"] == []
    return seen


def assert_labels_apart(labels: dict[str, Any]) -> None:
    """No two drawn labels (node or edge) share a pixel, every label was painted, and the
    label canvas holds no paint outside the labels' boxes (nor sigma's edge-label canvas
    any)."""
    boxes = [*labels["nodes"], *labels["edges"]]
    for a, b in itertools.combinations(boxes, 2):
        apart = (
            a["x"] + a["w"] <= b["x"]
            or b["x"] + b["w"] <= a["x"]
            or a["y"] + a["h"] <= b["y"]
            or b["y"] + b["h"] <= a["y"]
        )
        assert apart, f"labels {a['text']!r} and {b['text']!r} overlap: {a} {b}"
    px = labels["pixels"]
    assert px["outside"] == 0, f"{px['outside']} label pixels outside the boxes"
    assert px["edgeLayer"] == 0, f"{px['edgeLayer']} pixels drawn around the placer"
    empty = [b["text"] for b, n in zip(boxes, px["inBox"], strict=True) if n == 0]
    assert not empty, f"label boxes without paint: {empty}"


async def degrees(ctx: ServerContext, graph: str) -> Counter[str]:
    page = await queries.graph_page(
        ctx.store, graph, list(LAYERS), offset=0, limit=2_000, max_edges=20_000
    )
    counted: Counter[str] = Counter()
    for e in page.edges:
        counted[e.source] += 1
        counted[e.target] += 1
    return counted


@pytest.fixture
async def own_ctx(
    server_settings: Settings, cached_embedder: Embedder, tmp_path: Path
) -> AsyncIterator[ServerContext]:
    """A context on a FalkorDB of this test alone: which graph the explorer opens depends on
    every graph the server holds, and other tests leave theirs in the session's server."""
    storage = server_settings.storage.model_copy(update={"data_dir": tmp_path / "falkordb"})
    store = FalkorStore(storage)
    await store.connect()
    settings = server_settings.model_copy(update={"storage": storage})
    try:
        yield ServerContext(store=store, settings=settings, embedder=cached_embedder)
    finally:
        await store.close()


async def test_explorer_opens_on_the_graph_with_memory_with_labels_apart(
    own_ctx: ServerContext, tmp_path: Path
) -> None:
    reason = _missing()
    if reason:
        pytest.skip(reason)
    memory_ctx = own_ctx
    memory = memory_ctx.require_memory()
    # The default namespace stays empty; `polyg demo`'s data goes to its own graph.
    demo = f"{memory_ctx.default_namespace}_demo"
    other = f"{memory_ctx.default_namespace}_other"
    app = create_http_app(create_server(memory_ctx), memory_ctx)
    # POLYG_UI_OPENING_SCREENSHOT=docs/explorer-opening.png keeps the picture.
    shot = Path(os.environ.get("POLYG_UI_OPENING_SCREENSHOT") or tmp_path / "opening.png")
    try:
        with anyio.fail_after(120):
            for name in SCENARIOS:
                await load_scenario(memory, name, demo)
        async with serving(app) as base:
            seen = await open_explorer(base, shot)

            assert seen["chooser"] == []
            assert seen["selected"] == demo and seen["render"]["graph"] == demo
            assert seen["render"]["nodes"] >= 40
            assert seen["note"] is None
            first = seen["labels"]
            assert len(first["nodes"]) >= 8, first["nodes"]
            assert_labels_apart(first)
            # Fewer names than nodes at the default zoom: the most connected ones.
            assert len(first["nodes"]) < seen["render"]["nodes"]
            counted = await degrees(memory_ctx, demo)
            hub = max(counted, key=lambda n: (counted[n], n))
            named = {b["id"] for b in first["nodes"]}
            assert hub in named, "the most connected node is named at the default zoom"
            # Zoomed in, other nodes get their names, still apart.
            zoomed = seen["zoomed"]
            assert_labels_apart(zoomed)
            assert {b["id"] for b in zoomed["nodes"]} - named
            # A selected node and its neighbours are named before the rest.
            chosen = seen["selection"]
            assert_labels_apart(chosen["labels"])
            around = {b["id"] for b in chosen["labels"]["nodes"]}
            assert chosen["id"] in around
            assert around & set(chosen["neighbours"]) - {chosen["id"]}
            assert seen["hovered"]["cursor"] == "pointer", "the pointer is on a node"
            assert_labels_apart(seen["hovered"]["labels"])

            # A second graph with memory: the empty default now opens on a chooser.
            with anyio.fail_after(60):
                await load_scenario(memory, SCENARIOS[0], other)
            asked = await open_explorer(base, None, choose=True)
            assert asked["chooser"] == sorted([demo, other])
            assert asked["selected"] == demo and asked["hash"] == f"#graph={demo}"
            assert asked["render"]["graph"] == demo and asked["render"]["nodes"] >= 40
            assert_labels_apart(asked["labels"])
    finally:
        for name in (demo, other):
            await memory_ctx.store.delete_graph(name)
    assert (await anyio.Path(shot).stat()).st_size > 10_000
