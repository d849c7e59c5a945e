"""``trainbill bill summary|compare`` and ``trainbill calibrate``: real bills against forecasts.

Thin shell over ``trainbill.bills``: parse options, call the library, render a Rich table or
JSON. The library (and Rich tables) are imported inside the commands, and Ibis/DuckDB/PySpark
by the library on first use, so neither the rest of the CLI nor ``bill summary --json`` (whose
run time, process start included, is benchmarked against a bare DuckDB scan) pays for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from trainbill.cli import _common, app
from trainbill.cli._common import print_json

if TYPE_CHECKING:
    from trainbill.bills import BillSummary, Reconciliation

__all__ = ["bill_app"]

bill_app = typer.Typer(
    help="Read FOCUS / AWS CUR 2.0 bills: classify, summarise, compare with a forecast.",
    no_args_is_help=True,
)
app.add_typer(bill_app, name="bill")

from trainbill.cli._bill_flags import Since, Until, Where, _Engine, _Files, _Json, _money

_BREAKDOWN_ROWS = 25


def _render_summary(s: BillSummary) -> None:
    from rich.table import Table

    from trainbill.bills import BILL_CATEGORIES

    cur = s.currency
    period = f"{s.period_start} → {s.period_end}" if s.period_start else "unknown period"
    table = Table(title=f"{s.format} bill, {s.rows:,} rows, {period}")
    table.add_column("category")
    table.add_column("rows", justify="right")
    table.add_column("billed", justify="right")
    table.add_column("share", justify="right")
    for cat in BILL_CATEGORIES:
        cost = s.by_category[cat]
        if not s.rows_by_category[cat]:
            continue
        share = f"{100 * cost / s.billed_cost:.1f}%" if s.billed_cost else ""
        table.add_row(cat, f"{s.rows_by_category[cat]:,}", _money(cost, cur), share)
        if cat == "compute":
            for option, value in s.compute_by_option.items():
                if value:
                    table.add_row(f"  {option}", "", _money(value, cur), "")
    table.add_section()
    table.add_row("total (billed)", f"{s.rows:,}", _money(s.billed_cost, cur), "100.0%")
    table.add_row("effective (amortised)", "", _money(s.effective_cost, cur), "")
    table.add_row("list (on-demand)", "", _money(s.list_cost, cur), "")
    _common.console.print(table)
    _common.console.print(
        f"GPU instance compute: {_money(s.gpu_compute_cost, cur)} over "
        f"{s.gpu_instance_hours:,.1f} instance-hours"
    )
    multiplier = s.hidden_multiplier
    _common.console.print(
        "hidden multiplier (total / GPU compute): "
        + (f"{multiplier:.2f}×" if multiplier is not None else "n/a (no GPU instance usage)")
    )
    _render_notes(s)
    if s.breakdown_by is not None:
        by = Table(title=f"by {s.breakdown_by}")
        by.add_column(s.breakdown_by)
        by.add_column("rows", justify="right")
        by.add_column("billed", justify="right")
        by.add_column("largest category")
        for row in s.breakdown[:_BREAKDOWN_ROWS]:
            top = max(row.by_category.items(), key=lambda kv: abs(kv[1]), default=("", 0.0))
            by.add_row(row.key, f"{row.rows:,}", _money(row.billed_cost, cur), top[0])
        _common.console.print(by)
        if len(s.breakdown) > _BREAKDOWN_ROWS:
            _common.console.print(
                f"… {len(s.breakdown) - _BREAKDOWN_ROWS} more (use --json for all)"
            )


def _render_notes(s: BillSummary) -> None:
    """The lines under the summary table: payers, uncategorized rows, the reader's warnings."""
    cur = s.currency
    if len(s.by_payer) > 1:
        _common.console.print(f"{len(s.by_payer)} payer accounts in this bill (billed):")
        for payer, cost in s.by_payer.items():
            _common.console.print(f"  {payer}: {_money(cost, cur)}", markup=False)
    if s.uncategorized_rows:
        _common.console.print(
            f"uncategorized (counted in 'other'): {s.uncategorized_rows:,} rows, "
            f"{_money(s.uncategorized_cost, cur)}"
        )
    for warning in s.warnings:
        _common.console.print(f"warning: {warning}", markup=False, style="yellow")


@bill_app.command("summary")
def summary_cmd(
    files: _Files,
    by: Annotated[
        str | None,
        typer.Option("--by", help="Break down by tag:KEY, resource, service or day."),
    ] = None,
    engine: _Engine = "duckdb",
    where: Where = None,
    since: Since = None,
    until: Until = None,
    as_json: _Json = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar on stderr during long reads.")
    ] = False,
) -> None:
    """Classify every bill row into the ledger's categories and show the hidden multiplier."""
    from trainbill.bills.filters import bill_filter
    from trainbill.bills.summary import read_bill

    rows = bill_filter(where or (), since=since, until=until)
    # Progress goes to stderr, on a terminal only; JSON output is for scripts, so never.
    s = read_bill(files, engine=engine, by=by, progress=not (quiet or as_json), where=rows)
    if as_json:
        print_json(s.as_dict())
    else:
        _render_summary(s)


def _render_reconciliation(r: Reconciliation) -> None:
    from rich.table import Table

    cur = r.currency or "USD"  # a bill with no rows names no currency; forecasts are in USD
    period = (
        f"{r.period_start} → {r.period_end}" if r.period_start else "no billing period: no rows"
    )
    table = Table(title=f"forecast vs bill ({r.basis} cost, {period})")
    for name in ("category", "forecast", "actual", "variance", "variance %"):
        table.add_column(name, justify="left" if name == "category" else "right")
    for row in r.rows:
        if row.forecast_usd == 0 and row.actual_usd == 0:
            continue
        pct = f"{row.variance_pct:+.1f}%" if row.variance_pct is not None else "n/a"
        table.add_row(
            row.category,
            _money(row.forecast_usd, cur),
            _money(row.actual_usd, cur),
            f"{row.variance_usd:+,.2f}",
            pct,
        )
    table.add_section()
    table.add_row(
        "total",
        _money(r.forecast_total, cur),
        _money(r.actual_total, cur),
        f"{r.actual_total - r.forecast_total:+,.2f}",
        "",
    )
    _common.console.print(table)
    for warning in r.warnings:
        _common.console.print(f"warning: {warning}", markup=False, style="yellow")
    for row in r.largest:
        lines = "; largest bill lines:" if row.lines else ""
        _common.console.print(f"[bold]{row.category}[/bold]: {row.variance_usd:+,.2f} {cur}{lines}")
        for line in row.lines:
            _common.console.print(
                f"  {line.cost(r.basis):>14,.2f}  {line.service}: {line.item} ({line.rows} rows)"
            )


@bill_app.command("compare")
def compare_cmd(
    plan: Annotated[Path, typer.Argument(help="Plan TOML the forecast is made from.")],
    files: _Files,
    engine: _Engine = "duckdb",
    where: Where = None,
    since: Since = None,
    until: Until = None,
    basis: Annotated[
        str, typer.Option("--basis", help="billed (invoice) or effective (amortised) cost.")
    ] = "billed",
    as_json: _Json = False,
) -> None:
    """Forecast vs actual by category: variance and the bill lines that explain it."""
    from trainbill.bills.filters import bill_filter
    from trainbill.cli._common import catalog_from_options
    from trainbill.spec import load_plan
    from trainbill.usecases.compare import bill_variance

    rows = bill_filter(where or (), since=since, until=until)  # refused before any pricing
    spec = load_plan(plan)
    rec = bill_variance(spec, catalog_from_options(), files, engine=engine, where=rows, basis=basis)
    if as_json:
        print_json(rec.as_dict())
    else:
        _render_reconciliation(rec)


@app.command("calibrate")
def calibrate_cmd(
    files: _Files,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Calibration TOML to write.")
    ] = Path("calibration.toml"),
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    engine: _Engine = "duckdb",
) -> None:
    """Fit overhead factors (USD per GPU node-hour) from past bills into a calibration file."""
    from trainbill.bills import fit_calibration, read_bill, write_calibration
    from trainbill.bills.calibrate import calibration_to_toml, check_output

    # Before reading the bills, which can take a while; a bill (or a file in a bill folder) is
    # never the destination, --force or not.
    local = [Path(p) for p in files if "://" not in p]  # an s3a:// bill is never the output
    inputs = [f for p in local for f in ([*p.rglob("*")] if p.is_dir() else [p])]
    check_output(output, overwrite=force, inputs=inputs)
    summaries = [read_bill(files, engine=engine)]
    cal = fit_calibration(summaries)
    write_calibration(cal, output, overwrite=force, inputs=inputs)
    _common.console.print(calibration_to_toml(cal), end="", markup=False)
    _common.console.print(f"wrote {output}")
    if len(cal.providers) > 1:
        _common.console.print(
            f"warning: the bills hold {', '.join(cal.providers)} rows: their overheads are "
            "pooled per GPU node-hour; calibrate from one cloud's bills for that cloud's plans",
            markup=False,
            style="yellow",
        )
