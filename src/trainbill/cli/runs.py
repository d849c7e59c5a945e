"""``trainbill runs …`` and ``trainbill db …``: the run registry from the command line.

Each command parses its flags, makes one call to ``trainbill.runs.api`` and renders the result
(a table, or JSON with ``--json``). The library, and SQLAlchemy under it, is imported inside
the commands, so no other command pays for it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from trainbill.cli import _common, app
from trainbill.cli import _plan_flags as pf
from trainbill.cli._bill_flags import Since, Until, _Engine, _Files, _money
from trainbill.cli._common import print_json

__all__ = ["db_app", "runs_app"]

runs_app = typer.Typer(
    help="Remember forecasts, close them against their tagged bill rows, learn the team's factors.",
    no_args_is_help=True,
)
db_app = typer.Typer(help="The run registry's database: upgrade it, find it.", no_args_is_help=True)
app.add_typer(runs_app, name="runs")
app.add_typer(db_app, name="db")

Db = Annotated[
    str | None,
    typer.Option(
        "--db",
        help=(
            "Registry database: postgresql://USER@HOST:PORT/DB or a SQLite file "
            "(default: TRAINBILL_DATABASE_URL, else 'trainbill db path')."
        ),
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Print JSON.")]
RunId = Annotated[str, typer.Argument(help="Run id (as 'runs list' shows it).")]


def _echo(text: str) -> None:
    _common.console.print(text, markup=False, highlight=False)


@runs_app.command("record")
def record_cmd(
    plan_file: pf.PlanFile = None,
    run_id: Annotated[
        str | None, typer.Option("--id", help="Run id (default: the next run-N).")
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="A name (default: the plan's).")
    ] = None,
    hours: pf.Hours = None,
    nodes: pf.Nodes = None,
    spot_fraction: pf.SpotFraction = None,
    as_of: pf.AsOf = None,
    db: Db = None,
    as_json: Json = False,
) -> None:
    """Forecast a plan and store it; print the run id and the tag for its resources."""
    from trainbill.cli._common import catalog_from_options
    from trainbill.usecases import runs as api

    flags = pf.run_flags(hours=hours, nodes=nodes, spot_fraction=spot_fraction, as_of=as_of)
    plan = pf.build_plan(plan_file, flags=flags)
    rec = api.record(
        plan,
        plan_text=api.plan_text_of(plan_file),
        plan_source=str(plan_file) if plan_file else "command line",
        catalog=catalog_from_options(),
        run_id=run_id,
        name=name,
        db=db,
    )
    if as_json:
        print_json(rec.as_dict())
        return
    d = rec.as_dict()
    _echo(f"recorded {rec.id} ({rec.name}) in {rec.db}")
    _echo(
        f"forecast {_money(rec.total_usd, 'USD')} (P10 {_money(rec.p10_usd, 'USD')}, "
        f"P90 {_money(rec.p90_usd, 'USD')})"
    )
    _echo(f"tag every resource of the run: {rec.tag}")
    for label, key in (
        ("Terraform (AWS provider default_tags)", "terraform"),
        ("SkyPilot task (resources.labels)", "skypilot"),
        ("HyperPod create-cluster (Tags)", "hyperpod"),
    ):
        _echo(f"\n{label}:\n{d['snippets'][key]}")


@runs_app.command("close")
def close_cmd(
    run_id: RunId,
    files: _Files,
    engine: _Engine = "duckdb",
    since: Since = None,
    until: Until = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace the actuals of a run closed before.")
    ] = False,
    db: Db = None,
    as_json: Json = False,
) -> None:
    """Read the run's tagged rows from its bills and store them as its actuals."""
    from trainbill.usecases import runs as api

    c = api.close(run_id, files, engine=engine, since=since, until=until, replace=replace, db=db)
    if as_json:
        print_json(c.as_dict())
        return
    _render_comparison(c.as_dict(), f"{c.id}: forecast vs bill ({c.rows:,} tagged rows)")


def _render_comparison(d: dict[str, Any], title: str) -> None:
    from rich.table import Table

    table = Table(title=title)
    for col in ("category", "forecast", "actual", "variance"):
        table.add_column(col, justify="left" if col == "category" else "right")
    for cat, v in d["by_category"].items():
        table.add_row(
            cat,
            _money(v["forecast_usd"], ""),
            _money(v["actual_usd"], ""),
            f"{v['variance_usd']:+,.2f}",
        )
    table.add_section()
    actual = d.get("actual_total_usd")
    forecast = d["forecast_total_usd"]
    table.add_row(
        "total",
        _money(forecast, ""),
        _money(actual, "") if actual is not None else "open",
        f"{actual - forecast:+,.2f}" if actual is not None else "",
    )
    _common.console.print(table)


@runs_app.command("list")
def list_cmd(db: Db = None, as_json: Json = False) -> None:
    """Every recorded run, with its forecast and (once closed) its actual total."""
    from rich.table import Table

    from trainbill.usecases import runs as api

    runs = api.list_runs(db=db)
    if as_json:
        print_json(runs)
        return
    table = Table(title=f"{len(runs)} run(s)")
    for col in ("id", "name", "recorded", "forecast", "actual", "error"):
        table.add_column(col, justify="right" if col in ("forecast", "actual", "error") else "left")
    for r in runs:
        err = f"{100 * r['error']:+.1f}%" if r["error"] is not None else ""
        actual = r["actual_total_usd"]
        table.add_row(
            r["id"],
            r["name"],
            r["created_at"][:16].replace("T", " "),
            _money(r["forecast_total_usd"], ""),
            _money(actual, "") if actual is not None else "open",
            err,
        )
    _common.console.print(table)


@runs_app.command("show")
def show_cmd(run_id: RunId, db: Db = None, as_json: Json = False) -> None:
    """One run: its plan, forecast lines and (once closed) actuals by category."""
    from trainbill.usecases import runs as api

    d = api.show(run_id, db=db)
    if as_json:
        print_json(d)
        return
    _echo(
        f"{d['id']} ({d['name']}), recorded {d['created_at'][:16]} by trainbill "
        f"{d['tool_version']}, prices as of {d['prices_as_of']} (catalog {d['catalog_version']})"
    )
    _echo(f"plan: {d['plan_source']}; {len(d['lines'])} ledger lines")
    _render_comparison(d, f"{d['id']}: forecast vs bill")


@runs_app.command("delete")
def delete_cmd(
    run_id: RunId,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    db: Db = None,
) -> None:
    """Remove a run, its lines and its actuals (asks unless --yes)."""
    from trainbill.errors import RegistryError
    from trainbill.usecases import runs as api

    if not yes:
        if not sys.stdin.isatty():
            raise RegistryError(f"runs delete {run_id}: give --yes to delete without a terminal")
        if not typer.confirm(f"delete run {run_id}?"):
            _echo("nothing deleted")
            return
    _echo(f"deleted {api.delete(run_id, db=db)}")


@runs_app.command("calibrate")
def calibrate_cmd(db: Db = None, as_json: Json = False) -> None:
    """Fit the team's factors from the closed runs; their leave-one-run-out error."""
    from trainbill.cli._common import catalog_from_options
    from trainbill.usecases import runs as api

    d = api.calibrate(catalog_from_options(), db=db)
    if as_json:
        print_json(d)
        return
    _echo(
        f"{d['closed_runs']} closed run(s); factors shrunk towards the model by "
        f"{d['prior_runs']:g} runs"
    )
    h = d["hours"]
    _echo(f"  GPU-hours: ×{h['value']:.3f} (team ×{h['raw']:.3f}, {h['runs']} runs)")
    for cat, f in d["categories"].items():
        _echo(f"  {cat} per node-hour: ×{f['value']:.3f} (team ×{f['raw']:.3f}, {f['runs']} runs)")
    loo = d["leave_one_out"]
    for r in loo["runs"]:
        _echo(
            f"  {r['id']}: bill {_money(r['actual_usd'], 'USD')}, model "
            f"{100 * r['uncalibrated_error']:+.1f}%, calibrated {100 * r['calibrated_error']:+.1f}%"
        )
    if loo["median_abs_error_uncalibrated"] is not None:
        _echo(
            "leave-one-run-out median |error|: model "
            f"{100 * loo['median_abs_error_uncalibrated']:.1f}%, calibrated "
            f"{100 * loo['median_abs_error_calibrated']:.1f}%"
        )


@runs_app.command("export")
def export_cmd(
    output: Annotated[Path, typer.Option("-o", "--output", help="File to write (CSV).")],
    fmt: Annotated[str, typer.Option("--format", help="focus (FOCUS 1.2 rows).")] = "focus",
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
    db: Db = None,
    as_json: Json = False,
) -> None:
    """The stored forecasts as FOCUS 1.2 rows (x_TrainbillForecast marks them)."""
    from trainbill.usecases import runs as api

    d = api.export(output, fmt=fmt, overwrite=force, db=db)
    if as_json:
        print_json(d)
    else:
        _echo(f"wrote {d['rows']} FOCUS row(s) of {d['runs']} run(s) to {d['path']}")


@db_app.command("upgrade")
def upgrade_cmd(db: Db = None, as_json: Json = False) -> None:
    """Bring the registry's schema to this trainbill's version (never downgrades)."""
    from trainbill.usecases import runs as api

    d = api.upgrade(db=db)
    if as_json:
        print_json(d)
    else:
        _echo(f"{d['db']}: schema version {d['version']}")


@db_app.command("path")
def path_cmd() -> None:
    """Where the default SQLite registry lives (used without --db or TRAINBILL_DATABASE_URL)."""
    from trainbill.runs.store import default_path

    _echo(str(default_path()))
