"""``trainbill forecast`` and ``trainbill check``: the itemized bill and the quote audit."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from trainbill.check import QuoteAudit, audit_quote
from trainbill.cli import app
from trainbill.cli._common import catalog_from_options, console, print_json
from trainbill.errors import SpecError
from trainbill.forecast import Forecast, forecast
from trainbill.ledger import CATEGORIES
from trainbill.spec import Plan, load_plan, merge_plan_dicts, plan_from_dict

__all__ = ["build_plan", "render_forecast"]


def _parse_number(text: str | None, flag: str) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        msg = f"{text!r} is not a number (e.g. 70e9)"
        raise SpecError(msg, source="command line", field=flag) from None
    return value


def _parse_date(text: str | None, flag: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        msg = f"{text!r} is not a date (YYYY-MM-DD)"
        raise SpecError(msg, source="command line", field=flag) from None


def _check_cluster_flags(flags: dict[str, dict[str, Any]]) -> None:
    """--gpus and --nodes together: the plan would price the nodes and silently drop the GPU count."""
    cluster = flags.get("cluster", {})
    gpus, nodes = cluster.get("gpus"), cluster.get("nodes")
    if gpus is not None and nodes is not None:
        msg = f"give --gpus (accelerators) or --nodes (instances), not both (got --gpus {gpus} and --nodes {nodes})"
        raise SpecError(msg, source="command line", field="--gpus/--nodes")


def build_plan(
    plan_file: Path | None,
    *,
    flags: dict[str, dict[str, Any]],
) -> Plan:
    """A plan from a file, flags or both; flags override the file's values."""
    overrides = {k: {f: v for f, v in sec.items() if v is not None} for k, sec in flags.items()}
    overrides = {k: v for k, v in overrides.items() if v}
    _check_cluster_flags(flags)
    if plan_file is None:
        if not overrides:
            msg = "give a plan file or flags (e.g. --params 70e9 --tokens 1.4e12 --gpu h100 --gpus 512)"
            raise SpecError(msg, source="command line")
        return plan_from_dict(overrides, source="command line")
    base = load_plan(plan_file)
    if not overrides:
        return base
    # Instance and GPU flags replace how the cluster is described in the file.
    merged_cluster = overrides.get("cluster", {})
    base_dict = base.model_dump(exclude_none=True, exclude_defaults=True)
    file_cluster = base_dict.get("cluster", {})
    if "gpu" in merged_cluster and "instance" not in merged_cluster:
        file_cluster.pop("instance", None)
    if "instance" in merged_cluster and "gpu" not in merged_cluster:
        # --instance replaces the file's GPU the same way --gpu replaces its instance.
        file_cluster.pop("gpu", None)
    if "gpus" in merged_cluster:
        base_dict.get("cluster", {}).pop("nodes", None)
    if "nodes" in merged_cluster:
        base_dict.get("cluster", {}).pop("gpus", None)
    return plan_from_dict(merge_plan_dicts(base_dict, overrides), source=f"{plan_file} + flags")


def _money(x: float) -> str:
    return f"-${-x:,.0f}" if x < 0 else f"${x:,.0f}"


def render_forecast(fc: Forecast, *, explain: bool = False) -> None:
    """Rich table grouped by category with % of total, then quote, bill and multiplier."""
    u = fc.usage
    title = (
        f"{u.name}: {u.nodes} × {u.instance.instance} ({u.gpus} {u.accelerator.id}), "
        f"{u.provider} {u.region}, {u.orchestrator}, prices as of {u.as_of}"
    )
    # Rich reads "[...]" as markup: the plan's own text (run name, extra-group names inside
    # ledger items, region names inside warnings) is escaped, or "[/x]" in a name crashed it.
    table = Table(title=escape(title), show_lines=False, expand=False)
    for col, just in (
        ("category", "left"), ("item", "left"), ("quantity", "right"), ("unit", "left"),
        ("unit price", "right"), ("cost", "right"), ("%", "right"),
    ):  # fmt: skip
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    by_cat = fc.ledger.by_category()
    pct = fc.percentages()
    for cat in CATEGORIES:
        lines = fc.ledger.in_category(cat)
        if not lines:
            continue
        for i, line in enumerate(lines):
            table.add_row(
                cat if i == 0 else "",
                escape(line.item),
                f"{line.quantity:,.2f}",
                line.unit,
                f"${line.unit_price_usd:,.4g}",
                _money(line.cost_usd),
                "",
            )
        table.add_row(
            "",
            f"[bold]{cat} total[/bold]",
            "",
            "",
            "",
            f"[bold]{_money(by_cat[cat])}[/bold]",
            f"{pct[cat]:.1f}%",
        )
    console.print(table)
    console.print(
        f"Quote (instances × list price × planned hours): [bold]{_money(fc.quote_usd)}[/bold]  ({fc.quote_basis})"
    )
    console.print(
        f"Real bill: [bold]{_money(fc.total_usd)}[/bold]   multiplier: [bold]{fc.multiplier:.2f}×[/bold]"
    )
    mfu = f", MFU {u.mfu:.1%}" if u.mfu is not None else ""
    console.print(
        f"Time: {u.compute_hours:,.1f} h pure training, {u.wall_hours:,.1f} h wall-clock, "
        f"{u.wall_hours * u.gpus:,.0f} GPU-hours{mfu}"
    )
    b = fc.band
    if b is not None and b.gpu_hours_p90 > b.gpu_hours_p10:
        console.print(
            f"How wrong the time model may be (P10-P90, from published runs it was not fitted to): "
            f"{b.gpu_hours_p10:,.0f}-{b.gpu_hours_p90:,.0f} GPU-hours, "
            f"bill {_money(b.total_usd_p10)}-{_money(b.total_usd_p90)}"
        )
    for w in fc.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}")
    if explain:
        if b is not None:
            console.print(f"\n[bold]Error band[/bold]\n  {escape(b.basis)}")
        console.print("\n[bold]Dates[/bold]")
        console.print(f"  run date (software maturity, run.date / --run-date): {u.run_date}")
        console.print(f"  price date (prices.as_of / --as-of): {u.as_of}")
        console.print("\n[bold]Checkpoint interval[/bold]")
        console.print(f"  {escape(u.checkpoint_interval_basis)}")
        console.print("\n[bold]Time model factors[/bold]")
        for k, v in u.time.factors:
            console.print(escape(f"  {k}: {v}"))
        console.print("\n[bold]Line bases[/bold]")
        for line in fc.ledger.lines:
            console.print(
                escape(
                    f"  {line.category} / {line.item}: {line.basis}\n      source: {line.source}"
                )
            )
        console.print("\n[bold]Assumed (not stated in the plan)[/bold]")
        for a in u.assumed:
            console.print(escape(f"  {a}"))


def _csv(fc: Forecast) -> str:
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


@app.command("forecast")
def forecast_cmd(
    plan_file: Annotated[
        Path | None, typer.Argument(help="Plan TOML file (optional when flags describe the run).")
    ] = None,
    params: Annotated[str | None, typer.Option(help="Total parameters, e.g. 70e9.")] = None,
    active_params: Annotated[
        str | None, typer.Option("--active-params", help="Active parameters per token (MoE).")
    ] = None,
    tokens: Annotated[str | None, typer.Option(help="Training tokens, e.g. 1.4e12.")] = None,
    gpu: Annotated[
        str | None, typer.Option(help="Accelerator id, e.g. h100 (picks the provider's instance).")
    ] = None,
    gpus: Annotated[int | None, typer.Option(help="Accelerator count.")] = None,
    precision: Annotated[str | None, typer.Option(help="bf16 or fp8.")] = None,
    instance: Annotated[str | None, typer.Option(help="Instance type, e.g. p5.48xlarge.")] = None,
    nodes: Annotated[int | None, typer.Option(help="Instance count.")] = None,
    hours: Annotated[
        float | None, typer.Option(help="Hours of pure training (else derived from the model).")
    ] = None,
    provider: Annotated[str | None, typer.Option("--cloud", help="aws, gcp or azure.")] = None,
    region: Annotated[str | None, typer.Option(help="Region, e.g. us-east-1.")] = None,
    orchestrator: Annotated[str | None, typer.Option(help="ec2, hyperpod or eks.")] = None,
    spot_fraction: Annotated[
        float | None, typer.Option("--spot-fraction", help="Share of nodes on spot, 0-1.")
    ] = None,
    savings_plan: Annotated[
        str | None, typer.Option("--savings-plan", help="none, 1yr or 3yr.")
    ] = None,
    savings_plan_kind: Annotated[
        str | None,
        typer.Option(
            "--savings-plan-kind",
            help="compute, ec2-instance or sagemaker (AWS; default: sagemaker on HyperPod, else compute).",
        ),
    ] = None,
    commitment: Annotated[
        str | None,
        typer.Option(
            "--commitment",
            help="buy (default: charge the whole term) or existing (an existing commitment covers the run).",
        ),
    ] = None,
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="Use price points in force on YYYY-MM-DD.")
    ] = None,
    run_date: Annotated[
        str | None,
        typer.Option(
            "--run-date",
            help="Day of the run YYYY-MM-DD: its software maturity (default: --as-of, else today).",
        ),
    ] = None,
    catalog_dir: Annotated[
        list[Path] | None, typer.Option("--catalog", help="Overlay catalog directory (own rates).")
    ] = None,
    from_: Annotated[
        tuple[str, Path] | None,
        typer.Option("--from", help="Import the cluster: hyperpod|skypilot|terraform FILE."),
    ] = None,
    attention_sparsity: Annotated[
        float | None,
        typer.Option("--attention-sparsity", help="Share of attention FLOPs removed (0-1)."),
    ] = None,
    calibration: Annotated[
        list[Path] | None,
        typer.Option(
            "--calibration",
            help="Calibration file from `trainbill profile -o` or `trainbill calibrate` (repeatable).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON contract.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the ledger as CSV.")] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show every time-model factor and line basis.")
    ] = False,
) -> None:
    """Itemized real bill of a training plan next to the naive quote."""
    if as_json and as_csv:
        msg = "choose one of --json and --csv"
        raise SpecError(msg, source="command line")
    day = _parse_date(as_of, "--as-of")
    flags: dict[str, dict[str, Any]] = {
        "model": {
            "params": _parse_number(params, "--params"),
            "active_params": _parse_number(active_params, "--active-params"),
            "tokens": _parse_number(tokens, "--tokens"),
            "precision": precision,
        },
        "cluster": {
            "gpu": gpu, "gpus": gpus, "instance": instance, "nodes": nodes, "provider": provider,
            "region": region, "orchestrator": orchestrator,
        },
        "run": {"hours": hours, "date": _parse_date(run_date, "--run-date")},
        "purchase": {
            "spot_fraction": spot_fraction, "savings_plan": savings_plan,
            "savings_plan_kind": savings_plan_kind, "commitment": commitment,
        },
        "prices": {"as_of": day},
    }  # fmt: skip
    catalog = catalog_from_options(catalog_dir)
    imported = None
    if from_ is not None:  # issue 10: plan file < imported cluster < flags
        from trainbill.cli.whatif import imported_plan

        _check_cluster_flags(flags)
        plan, report, prov = imported_plan(from_[0], from_[1], plan_file, flags, catalog)
        imported = (report, prov)
    else:
        plan = build_plan(plan_file, flags=flags)
    cals: list[Any] = []
    if calibration:
        from trainbill.calibration import read_calibration_file

        cals = [read_calibration_file(p) for p in calibration]
    if attention_sparsity is not None and plan.run.hours is None and cals:
        from trainbill.profile.calibration import Calibration

        if any(isinstance(c, Calibration) for c in cals):
            # The what-if fixes run.hours, after which a measured MFU derives nothing.
            msg = (
                "a profile --calibration (measured MFU) cannot be combined with --attention-sparsity: the "
                "sparsity what-if fixes the training hours, so the measured MFU would be ignored; run one at a time"
            )
            raise SpecError(msg, source="command line", field="--attention-sparsity")
    if attention_sparsity is not None:
        from trainbill.whatif import apply_attention_sparsity

        # The note reaches every output as a forecast warning (``SparseAttentionPlan.whatif_notes``).
        plan, _ = apply_attention_sparsity(
            plan, catalog, attention_sparsity, source=str(plan_file or "plan")
        )
    try:
        if cals:
            from trainbill.calibration import forecast_calibrated

            fc = forecast_calibrated(plan, catalog, cals)
        else:
            fc = forecast(plan, catalog)
    except SpecError as exc:
        if exc.source is not None:
            raise
        # A rule that needs the catalog (a date before the instance was sold) names the field;
        # the reader also needs to know which file (or the flags) holds it.
        bare = str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)
        raise SpecError(
            bare, source=str(plan_file) if plan_file else "command line", field=exc.field
        ) from None
    if as_json:
        extra = {"import": {**imported[0].as_dict(), "provenance": imported[1]}} if imported else {}
        print_json({**fc.as_dict(), **extra})
    elif as_csv:
        typer.echo(_csv(fc), nl=False)
    else:
        if imported:
            from trainbill.cli.whatif import render_import

            render_import(imported[0], imported[1])
        render_forecast(fc, explain=explain)


@app.command("check")
def check_cmd(
    cost: Annotated[str, typer.Option(help="Quoted cost in USD, e.g. 1.5e6.")],
    params: Annotated[str, typer.Option(help="Parameters (active, for MoE), e.g. 70e9.")],
    tokens: Annotated[str, typer.Option(help="Training tokens, e.g. 1.4e12.")],
    gpu: Annotated[str, typer.Option(help="Accelerator id, e.g. h100.")],
    gpus: Annotated[int, typer.Option(help="Accelerator count.")],
    precision: Annotated[str, typer.Option(help="bf16 or fp8.")] = "bf16",
    usd_per_gpu_hour: Annotated[
        float | None,
        typer.Option("--usd-per-gpu-hour", help="Price per GPU-hour (else from the catalog)."),
    ] = None,
    instance: Annotated[str | None, typer.Option(help="Instance whose price to use.")] = None,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Price date YYYY-MM-DD.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Audit a quote: implied MFU and whether it is physically possible."""
    values = {
        f: _parse_number(v, f"--{f}")
        for f, v in (("cost", cost), ("params", params), ("tokens", tokens))
    }
    for f, v in values.items():
        if v is None or v <= 0:
            msg = f"must be > 0 (got {v})"
            raise SpecError(msg, source="command line", field=f"--{f}")
    if gpus <= 0:
        msg = f"must be > 0 (got {gpus})"
        raise SpecError(msg, source="command line", field="--gpus")
    if precision not in ("bf16", "fp8"):
        msg = f"{precision!r} is not allowed; allowed values: bf16, fp8"
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
    if as_json:
        print_json(audit.as_dict())
        return
    color = {"impossible": "red", "implausible": "yellow", "plausible": "green"}[audit.verdict]
    console.print(f"[bold {color}]{audit.verdict.upper()}[/bold {color}]: {audit.explanation}")
    console.print(f"price: {audit.price_source}")


def _audit(values: dict[str, float | None], gpu: str, gpus: int, precision: str, usd_per_gpu_hour: float | None,
           instance: str | None, day: date | None) -> QuoteAudit:  # fmt: skip
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
