"""How ``trainbill forecast --from KIND FILE`` shows what came from the cluster file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from trainbill.cli._common import console

if TYPE_CHECKING:
    from trainbill.importers import ImportReport

__all__ = ["render_import"]


def render_import(report: ImportReport, prov: dict[str, list[str]]) -> None:
    """What came from the cluster file, what the plan gave, what was defaulted, what is not
    priced."""
    console.print(f"[bold]Imported from {report.kind} file {escape(report.source)}[/bold]")
    for line in prov["imported"]:
        console.print(f"  imported: {escape(line)}")
    if prov["given"]:
        console.print(f"  from plan file/flags: {escape(', '.join(prov['given']))}")
    console.print(
        "  defaulted (catalog assumptions, see --explain): "
        f"{', '.join(prov['defaulted']) or 'none'}"
    )
    for u in report.unsupported:
        console.print(f"  [yellow]not priced:[/yellow] {escape(u)}")
    for n in report.notes:
        console.print(f"  note: {escape(n)}")
