"""The explorer in real headless Chromium on the deployment scenario.

Needs Debian's `chromium` (/usr/bin/chromium), Node.js, and the explorer's npm packages
(`npm ci` in packages/polyg-server/ui-src, which brings playwright-core); skipped with the
install lines when one is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from polyg_core.scenarios import load_scenario
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.http import create_http_app
from polyg_server.testing import serving
from pydantic import SecretStr

pytestmark = pytest.mark.anyio

UI_SRC = Path(__file__).resolve().parents[1] / "ui-src"
SCRIPT = UI_SRC / "e2e" / "explorer.mjs"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
KEY = "browser-test-key-0123456789"


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM}: apt-get install -y chromium"
    if shutil.which("node") is None:
        return "no Node.js: install node (>= 18) and npm"
    if not (UI_SRC / "node_modules" / "playwright-core").is_dir():
        return f"playwright-core not installed: npm ci --prefix {UI_SRC}"
    return None


async def drive(base: str, screenshot: Path) -> dict[str, Any]:
    env = {**os.environ, "POLYG_API_KEY": KEY, "CHROMIUM_PATH": CHROMIUM}
    with anyio.fail_after(150):
        done = await anyio.run_process(
            ["node", str(SCRIPT), base, str(screenshot)], env=env, check=False
        )
    sys.stderr.write(done.stderr.decode(errors="replace"))
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


async def test_explorer_search_select_and_recall_in_chromium(
    memory_ctx: ServerContext, tmp_path: Path
) -> None:
    reason = _missing()
    if reason:
        pytest.skip(reason)
    with anyio.fail_after(60):
        await load_scenario(
            memory_ctx.require_memory(), "deployment_failure", memory_ctx.default_namespace
        )
    memory_ctx.settings = memory_ctx.settings.model_copy(update={"api_key": SecretStr(KEY)})
    app = create_http_app(create_server(memory_ctx), memory_ctx)
    # POLYG_UI_SCREENSHOT=docs/explorer.png refreshes the picture in the docs.
    shot = Path(os.environ.get("POLYG_UI_SCREENSHOT") or tmp_path / "explorer.png")
    async with serving(app) as base:
        seen = await drive(base, shot)

    assert "failure" not in seen, seen.get("failure")
    assert seen["errors"] == []
    assert seen["loginForm"] is True and seen["url"].endswith("/ui")
    assert seen["render"]["nodes"] >= 20
    assert seen["searchHits"][0] == "auth-service"
    assert seen["selected"] == "auth-service"
    assert seen["neighbours"] >= 4
    assert seen["answer"]
    assert seen["chain"], "the causal chain is shown"
    for step in seen["chain"]:
        assert step["cause"] and step["effect"]
        assert 0 < float(step["confidence"]) <= 1
    assert any("AUTH_SECRET" in s["cause"] + s["effect"] for s in seen["chain"])
    assert seen["highlighted"] > 0
    assert seen["timelineEvents"] > 0 and seen["timelineFacts"] > 0
    assert (await anyio.Path(shot).stat()).st_size > 10_000
    # After the recall the camera shows the answer's nodes, and they are named, not a pile.
    recalled = seen["recallView"]
    assert recalled["nodes"] > 0
    assert recalled["inView"] == recalled["nodes"], recalled
    assert recalled["labelled"] >= min(3, recalled["nodes"]), recalled
    # On a 390 px wide phone the graph is drawn at a usable size, without sideways scrolling.
    phone = seen["phone"]
    assert phone["render"]["nodes"] >= 20, phone
    assert phone["graphBox"]["width"] >= 370 and phone["graphBox"]["height"] >= 280, phone
    assert phone["canvasBox"]["width"] >= 370, phone
    assert phone["labels"] > 0, phone
    assert phone["pageWidth"] <= 390, phone
    assert phone["recallView"]["inView"] == phone["recallView"]["nodes"] > 0, phone
    # A paged view (5 nodes): the recall adds its other nodes next to what they link to,
    # moves there, and names them.
    paged = seen["paged"]
    assert paged["before"] == 5 and paged["after"] > 5, paged
    assert paged["recallView"]["inView"] == paged["recallView"]["nodes"] > 5, paged
    assert paged["recallView"]["labelled"] >= 5, paged
