"""``trainbill check --claims FILE``: read a claimed bill and its plan, print each line's verdict.

Reading the files is here; the arithmetic is ``trainbill.claims``. Exit status 3 when any line
is impossible, so a CI job or a finance script can stop on it (1 stays "bad input").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from trainbill.cli import _common
from trainbill.cli._common import catalog_from_options, print_json
from trainbill.errors import SpecError

__all__ = ["EXIT_IMPOSSIBLE", "check_claims"]

#: Exit status when a claimed line is impossible (1 is bad input, 2 a usage error).
EXIT_IMPOSSIBLE = 3


def _read_toml(path: Path, what: str) -> dict[str, Any]:
    """The claims file through the input gate (a regular file under the claims size cap, TOML
    within the depth and number caps)."""
    from trainbill._io import parse_toml, read_input_text

    return parse_toml(read_input_text(path, kind="claims", what=what), source=str(path))


def _plan(doc: dict[str, Any], path: Path) -> Any:
    """The claim's plan: a path relative to the claims file, or an inline ``[plan]`` table."""
    from trainbill.spec import load_plan, plan_from_dict

    raw = doc.get("plan")
    if isinstance(raw, str):
        return load_plan(path.parent / raw)
    if isinstance(raw, dict):
        return plan_from_dict(raw, source=f"{path} [plan]")
    msg = (
        'give the run\'s plan: plan = "plan.toml" (relative to this file) or an inline [plan] table'
    )
    raise SpecError(msg, source=str(path), field="plan")


def check_claims(path: Path, *, as_json: bool, wide: bool = False) -> None:
    """Audit ``path``; print a table (or JSON) and exit ``EXIT_IMPOSSIBLE`` on an impossible
    line."""
    from trainbill.claims import audit_claims, claims_from_dict
    from trainbill.forecast import forecast

    doc = _read_toml(path, "claims file")
    claim = claims_from_dict({k: v for k, v in doc.items() if k != "plan"}, source=str(path))
    plan = _plan(doc, path)
    catalog = catalog_from_options()
    try:
        audit = audit_claims(claim, forecast(plan, catalog), catalog)
    except SpecError as exc:
        if exc.source is not None:
            raise
        bare = str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)
        raise SpecError(bare, source=str(path), field=exc.field) from None
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
