"""``trainbill forecast`` and ``trainbill check``: the itemized bill and the quote audit."""

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from trainbill.cli import _common, app
from trainbill.cli import _plan_flags as pf
from trainbill.cli._common import (
    CALIBRATION_HELP,
    catalog_from_options,
    print_json,
    read_calibrations,
)
from trainbill.errors import SpecError

if TYPE_CHECKING:
    from trainbill.usecases.check import QuoteAudit
    from trainbill.usecases.price import Forecast, Outlook, PricedPlan
    from trainbill.usecases.whatif import ImportedPlan

# The library is imported inside the commands, not here: ``trainbill check`` needs no
# forecast engine, ``--json`` needs no Rich or money formatting, and every import is paid
# at each start (issue #21: the forecast process against llm-analysis, benchmarks/startup.py).
# No ``from __future__ import annotations`` either: Typer would then evaluate each option's
# annotation string several times per run (about 40 options, 5 ms of every start); evaluated
# once, when the module loads, the library types below are quoted instead.

__all__ = ["render_forecast", "render_headline"]


#: Actions the table view lists (the JSON carries them all).
TOP_ACTIONS = 3


def render_headline(fc: "Forecast", out: "Outlook | None" = None) -> None:
    """Quote → purchase-mix savings → hidden costs → real bill → P90 budget, then what to do.

    Every figure and label is the library's (``headline.waterfall``, the outlook beside the
    forecast, ``forecast.versus_planned``/``versus_quote``); this only lays them out as lines a
    budget approver reads top to bottom, each wrapped line at its own indent.
    """
    from rich.markup import escape

    from trainbill.cli._tables import print_wrapped
    from trainbill.report.format import money, money_change
    from trainbill.usecases.price import versus_planned, versus_quote, waterfall

    console = _common.console  # per call: COLUMNS is read when the console is made
    steps = waterfall(fc, out)
    width = max(len(s.label) for s in steps) + 4
    # The waterfall's labels are cut to the console, never its amounts (they are the point).
    width = max(20, min(width, console.width - 18))
    console.print("\n[bold]From the quote to the budget[/bold]")
    for s in steps:
        label = s.label[0].upper() + s.label[1:]
        if len(label) > width - 2:
            label = label[: width - 3] + "…"
        label = escape(label)
        if s.total:
            console.print(f"  [bold]= {label:<{width}}{money(s.end):>12}[/bold]")
        else:
            console.print(f"    {label:<{width}}{money_change(s.delta):>12}")
    # Each comparison names both its sides (issue #42): the hidden costs are measured against
    # the planned bill, the purchase mix against the quote.
    print_wrapped(
        console,
        f"Real bill: [bold]{escape(versus_planned(fc))}[/bold] ({fc.hidden_multiplier:.2f}× "
        f"planned); {escape(versus_quote(fc))} (multiplier: {fc.multiplier:.2f}× the quote)",
        indent=2,
    )
    if out is None:
        return
    _render_outlook(out)


def _render_outlook(out: "Outlook") -> None:
    """The budget and the top actions (the JSON carries them all)."""
    from rich.markup import escape

    from trainbill.cli._tables import print_wrapped
    from trainbill.report.format import money

    console = _common.console
    b = out.budget
    if b is None:
        print_wrapped(console, "Budget: not worked out (see 'action_notes' in --json)", indent=2)
    else:
        print_wrapped(console, escape(b.basis), indent=2, hang="Budget:")
        if b.deadline_miss_probability is not None and b.deadline_hours is not None:
            console.print(
                f"  Chance of missing the {b.deadline_hours:g} h deadline: "
                f"{b.deadline_miss_probability:.0%}"
            )
    console.print("\n[bold]What to do[/bold]")
    print_wrapped(
        console,
        "(expected saving of each change against the plan as written; they do not add up)",
        indent=2,
    )
    if not out.actions:
        console.print("  nothing that can be bought saves money on this plan")
    for i, a in enumerate(out.actions[:TOP_ACTIONS], start=1):
        print_wrapped(
            console,
            f"{escape(a.title)}: [bold]saves {money(a.saving_usd)}[/bold] (real bill "
            f"{money(a.total_usd)})",
            indent=2,
            hang=f"{i}.",
        )
        print_wrapped(console, escape(a.caveat), indent=5, hang="caveat:")
    if len(out.actions) > TOP_ACTIONS:
        console.print(f"  ({len(out.actions) - TOP_ACTIONS} more in --json under 'actions')")
    if out.notes:
        # What was not priced or not searched (no published rate, a calibration the planner
        # cannot use): counted here, listed in the JSON, so an empty list is read rightly.
        print_wrapped(
            console,
            f"({len(out.notes)} note{'s' * (len(out.notes) != 1)} on what was not priced or "
            "not searched: --json 'action_notes')",
            indent=2,
        )


def render_forecast(
    fc: "Forecast", *, explain: bool = False, wide: bool = False, outlook: "Outlook | None" = None
) -> None:
    """Rich table grouped by category with % of total and a total row, then quote, bill and
    multiplier, then the headline (with the outlook, the budget and what to do).

    Instance names and amounts are never cut: at narrow widths low-value columns are left
    out and named (``trainbill.cli._tables``), a quantity always with its unit; ``wide`` shows
    them all.
    """
    from rich.markup import escape

    from trainbill.cli._tables import Col, align_money, print_table, print_wrapped
    from trainbill.report.format import money
    from trainbill.usecases.price import RANGE_LABEL

    console = _common.console  # per call: COLUMNS is read when the console is made
    u = fc.usage
    title = (
        f"{u.name}: {u.nodes} × {u.instance.instance} ({u.gpus} {u.accelerator.id}), "
        f"{u.provider} {u.region}, {u.orchestrator}, prices as of {u.as_of}"
    )
    cols = [
        Col("category", kind="text", drop=3),
        Col("item", kind="text"),
        Col("quantity", "right", drop=5),
        Col("unit", drop=5),
        Col("unit price", drop=6),  # decimal points aligned (align_money)
        Col("cost", "right"),
        Col("%", "right", drop=2),
    ]
    rows = _ledger_rows(fc)
    prices = align_money([r[4] for r in rows])
    for r, p in zip(rows, prices, strict=True):
        r[4] = p
    # Rich reads "[...]" as markup: the plan's own text (run name, extra-group names inside
    # ledger items) is escaped, or "[/x]" in a name crashed it.
    print_table(console, escape(title), cols, rows, wide=wide)
    print_wrapped(console, escape(fc.quote_basis), hang="Quote (instances × on-demand list "
                  "price × planned hours):")  # fmt: skip
    print_wrapped(
        console,
        escape(fc.planned_basis),
        hang="Planned (the same hours at the plan's purchase mix):",
    )
    mfu = f", MFU {u.mfu:.1%}" if u.mfu is not None else ""
    print_wrapped(
        console,
        f"Time: {u.compute.hours:,.1f} h pure training, {u.wall_hours:,.1f} h wall-clock, "
        f"{u.gpu_hours:,.0f} GPU-hours{mfu}",
    )
    b = fc.band
    if b is not None and b.has_range:
        print_wrapped(
            console,
            f"{RANGE_LABEL} (how wrong the time model may be, from published runs it was not "
            f"fitted to): {b.gpu_hours_p10:,.0f}-{b.gpu_hours_p90:,.0f} GPU-hours, "
            f"bill {money(b.total_usd_p10)}-{money(b.total_usd_p90)}",
        )
    for w in fc.warnings:
        print_wrapped(console, escape(w), hang="[yellow]warning:[/yellow]")
    render_headline(fc, outlook)
    if explain:
        _render_explain(fc)


def _ledger_rows(fc: "Forecast") -> list[list[str]]:
    """The ledger table's rows: each line (the category named on its first), each category's
    subtotal and share, the total."""
    from rich.markup import escape

    from trainbill.catalog import Provenance
    from trainbill.ledger import CATEGORIES
    from trainbill.report.format import category_name, money, money_precise

    # A line whose price is not a provider's says so on the line itself, not only in a warning.
    marks = {Provenance.STAND_IN: " (stand-in)", Provenance.UNPRICED: " (NOT PRICED)"}
    rows: list[list[str]] = []
    by_cat = fc.ledger.by_category()
    pct = fc.percentages()
    for cat in CATEGORIES:
        lines = fc.ledger.in_category(cat)
        if not lines:
            continue
        for i, line in enumerate(lines):
            rows.append(
                [
                    category_name(cat) if i == 0 else "",
                    escape(line.item) + marks.get(line.provenance, ""),
                    f"{line.quantity:,.2f}",
                    line.unit,
                    money_precise(line.unit_price_usd),
                    money(line.cost_usd),
                    "",
                ]
            )
        # The category is named on its first line; its subtotal does not spell it again.
        rows.append(
            ["", "[bold]subtotal[/bold]", "", "", "", f"[bold]{money(by_cat[cat])}[/bold]",
             f"{pct[cat]:.1f}%"]
        )  # fmt: skip
    rows.append(
        ["[bold]Real bill[/bold]", "[bold]total[/bold]", "", "", "",
         f"[bold]{money(fc.total_usd)}[/bold]", "100.0%"]
    )  # fmt: skip
    return rows


def _render_explain(fc: "Forecast") -> None:
    """``--explain``: the time-model range, the dates, the checkpoint interval, every time-model
    factor, every line's basis and source, and what was assumed."""
    from rich.markup import escape

    console = _common.console
    u, b = fc.usage, fc.band
    if b is not None:
        console.print(f"\n[bold]Time-model range[/bold]\n  {escape(b.basis)}")
    console.print("\n[bold]Dates[/bold]")
    console.print(f"  run date (software maturity, run.date / --run-date): {u.run_date}")
    console.print(f"  price date (prices.as_of / --as-of): {u.as_of}")
    console.print("\n[bold]Checkpoint interval[/bold]")
    console.print(f"  {escape(u.checkpoint.interval_basis)}")
    console.print("\n[bold]Time model factors[/bold]")
    for k, v in u.time.factors:
        console.print(escape(f"  {k}: {v}"))
    console.print("\n[bold]Line bases[/bold]")
    for line in fc.ledger.lines:
        console.print(
            escape(f"  {line.category} / {line.item}: {line.basis}\n      source: {line.source}")
        )
    console.print("\n[bold]Assumed (not stated in the plan)[/bold]")
    for a in u.assumed:
        console.print(escape(f"  {a}"))


def _csv(fc: "Forecast") -> str:
    from trainbill.tabular import to_csv

    fields = [
        "category",
        "item",
        "quantity",
        "unit",
        "unit_price_usd",
        "cost_usd",
        "basis",
        "source",
    ]
    return to_csv((line.as_dict() for line in fc.ledger.lines), fields)


Orchestrator = Annotated[str | None, typer.Option(help="ec2, hyperpod or eks.")]
SavingsPlan = Annotated[str | None, typer.Option("--savings-plan", help="none, 1yr or 3yr.")]
SavingsPlanKind = Annotated[
    str | None,
    typer.Option(
        "--savings-plan-kind",
        help=(
            "compute, ec2-instance or sagemaker (AWS; default: sagemaker on HyperPod, else "
            "compute)."
        ),
    ),
]
Commitment = Annotated[
    str | None,
    typer.Option(
        "--commitment",
        help=(
            "buy (default: charge the whole term) or existing (an existing commitment "
            "covers the run)."
        ),
    ),
]
CatalogDirs = Annotated[
    list[Path] | None, typer.Option("--catalog", help="Overlay catalog directory (own rates).")
]
ImportFrom = Annotated[
    tuple[str, Path] | None,
    typer.Option("--from", help="Import the cluster: hyperpod|skypilot|terraform FILE."),
]
AttentionSparsity = Annotated[
    float | None,
    typer.Option("--attention-sparsity", help="Share of attention FLOPs removed (0-1)."),
]
Calibrations = Annotated[
    list[Path] | None,
    typer.Option(
        "--calibration",
        help=CALIBRATION_HELP + " 'history': the team's factors from the run registry.",
    ),
]
Db = Annotated[
    str | None,
    typer.Option("--db", help="Run registry for --calibration history (as 'trainbill runs')."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the JSON contract.")]
AsCsv = Annotated[bool, typer.Option("--csv", help="Print the ledger as CSV.")]
Explain = Annotated[
    bool, typer.Option("--explain", help="Show every time-model factor and line basis.")
]
Wide = Annotated[
    bool, typer.Option("--wide", help="Show every column, whatever the terminal width.")
]


@app.command("forecast")
def forecast_cmd(
    plan_file: pf.PlanFile = None,
    params: pf.Params = None,
    active_params: pf.ActiveParams = None,
    tokens: pf.Tokens = None,
    gpu: pf.Gpu = None,
    gpus: pf.Gpus = None,
    precision: pf.Precision = None,
    architecture: pf.Architecture = None,
    attention_share: pf.AttentionShare = None,
    instance: pf.Instance = None,
    nodes: pf.Nodes = None,
    hours: pf.Hours = None,
    provider: pf.Cloud = None,
    region: pf.Region = None,
    orchestrator: Orchestrator = None,
    spot_fraction: pf.SpotFraction = None,
    savings_plan: SavingsPlan = None,
    savings_plan_kind: SavingsPlanKind = None,
    commitment: Commitment = None,
    savings_plan_covered: pf.SavingsPlanCovered = None,
    as_of: pf.AsOf = None,
    run_date: pf.RunDate = None,
    catalog_dir: CatalogDirs = None,
    from_: ImportFrom = None,
    attention_sparsity: AttentionSparsity = None,
    calibration: Calibrations = None,
    db: Db = None,
    as_json: AsJson = False,
    as_csv: AsCsv = False,
    explain: Explain = False,
    wide: Wide = False,
) -> None:
    """Itemized real bill of a training plan next to the naive quote."""
    if as_json and as_csv:
        msg = "choose one of --json and --csv"
        raise SpecError(msg, source="command line")
    flags = pf.run_flags(
        params=params, active_params=active_params, tokens=tokens, precision=precision, gpu=gpu,
        gpus=gpus, instance=instance, nodes=nodes, hours=hours, provider=provider, region=region,
        orchestrator=orchestrator, spot_fraction=spot_fraction, savings_plan=savings_plan,
        savings_plan_kind=savings_plan_kind, commitment=commitment,
        savings_plan_covered=savings_plan_covered, as_of=as_of, run_date=run_date,
        architecture=architecture, attention_share=attention_share,
    )  # fmt: skip
    catalog = catalog_from_options(catalog_dir)
    imported = None
    if from_ is not None:  # issue 10: plan file < imported cluster < flags
        from trainbill.usecases.whatif import import_plan

        pf.check_cluster_flags(flags)
        if plan_file is not None:
            _common.remember_plan_source(str(plan_file))
        imported = import_plan(from_[0], from_[1], plan_file, flags, catalog)
        plan = imported.plan
    else:
        plan = pf.build_plan(plan_file, flags=flags)
    # ``history`` names the run registry's team factors, not a file (``./history`` is one).
    history = any(str(p) == HISTORY for p in calibration or ())
    cals = read_calibrations(
        [p for p in calibration or () if str(p) != HISTORY], command="forecast"
    )
    from trainbill.usecases.price import price_plan

    priced = price_plan(
        plan, catalog, cals, outlook=not as_csv, attention_sparsity=attention_sparsity,
        history=history, db=db, source=str(plan_file) if plan_file else "command line",
    )  # fmt: skip
    _show(priced, imported, as_json=as_json, as_csv=as_csv, explain=explain, wide=wide)


#: The ``--calibration`` value that means the run registry's team factors.
HISTORY = "history"


def _show(
    priced: "PricedPlan",
    imported: "ImportedPlan | None",
    *,
    as_json: bool,
    as_csv: bool,
    explain: bool,
    wide: bool,
) -> None:
    """Print the forecast as JSON (with the import report), CSV or the tables."""
    if as_json:
        extra = (
            {"import": {**imported.report.as_dict(), "provenance": imported.provenance}}
            if imported
            else {}
        )
        print_json({**priced.as_dict(), **extra})
    elif as_csv:
        typer.echo(_csv(priced.forecast), nl=False)
    else:
        if imported:
            from trainbill.cli._import import render_import

            render_import(imported.report, imported.provenance)
        render_forecast(priced.forecast, explain=explain, wide=wide, outlook=priced.outlook)


@app.command("check")
def check_cmd(
    cost: Annotated[str | None, typer.Option(help="Quoted cost in USD, e.g. 1.5e6.")] = None,
    params: Annotated[
        str | None, typer.Option(help="Parameters (active, for MoE), e.g. 70e9 or 70B.")
    ] = None,
    tokens: Annotated[
        str | None, typer.Option(help="Training tokens, e.g. 1.4e12 or 1.4T.")
    ] = None,
    gpu: Annotated[str | None, typer.Option(help="Accelerator id, e.g. h100.")] = None,
    gpus: Annotated[int | None, typer.Option(help="Accelerator count.")] = None,
    claims: Annotated[
        Path | None,
        typer.Option(
            "--claims",
            help="Audit a claimed bill line by line (TOML: quote_usd, total_usd, plan, [[lines]]).",
        ),
    ] = None,
    precision: Annotated[str, typer.Option(help="fp32, tf32, fp16, bf16 or fp8.")] = "bf16",
    usd_per_gpu_hour: Annotated[
        float | None,
        typer.Option("--usd-per-gpu-hour", help="Price per GPU-hour (else from the catalog)."),
    ] = None,
    instance: Annotated[str | None, typer.Option(help="Instance whose price to use.")] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Price date YYYY-MM-DD.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    wide: Annotated[
        bool,
        typer.Option("--wide", help="--claims: show every column, whatever the terminal width."),
    ] = False,
) -> None:
    """Audit a quote (implied MFU: is it physically possible?) or, with --claims, a claimed bill."""
    if claims is not None:
        given = [
            f"--{n}"
            for n, v in (
                ("cost", cost),
                ("params", params),
                ("tokens", tokens),
                ("gpu", gpu),
                ("gpus", gpus),
            )
            if v is not None
        ]
        if given:
            msg = f"--claims audits a claimed bill on its own plan; drop {', '.join(given)}"
            raise SpecError(msg, source="command line", field="--claims")
        from trainbill.cli.claims import check_claims

        check_claims(claims, as_json=as_json, wide=wide)
        return
    missing = [
        f"--{n}"
        for n, v in (
            ("cost", cost),
            ("params", params),
            ("tokens", tokens),
            ("gpu", gpu),
            ("gpus", gpus),
        )
        if v is None
    ]
    if missing:
        msg = f"give {', '.join(missing)} (a quote to audit) or --claims FILE (a claimed bill)"
        raise SpecError(msg, source="command line")
    assert gpu is not None
    assert gpus is not None
    values = {
        f: pf.parse_number(v, f"--{f}")
        for f, v in (("cost", cost), ("params", params), ("tokens", tokens))
    }
    for f, v in values.items():
        if v is None or v <= 0:
            msg = f"must be > 0 (got {v})"
            raise SpecError(msg, source="command line", field=f"--{f}")
    if gpus <= 0:
        msg = f"must be > 0 (got {gpus})"
        raise SpecError(msg, source="command line", field="--gpus")
    from trainbill.catalog import PRECISIONS  # the allowed values, for the flag's error

    if precision not in PRECISIONS:
        msg = f"{precision!r} is not allowed; allowed values: {', '.join(PRECISIONS)}"
        raise SpecError(msg, source="command line", field="--precision")
    day = None
    if as_of:
        try:
            day = date.fromisoformat(as_of)
        except ValueError:
            msg = f"{as_of!r} is not a date (YYYY-MM-DD)"
            raise SpecError(msg, source="command line", field="--as-of") from None
    try:
        audit = _audit(values, gpu, gpus, precision, usd_per_gpu_hour, instance, day)
    except SpecError as exc:
        # The library names its arguments (cost_usd, usd_per_gpu_hour); the user typed flags.
        flag = {"cost_usd": "--cost"}.get(
            exc.field or "", f"--{(exc.field or '').replace('_', '-')}"
        )
        raise SpecError(str(exc).split(": ", 1)[-1], source="command line", field=flag) from None
    _show_audit(audit, as_json=as_json)


def _show_audit(audit: "QuoteAudit", *, as_json: bool) -> None:
    """The verdict, as JSON or a line; an impossible quote exits with status 3, as --claims
    does, so a CI job or a finance script can stop on it."""
    if as_json:
        print_json(audit.as_dict())
    else:
        color = {"impossible": "red", "implausible": "yellow", "plausible": "green"}[audit.verdict]
        _common.console.print(
            f"[bold {color}]{audit.verdict.upper()}[/bold {color}]: {audit.explanation}"
        )
        _common.console.print(f"price: {audit.price_source}")
    if audit.verdict == "impossible":
        from trainbill.cli.claims import EXIT_IMPOSSIBLE

        raise typer.Exit(EXIT_IMPOSSIBLE)


def _audit(
    values: dict[str, float | None],
    gpu: str,
    gpus: int,
    precision: str,
    usd_per_gpu_hour: float | None,
    instance: str | None,
    day: date | None,
) -> "QuoteAudit":
    from trainbill.usecases.check import audit_quote

    return audit_quote(
        catalog=catalog_from_options(),
        cost_usd=float(values["cost"] or 0),
        params=float(values["params"] or 0),
        tokens=float(values["tokens"] or 0),
        gpu=gpu,
        gpus=gpus,
        precision=precision,
        usd_per_gpu_hour=usd_per_gpu_hour,
        instance=instance,
        as_of=day,
    )
