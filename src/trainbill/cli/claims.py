"""``trainbill check --claims FILE``: read a claimed bill and its plan, print each line's verdict.

Reading and auditing is ``trainbill.usecases.check``; this prints the verdicts. Exit status 3
when any line is impossible, so a CI job or a finance script can stop on it (1 stays "bad
input").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from trainbill.cli import _common
from trainbill.cli._common import catalog_from_options, print_json

__all__ = ["EXIT_IMPOSSIBLE", "check_claims"]

#: Exit status when a claimed line is impossible (1 is bad input, 2 a usage error).
EXIT_IMPOSSIBLE = 3


def check_claims(path: Path, *, as_json: bool, wide: bool = False) -> None:
    """Audit ``path``; print a table (or JSON) and exit ``EXIT_IMPOSSIBLE`` on an impossible
    line."""
    from trainbill.usecases.check import audit_claims_file

    audit = audit_claims_file(path, catalog_from_options())
    if as_json:
        print_json(audit.as_dict())
    else:
        _render(audit, wide=wide)
    if audit.impossible:
        raise typer.Exit(EXIT_IMPOSSIBLE)


def _render(audit: Any, *, wide: bool = False) -> None:
    console = _common.console  # looked up per call: COLUMNS may change between runs (tests)
    from trainbill.claims import quantity_words
    from trainbill.cli._tables import Col, money, print_table

    c = audit.claim
    colors = {"impossible": "red", "implausible": "yellow", "consistent": "green"}
    cols = [
        Col("#", "right"),
        Col("category"),
        Col("item", kind="text", drop=2),
        Col("claimed", "right"),
        Col("% of quote", "right", drop=3),
        Col("implied at list price", kind="text"),
        Col("× forecast", "right", drop=1),
        Col("verdict"),
    ]
    rows = []
    for a in audit.lines:
        ln = a.line
        color = colors[a.verdict]
        rows.append(
            [
                str(ln.number) if ln.number else "quote",
                ln.category,
                ln.item,
                money(ln.amount_usd),
                f"{100 * ln.amount_usd / c.quote_usd:.1f}%" if c.quote_usd else "",
                quantity_words(a.implied_quantity, a.unit),
                f"{a.ratio:,.3g}×" if a.ratio is not None else "-",
                f"[{color}]{a.verdict}[/{color}]",
            ]
        )
    title = f"Claimed bill: {c.name}" + (f" ({c.source})" if c.source else "")
    print_table(console, title, cols, rows, wide=wide)
    for a in audit.lines:
        label = f"line {a.line.number}" if a.line.number else "quote"
        color = colors[a.verdict]
        console.print(
            f"[{color}]{a.verdict.upper()}[/{color}] {label} ({a.line.item}): {a.arithmetic}"
        )
        console.print(f"    price: {a.price_source}")
    console.print(f"[bold]Total:[/bold] {audit.total_arithmetic}")
    if audit.impossible:
        nums = ", ".join(str(a.line.number) for a in audit.impossible)
        console.print(
            f"[red]{len(audit.impossible)} impossible line(s): {nums}[/red] (exit status "
            f"{EXIT_IMPOSSIBLE})"
        )
