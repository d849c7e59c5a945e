"""``trainbill optimize`` (the planner) and ``trainbill commit`` (the Savings Plan advisor).

``optimize --export skypilot`` describes the best plan as a SkyPilot task YAML (we forecast; the
user launches): printed on stdout instead of the tables, or written atomically with
``--export-file`` (never over an existing file without ``--force``).
"""

from __future__ import annotations

import math
import sys
from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from trainbill.cli import _plan_flags as pf
from trainbill.cli import app
from trainbill.cli._common import (
    CALIBRATION_HELP,
    catalog_from_options,
    check_output_path,
    console,
    finite_option,
    print_json,
    read_calibrations,
    write_outputs,
)
from trainbill.errors import SpecError, shown_value
from trainbill.spec import plan_to_toml
from trainbill.usecases.commit import (
    DEFAULT_INSTANCE,
    RULE_OF_THUMB,
    CommitAdvice,
    advise_commitment,
)
from trainbill.usecases.optimize import (
    Candidate,
    OptimizationResult,
    OptimizedPlan,
    SearchSpace,
    optimize_plan,
)

__all__ = ["EXPORT_FORMATS", "plan_to_toml"]


def _split(text: str | None, flag: str, cap: int | None = None) -> tuple[str, ...] | None:
    """A comma list, refused past ``cap`` values (default ``spec.MAX_AXIS_VALUES``, the web
    API's cap) before any item is read."""
    from trainbill.spec import MAX_AXIS_VALUES

    if text is None:
        return None
    cap = MAX_AXIS_VALUES if cap is None else cap
    if text.count(",") >= cap:
        msg = f"{text.count(',') + 1:,} values; a search axis takes at most {cap:,}"
        raise SpecError(msg, source="command line", field=flag)
    items = tuple(p.strip() for p in text.split(",") if p.strip())
    if not items:
        msg = "give a comma-separated list (e.g. aws,gcp)"
        raise SpecError(msg, source="command line", field=flag)
    return items


def _node_counts(text: str | None) -> tuple[int, ...] | None:
    """``--nodes``: whole numbers from 1 to ``spec.MAX_NODES``, as a comma list whose items may
    be ranges: ``A..B`` (every count from A to B) or ``A,...,B`` (the same, written out as in
    issue #40). At most ``spec.MAX_NODE_AXIS_VALUES`` counts in all, counted before any range is
    expanded; each number range-checked before ``int()`` (``int(1e308)`` is a 309-digit
    integer no float arithmetic survives)."""
    from trainbill.spec import MAX_NODE_AXIS_VALUES

    items = _split(text, "--nodes", cap=MAX_NODE_AXIS_VALUES)
    if items is None:
        return None
    spans: list[tuple[int, int]] = []
    for k, item in enumerate(items):
        if item == "...":
            if k == 0 or k == len(items) - 1 or "..." in (items[k - 1], items[k + 1]):
                msg = "'...' must stand between two node counts (1,...,512)"
                raise SpecError(msg, source="command line", field="--nodes")
            continue
        lo, dots, hi = item.partition("..")
        a, b = _whole(lo, text), _whole(hi, text) if dots else None
        spans.append((a, a if b is None else b))
        if k >= 2 and items[k - 1] == "...":
            spans[-2:] = [(spans[-2][0], spans[-1][1])]  # A,...,B is A..B
    if any(a > b for a, b in spans):
        msg = f"a range runs from the smaller count to the larger (got {shown_value(text, 60)})"
        raise SpecError(msg, source="command line", field="--nodes")
    total = sum(b - a + 1 for a, b in spans)
    if total > MAX_NODE_AXIS_VALUES:
        msg = f"{total:,} node counts; a search takes at most {MAX_NODE_AXIS_VALUES:,}"
        raise SpecError(msg, source="command line", field="--nodes")
    return tuple(dict.fromkeys(n for a, b in spans for n in range(a, b + 1)))


def _whole(item: str, text: str | None) -> int:
    """One node count of ``--nodes``: a whole number from 1 to ``spec.MAX_NODES``."""
    from trainbill.spec import MAX_NODES

    try:
        n = float(item)
    except ValueError:
        n = math.nan
    if not math.isfinite(n) or n != int(n) or not 1 <= n <= MAX_NODES:
        got = shown_value(text, 60)
        msg = f"node counts must be whole numbers from 1 to {MAX_NODES:,} (got {got})"
        raise SpecError(msg, source="command line", field="--nodes")
    return int(n)


def _row(c: Candidate) -> list[str]:
    kind = f" {c.savings_plan_kind}" if c.savings_plan_kind else ""
    sp = (
        "none"
        if c.savings_plan == "none"
        else f"{c.savings_plan}{kind} {c.savings_plan_coverage:.0%}"
    )
    return [
        f"{c.provider}:{c.instance}",
        f"{c.nodes} ({c.gpus} {c.accelerator})",
        c.orchestrator,
        f"{c.spot_fraction:.0%}",
        sp,
        f"{c.checkpoint_interval_hours:.3g} h",
        f"{c.wall_hours:,.1f}",
        f"${c.total_usd:,.0f}",
        f"${c.p90_usd:,.0f}",
        ", ".join(k.kind.replace("_", " ") for k in c.caveats) or "-",
    ]


def _candidates_table(title: str, rows: list[Candidate], *, wide: bool = False) -> None:
    """Print candidates without cutting instance names or dollars (``trainbill.cli._tables``)."""
    from trainbill.cli import _common
    from trainbill.cli._tables import Col, print_table

    cols = [
        Col("cloud:instance"),
        Col("nodes", "right"),
        Col("orch.", drop=4),
        Col("spot", "right", drop=5),
        Col("savings plan", drop=6),
        Col("ckpt", "right", drop=7),
        Col("wall h", "right"),
        Col("expected", "right"),
        Col("bad case", "right", drop=3),  # not the budget's P90 (issue #42)
        Col("caveats", kind="text", drop=8),
    ]
    print_table(_common.console, title, cols, [_row(c) for c in rows], wide=wide)


def _render(result: OptimizationResult, *, wide: bool = False) -> None:
    label = "bad-case cost" if result.objective == "p90" else "expected cost"
    limits = []
    if result.deadline_hours is not None:
        limits.append(f"deadline {result.deadline_hours:,.1f} h")
    if result.budget_usd is not None:
        limits.append(f"budget ${result.budget_usd:,.0f}")
    console.print(
        f"Minimising {label}{' subject to ' + ', '.join(limits) if limits else ''}: "
        f"{result.evaluated:,} configurations, {result.feasible:,} feasible, "
        f"{result.elapsed_s:.2f} s"
    )
    user = result.user
    if user is None:
        _candidates_table(
            "Best plan (yours does not fit in memory; see below)", [result.best], wide=wide
        )
    else:
        _candidates_table("Best plan vs yours", [result.best, user], wide=wide)
    for caveat in result.best.caveats:
        console.print(f"caveat ({caveat.kind.replace('_', ' ')}): {escape(caveat.text)}")
    console.print(
        "P90 = run-to-run chance (failures, reclaims, restarts; a normal approximation, for "
        "ranking); `trainbill forecast`'s budget also samples the time model's own error."
    )
    if (
        user is not None
        and result.deadline_hours is None
        and result.best.wall_hours > user.wall_hours
    ):
        console.print(
            "no deadline was given, so the cheapest plan may run longest "
            f"({result.best.wall_hours:,.0f} h vs your {user.wall_hours:,.0f} h): pass "
            "--deadline-hours (or set run.deadline_hours) to bound it, or pick from the Pareto "
            "front below"
        )
    front = list(result.pareto)
    if len(front) > 15:
        step = (len(front) - 1) / 14
        front = [front[round(i * step)] for i in range(15)]
    _candidates_table(f"Pareto front: cost vs time ({len(result.pareto)} points)", front, wide=wide)
    from trainbill.cli._tables import money

    t = Table(title=f"Right-sizing {result.best.instance} (best purchase mix)")
    for col in (
        "nodes",
        "GPUs",
        "wall h",
        "efficiency",
        "cost",
        "$ per hour saved",
        "more nodes pay?",
    ):
        t.add_column(col, justify="right")
    for r in result.rightsizing:
        t.add_row(
            str(r.nodes),
            str(r.gpus),
            f"{r.wall_hours:,.1f}",
            f"{r.efficiency:.0%}",
            f"${r.total_usd:,.0f}",
            "-" if r.usd_per_hour_saved is None else money(r.usd_per_hour_saved),
            "yes" if r.pays else "no",
        )
    console.print(t)
    console.print("'more nodes pay?' = cost × time falls when stepping up from the previous row.")
    for note in result.skipped:
        console.print(f"[dim]skipped: {escape(note)}[/dim]")


_DeadlineHours = Annotated[float | None, typer.Option("--deadline-hours", help="Wall-clock limit.")]
_BudgetUsd = Annotated[float | None, typer.Option("--budget-usd", help="Cost limit.")]
_P90 = Annotated[bool, typer.Option("--p90", help="Minimise P90 cost (normal approximation).")]
_Clouds = Annotated[
    str | None,
    typer.Option(
        "--clouds",
        help=(
            "Comma list of aws,gcp,azure: search every accelerator on them "
            "(default: the plan's own cloud and accelerator vendor)."
        ),
    ),
]
_Instances = Annotated[
    str | None, typer.Option("--instances", help="Comma list of instance types.")
]
_Nodes = Annotated[
    str | None,
    typer.Option(
        "--nodes",
        help="Comma list of node counts; ranges as 8..64 or 1,...,512 (at most 1,024 counts).",
    ),
]
_SavingsPlans = Annotated[
    str | None,
    typer.Option("--savings-plans", help="Commitment terms to search, e.g. 1yr,3yr."),
]
_AllowStandIns = Annotated[
    bool,
    typer.Option(
        "--allow-stand-ins",
        help=(
            "Also search catalog stand-ins (instances or prices no cloud publishes, e.g. an "
            "H800 node)."
        ),
    ),
]
_AsJson = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
_Wide = Annotated[
    bool, typer.Option("--wide", help="Show every column, whatever the terminal width.")
]
_Output = Annotated[
    Path | None, typer.Option("-o", "--output", help="Write the best plan as TOML.")
]
_Export = Annotated[
    str | None,
    typer.Option(
        "--export", help="Also describe the best plan for a launcher: skypilot (a task YAML)."
    ),
]
_ExportFile = Annotated[
    Path | None,
    typer.Option(
        "--export-file",
        help="Write the --export file here (default: print it instead of the tables).",
    ),
]
_Force = Annotated[
    bool, typer.Option("--force", help="Overwrite --output/--export-file if they exist.")
]
_CatalogDir = Annotated[
    list[Path] | None, typer.Option("--catalog", help="Catalog overlay directory.")
]
_Calibration = Annotated[list[Path] | None, typer.Option("--calibration", help=CALIBRATION_HELP)]


@app.command("optimize")
def optimize_command(
    plan_file: pf.PlanFile = None,
    params: pf.Params = None,
    active_params: pf.ActiveParams = None,
    tokens: pf.Tokens = None,
    gpu: pf.Gpu = None,
    gpus: pf.Gpus = None,
    precision: pf.Precision = None,
    architecture: pf.Architecture = None,
    attention_share: pf.AttentionShare = None,
    hours: pf.Hours = None,
    region: pf.Region = None,
    as_of: pf.AsOf = None,
    run_date: pf.RunDate = None,
    deadline_hours: _DeadlineHours = None,
    budget_usd: _BudgetUsd = None,
    p90: _P90 = False,
    clouds: _Clouds = None,
    instances: _Instances = None,
    nodes: _Nodes = None,
    savings_plans: _SavingsPlans = None,
    allow_stand_ins: _AllowStandIns = False,
    as_json: _AsJson = False,
    wide: _Wide = False,
    output: _Output = None,
    export: _Export = None,
    export_file: _ExportFile = None,
    force: _Force = False,
    catalog_dir: _CatalogDir = None,
    calibration: _Calibration = None,
) -> None:
    """Search instance × nodes × spot × Savings Plan × orchestrator × checkpoint interval × cloud."""  # noqa: E501 - Typer lists the first line as written
    # The plan (a file, the run flags, or both) is the template and always a candidate; the
    # run flags describe it as ``trainbill forecast``'s do (--nodes and --instances here are
    # the search's lists, not the template's).
    _check_export(export, export_file, output, as_json=as_json)
    inputs = () if plan_file is None else (plan_file,)
    finite_option(deadline_hours, "--deadline-hours")
    finite_option(budget_usd, "--budget-usd")
    if output is not None:
        check_output_path(output, flag="--output", force=force, inputs=inputs)
    if export_file is not None:
        # A launcher YAML over the plan it came from would destroy the plan, --force or not.
        check_output_path(export_file, flag="--export-file", force=force, inputs=inputs)
    space = SearchSpace(
        instances=_split(instances, "--instances"),
        nodes=_node_counts(nodes),
        savings_plans=_split(savings_plans, "--savings-plans"),
    )
    flags = pf.run_flags(
        params=params, active_params=active_params, tokens=tokens, precision=precision, gpu=gpu,
        gpus=gpus, hours=hours, region=region, as_of=as_of, run_date=run_date,
        architecture=architecture, attention_share=attention_share,
    )  # fmt: skip
    plan = pf.build_plan(plan_file, flags=flags)
    # Bill rates only: the grid's plans have no measured MFU, so a profile file is refused.
    cals = read_calibrations(calibration, command="optimize", measured_mfu=False)
    done = optimize_plan(
        plan, catalog_from_options(catalog_dir), cals, space=space,
        objective="p90" if p90 else "expected", deadline_hours=deadline_hours,
        budget_usd=budget_usd, clouds=_split(clouds, "--clouds"),
        allow_stand_ins=allow_stand_ins, export=export,
    )  # fmt: skip
    writes = _writes(done, plan_file, output, export_file, hours_given=plan.run.hours is not None)
    write_outputs(writes, force=force)  # both files or neither
    if done.export is not None and export_file is None:
        sys.stdout.write(done.export)
        return
    if as_json:
        print_json(done.as_dict())
        return
    _render(done.result, wide=wide)
    for c in done.cautions:
        console.print(f"[yellow]warning:[/yellow] {escape(c.text)}")
    if output is not None:
        console.print(f"best plan written to {output}")
    if export_file is not None:
        console.print(
            f"SkyPilot task for the best plan written to {export_file} (we forecast; 'sky "
            "launch' runs it)"
        )


def _writes(
    done: OptimizedPlan,
    plan_file: Path | None,
    output: Path | None,
    export_file: Path | None,
    *,
    hours_given: bool,
) -> list[tuple[Path, str | bytes, str]]:
    """The files to write: the best plan as TOML (``--output``, with a header saying where it
    came from) and the launcher description (``--export-file``)."""
    writes: list[tuple[Path, str | bytes, str]] = []
    if output is not None:
        b = done.result.best
        header = (
            f"Written by 'trainbill optimize {plan_file.name if plan_file else '(flags)'}': "
            f"{b.nodes} × {b.instance} "
            f"({b.provider}), expected ${b.total_usd:,.0f} in {b.wall_hours:,.1f} h."
        )
        if hours_given and not b.is_user_plan:
            header += "\nrun.hours scaled from the original plan by GPU count × peak throughput."
        writes.append((output, plan_to_toml(done.result.best_plan, header=header), "--output"))
    if done.export is not None and export_file is not None:
        writes.append((export_file, done.export, "--export-file"))
    return writes


#: Launchers ``--export`` can describe the best plan for.
EXPORT_FORMATS = ("skypilot",)


def _check_export(
    export: str | None, export_file: Path | None, output: Path | None, *, as_json: bool
) -> None:
    """Refuse contradictory export flags before the search runs (and before anything is written)."""
    if export is None:
        if export_file is not None:
            msg = "--export-file needs --export (e.g. --export skypilot)"
            raise SpecError(msg, source="command line", field="--export-file")
        return
    if export not in EXPORT_FORMATS:
        msg = f"unknown export format {export!r}; allowed values: {', '.join(EXPORT_FORMATS)}"
        raise SpecError(msg, source="command line", field="--export")
    if export_file is None and as_json:
        msg = "--json and a printed export would share stdout; give --export-file PATH"
        raise SpecError(msg, source="command line", field="--export-file")
    if export_file is not None and output is not None and export_file.resolve() == output.resolve():
        msg = "--export-file and --output name the same file; give two paths"
        raise SpecError(msg, source="command line", field="--export-file")


def _render_commit(a: CommitAdvice) -> None:
    console.print(
        f"{a.months} months on {a.instance} ({a.provider} {a.region}, prices as of {a.as_of}): "
        f"baseline {a.baseline_gpu_hours:,.0f}, mean {a.mean_gpu_hours:,.0f}, peak "
        f"{a.peak_gpu_hours:,.0f} GPU-h/month; on-demand "
        f"${a.on_demand_usd_per_gpu_hour:,.3f}/GPU-h = ${a.on_demand_usd_per_month:,.0f}/month; "
        f"horizon {a.horizon_months} months"
    )
    t = Table(title="Commitment that minimises expected cost")
    for col in (
        "term",
        "$/GPU-h",
        "break-even util.",
        "commit GPU-h/mo",
        "commit $/h",
        "of baseline",
        "expected util.",
        "$/month",
        "saves",
        f"rule {RULE_OF_THUMB[0]:.0%}/{RULE_OF_THUMB[1]:.0%} $/month",
    ):
        t.add_column(col, justify="left" if col == "term" else "right")
    for x in a.terms:
        t.add_row(
            x.term,
            f"${x.rate_usd_per_gpu_hour:,.3f}",
            f"{x.effective_break_even_utilization:.0%}",
            f"{x.commit_gpu_hours_per_month:,.0f}",
            f"${x.commit_usd_per_hour:,.0f}",
            _share(x.share_of_baseline),
            f"{x.expected_utilization:.0%}",
            f"${x.expected_usd_per_month:,.0f}",
            f"{x.savings_pct:.1f}%",
            f"${x.rule_usd_per_month[0]:,.0f} / ${x.rule_usd_per_month[1]:,.0f}",
        )
    console.print(t)
    for x in a.terms:
        console.print(f"{x.term} rate: {escape(x.rate_source)}")
    for why in a.unpriced_terms:
        console.print(f"not advised: {escape(why)}")
    for note in a.notes:
        console.print(f"note: {escape(note)}")
    r = Table(title="Does 'cover 60-70% of baseline' hold? (future usage = scale × history)")
    for col in (
        "term",
        "scale",
        "optimal commit",
        "of baseline",
        "rule's extra $/month",
        "rule holds",
    ):
        r.add_column(col, justify="left" if col == "term" else "right")
    for x in a.terms:
        for c in x.rule_checks:
            r.add_row(
                x.term,
                f"{c.scale:g}×",
                f"{c.optimal_commit_gpu_hours:,.0f}",
                _share(c.optimal_share_of_baseline),
                f"${c.rule_regret_usd_per_month:,.0f}",
                "yes" if c.holds else "no",
            )
    console.print(r)
    best = next((x for x in a.terms if x.term == a.best_term), None)
    if best is None:
        outlived = all(x.effective_break_even_utilization >= 1 for x in a.terms)
        why = (
            f"every term outlives the {a.horizon_months}-month horizon: the unused months make "
            "a committed hour cost more than on-demand (effective break-even ≥ 100%)"
            if outlived
            else "usage too uneven to clear the break-even utilization"
        )
        console.print(f"Recommendation: no commitment ({why}).")
    else:
        console.print(
            f"Recommendation: {best.term} plan, {best.commit_gpu_hours_per_month:,.0f} "
            f"GPU-h/month (${best.commit_usd_per_hour:,.0f}/h commitment, "
            f"{_share(best.share_of_baseline)} of baseline), saving {best.savings_pct:.1f}% vs "
            "all on-demand. The rule holds within 1% of on-demand spend only where marked 'yes' "
            "above."
        )
        # The advice reads monthly totals; the provider applies a commitment hour by hour.
        console.print(
            "caveat: a Savings Plan is applied hour by hour; from monthly totals this assumes "
            "each month's GPU-hours are spread evenly, so a spiky workload uses less of the "
            "commitment than shown"
        )


@app.command("commit")
def commit_command(
    usage_csv: Annotated[
        Path, typer.Argument(help="CSV with month (YYYY-MM) and gpu_hours columns.")
    ],
    instance: Annotated[
        str,
        typer.Option(
            "--instance",
            help="Instance type the GPU-hours run on (it needs a published commitment rate).",
        ),
    ] = DEFAULT_INSTANCE,
    region: Annotated[str | None, typer.Option("--region", help="Price region.")] = None,
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="Price date YYYY-MM-DD (default today).")
    ] = None,
    horizon_months: Annotated[
        int, typer.Option("--horizon-months", help="Months the workload will last.")
    ] = 36,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    catalog_dir: Annotated[
        list[Path] | None, typer.Option("--catalog", help="Catalog overlay directory.")
    ] = None,
    savings_plan_kind: Annotated[
        str | None,
        typer.Option(
            "--savings-plan-kind",
            help="AWS: ec2-instance (default: one family, deeper discount) or compute.",
        ),
    ] = None,
) -> None:
    """Savings Plan advisor: commitment level and term from monthly GPU-hour usage."""
    try:
        day = date.fromisoformat(as_of) if as_of else date.today()  # noqa: DTZ011 - a calendar date
    except ValueError:
        msg = f"{as_of!r} is not a date (YYYY-MM-DD)"
        raise SpecError(msg, source="command line", field="--as-of") from None
    advice = advise_commitment(
        usage_csv,
        catalog_from_options(catalog_dir),
        instance=instance,
        region=region,
        as_of=day,
        horizon_months=horizon_months,
        kind=savings_plan_kind,
    )
    if as_json:
        print_json(advice.as_dict())
    else:
        _render_commit(advice)


def _share(share: float | None) -> str:
    """A share of the baseline month; with a zero baseline there is none ("n/a", not "inf%")."""
    return "n/a" if share is None else f"{share:.0%}"
