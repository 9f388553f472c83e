"""Rich output: import summaries, statistics, recall answers with causal chains and timelines."""

from __future__ import annotations

from typing import Any

from polyg_core.transfer import KINDS, ImportReport
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

BAR_WIDTH = 20
MAX_ERRORS_SHOWN = 20


def confidence_bar(value: float, width: int = BAR_WIDTH) -> Text:
    """A bar like `███████████████░░░░░ 0.75`, green/yellow/red by confidence."""
    value = max(0.0, min(1.0, value))
    filled = round(value * width)
    colour = "green" if value >= 0.8 else "yellow" if value >= 0.5 else "red"
    bar = Text("█" * filled, style=colour)
    bar.append("░" * (width - filled), style="dim")
    bar.append(f" {value:.2f}")
    return bar


def import_report(console: Console, report: ImportReport, source: str) -> None:
    """The summary table of an import: per kind created/merged/failed, then the failed lines."""
    title = (
        f"{'Validated' if report.dry_run else 'Imported'} {source} into graph {report.namespace!r}"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("kind")
    for col in ("created", "merged", "failed"):
        table.add_column(col, justify="right")
    for kind in KINDS:
        counts = report.kinds.get(kind)
        if counts is None:
            continue
        table.add_row(kind, str(counts.created), str(counts.merged), str(counts.failed))
    table.add_section()
    table.add_row(
        "total",
        str(report.created),
        str(report.merged),
        str(report.failed),
        style="bold",
    )
    console.print(table)
    console.print(
        f"{report.records} records in {report.elapsed_s:.2f} s "
        f"({report.rate:.0f} records/s); skipped {report.skipped}"
    )
    if report.aborted:
        console.print(
            "[bold red]--strict: nothing was written[/] because of the bad records below; "
            "fix them and import again."
        )
    elif report.dry_run:
        console.print("[yellow]--dry-run: nothing was written.[/]")
    if report.errors:
        errors = Table(title="failed records", title_justify="left", show_header=True)
        errors.add_column("line", justify="right")
        errors.add_column("problem")
        for e in report.errors[:MAX_ERRORS_SHOWN]:
            errors.add_row(str(e.line), e.message[:300])
        console.print(errors)
        if len(report.errors) > MAX_ERRORS_SHOWN:
            console.print(f"... and {len(report.errors) - MAX_ERRORS_SHOWN} more (use --json)")


def statistics(console: Console, stats: Any) -> None:
    """Tables of node/edge counts per graph and cross-link type."""
    table = Table(title=f"graph {stats.namespace!r}", title_justify="left")
    table.add_column("graph")
    table.add_column("nodes", justify="right")
    table.add_column("edges", justify="right")
    table.add_column("by label / relationship")
    for name, counts in stats.graphs.items():
        detail = ", ".join(
            f"{k} {v}" for k, v in {**counts.by_label, **counts.by_relationship}.items()
        )
        table.add_row(name, str(counts.nodes), str(counts.edges), detail)
    if stats.scratch_nodes or stats.scratch_edges:
        table.add_row("scratch", str(stats.scratch_nodes), str(stats.scratch_edges), "")
    table.add_section()
    table.add_row("total", str(stats.total_nodes), str(stats.total_edges), "", style="bold")
    console.print(table)
    links = Table(title="cross-links", title_justify="left")
    links.add_column("type")
    links.add_column("count", justify="right")
    for name, n in stats.cross_links.items():
        links.add_row(name, str(n))
    console.print(links)
    if stats.memory_bytes:
        console.print(f"memory used: {stats.memory_bytes / 1024:.0f} KiB")


def recall_result(console: Console, result: Any, *, show_timings: bool = True) -> None:
    """The answer, the causal chain with confidence bars, the timeline and the sources."""
    header = Text(result.answer)
    footer = Text.assemble(
        ("confidence ", "dim"),
        confidence_bar(result.confidence),
        (f"   intent {result.intent.get('type', '?')}", "dim"),
    )
    console.print(
        Panel(
            Group(header, Text(""), footer),
            title=f"[bold]{result.question}[/]",
            title_align="left",
        )
    )
    _memories(console, getattr(result, "memories", []))
    _causal_chain(console, result.reasoning.causal_chain)
    _context(console, result.reasoning, getattr(result, "source_nodes", []))
    if result.degraded:
        console.print(f"[yellow]degraded:[/] {'; '.join(result.degraded_reasons)}", highlight=False)
    if show_timings and result.timings_ms:
        parts = ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
        console.print(f"[dim]timings: {parts}[/]", highlight=False)


def _memories(console: Console, memories: list[Any]) -> None:
    """The memories a recall ranked, with their scores and the retrievers that found them."""
    if not memories:
        return
    table = Table(title="memories", title_justify="left", show_header=True)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("when")
    table.add_column("memory")
    table.add_column("found by", style="dim")
    for i, m in enumerate(memories, start=1):
        text = m.content if len(m.content) <= 160 else m.content[:159] + "…"
        when = (m.created_at or "")[:16].replace("T", " ")
        found = ", ".join(sorted(m.retrievers, key=lambda r: -m.retrievers[r]))
        table.add_row(str(i), f"{m.score:.3f}", when, text, found)
    console.print(table)


def _causal_chain(console: Console, chain: list[Any]) -> None:
    """Each causal step with its confidence bar, then the chain's product."""
    if not chain:
        return
    table = Table(title="causal chain", title_justify="left", show_header=True)
    table.add_column("#", justify="right")
    table.add_column("cause")
    table.add_column("→ effect")
    table.add_column("confidence")
    total = 1.0
    for i, step in enumerate(chain, start=1):
        total *= step.confidence
        table.add_row(str(i), step.cause, step.effect, confidence_bar(step.confidence))
    console.print(table)
    console.print(Text.assemble(("chain confidence (product) ", "dim"), confidence_bar(total)))


def _context(console: Console, reasoning: Any, sources: list[Any]) -> None:
    """The timeline, the entities involved and the source nodes of a recall."""
    timeline = reasoning.temporal_context
    if timeline:
        console.print("[bold]timeline[/]")
        for line in timeline[:12]:
            console.print(f"  • {line}", highlight=False)
    if reasoning.entities_involved:
        console.print(
            "[bold]entities[/] " + ", ".join(reasoning.entities_involved[:12]),
            highlight=False,
        )
    if sources:
        console.print("[bold]sources[/]")
        for src in sources[:8]:
            when = f" [dim]({src.when[:16].replace('T', ' ')})[/]" if src.when else ""
            console.print(f"  [dim]{src.uuid[:12]}[/] {src.text}{when}", highlight=False)


def remember_result(console: Console, result: Any) -> None:
    """What `remember` stored."""
    if not result.created:
        console.print(f"Already remembered (memory {result.memory_uuid}); nothing changed.")
        return
    table = Table(title=f"remembered into {result.graph!r}", title_justify="left")
    table.add_column("what")
    table.add_column("items")
    rows: list[tuple[str, list[str]]] = [
        ("entities", [n.name for n in result.entities]),
        ("relations", list(result.relations)),
        ("events", [n.name for n in result.events]),
        ("facts", [n.name for n in result.facts]),
        ("facts closed", [n.name for n in result.invalidated_facts]),
        ("causal links", list(result.causal_links)),
        ("concepts", [n.name for n in result.concepts]),
    ]
    for what, items in rows:
        if items:
            table.add_row(what, "\n".join(items))
    console.print(table)
    if result.degraded:
        console.print(f"[yellow]degraded:[/] {'; '.join(result.degraded_reasons)}", highlight=False)
