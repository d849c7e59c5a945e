"""``trainbill simulate``: the bill as a distribution (P50/P90/P99), checkpoint interval, spot or
not."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from trainbill.cli import _plan_flags as pf
from trainbill.cli import app
from trainbill.cli._common import (
    CALIBRATION_HELP,
    catalog_from_options,
    console,
    print_json,
    read_calibrations,
)
from trainbill.errors import SimulationError
from trainbill.ledger import CATEGORIES
from trainbill.usecases.simulate import (
    DEFAULT_CHUNK,
    MAX_TRIALS,
    CheckpointStudy,
    Simulation,
    SpotComparison,
    simulate_plan,
)

__all__ = ["render_simulation"]

#: Runs at least this long show a progress bar on stderr.
_PROGRESS_FROM_TRIALS = 200_000
_SPARK = " ▁▂▃▄▅▆▇█"


def _money(x: float) -> str:
    # Rounding noise (-1e-16) must not print as "-$0".
    return f"-${-x:,.0f}" if round(x) < 0 else f"${max(x, 0.0):,.0f}"


def _parse_range(text: str) -> tuple[float, float]:
    """``LOW:HIGH`` fractions of on-demand with 0 < LOW <= HIGH <= 1 (spot never costs more)."""
    try:
        lo_s, hi_s = text.split(":")
        lo, hi = float(lo_s), float(hi_s)
    except ValueError:
        msg = (
            f"--spot-price-of-on-demand: expected LOW:HIGH fractions, e.g. 0.65:0.75 (got {text!r})"
        )
        raise SimulationError(msg) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= hi <= 1):
        msg = (
            "--spot-price-of-on-demand: LOW:HIGH must be fractions of on-demand with "
            f"0 < LOW <= HIGH <= 1, e.g. 0.65:0.75 (got {text!r})"
        )
        raise SimulationError(msg)
    return lo, hi


def _check_counts(trials: int, seed: int | None, chunk_size: int) -> None:
    """Validate the counts before anything runs (and before a progress bar is drawn)."""
    if trials < 1:
        msg = f"--trials must be a positive integer, at most {MAX_TRIALS:,} (got {trials:,})"
        raise SimulationError(msg)
    if trials > MAX_TRIALS:
        msg = (
            f"--trials must be at most {MAX_TRIALS:,} (got {trials:,}); per-trial results take "
            "16 bytes each"
        )
        raise SimulationError(msg)
    if seed is not None and seed < 0:
        msg = f"--seed must be a non-negative integer (got {seed})"
        raise SimulationError(msg)
    if chunk_size <= 0:
        msg = f"--chunk-size must be a positive integer (got {chunk_size:,})"
        raise SimulationError(msg)


def _spark(counts: tuple[int, ...]) -> str:
    top = max(counts) or 1
    return "".join(_SPARK[round(c / top * (len(_SPARK) - 1))] for c in counts)


def render_simulation(
    sim: Simulation, study: CheckpointStudy | None, spot: SpotComparison | None
) -> None:
    """Percentile table, category means, histogram sparklines, checkpoint and spot verdicts."""
    table = Table(
        title=escape(
            f"{sim.name}: {sim.trials:,} simulated runs (seed {sim.seed}, {sim.elapsed_s:.2f} s)"
        )
    )
    for col in ("", "mean", "P10", "P50", "P90", "P99"):
        table.add_column(col, justify="left" if not col else "right")
    c, w = sim.cost_usd, sim.wall_hours
    table.add_row("cost", *(_money(v) for v in (c.mean, c.p10, c.p50, c.p90, c.p99)))
    table.add_row("wall-clock h", *(f"{v:,.1f}" for v in (w.mean, w.p10, w.p50, w.p90, w.p99)))
    console.print(table)
    se = (
        f" ± {sim.cost_se_usd:,.0f} s.e."
        if math.isfinite(sim.cost_se_usd)
        else ", s.e. n/a with one trial"
    )
    console.print(
        f"Deterministic forecast: [bold]{_money(sim.deterministic_total_usd)}[/bold], "
        f"{sim.deterministic_wall_hours:,.1f} h.  Analytic expectation: "
        f"{_money(sim.expected_total_usd)} (simulated mean {_money(sim.cost_usd.mean)}{se})"
    )
    p = sim.params
    if p.time_error_sigma_low > 0 or p.time_error_sigma_high > 0:
        ek = p.time_error_mean
        console.print(
            "The time model's own error is sampled with the run-to-run chance (actual / "
            f"forecast compute hours: median ×{p.time_error_median:.2f}, mean ×{ek:.2f}, from "
            "its leave-one-source-out residuals), so the expectation sits above the "
            "deterministic forecast."
        )
    if sim.deadline_miss_probability is not None:
        console.print(
            f"Deadline {sim.deadline_hours:g} h: missed in "
            f"[bold]{sim.deadline_miss_probability:.1%}[/bold] of runs"
        )
    console.print(
        f"cost  {_money(sim.cost_histogram.edges[0])} {_spark(sim.cost_histogram.counts)} "
        f"{_money(sim.cost_histogram.edges[-1])}"
    )
    console.print(
        f"hours {sim.wall_histogram.edges[0]:,.1f} {_spark(sim.wall_histogram.counts)} "
        f"{sim.wall_histogram.edges[-1]:,.1f}"
    )
    cats = Table(title="Mean cost by category")
    for col in ("category", "simulated mean", "forecast"):
        cats.add_column(col, justify="left" if col == "category" else "right")
    for cat in CATEGORIES:
        m, d = sim.by_category_mean_usd[cat], sim.deterministic_by_category_usd[cat]
        if m or d:
            cats.add_row(cat, _money(m), _money(d))
    console.print(cats)
    ev = sim.mean_events
    console.print(
        f"Per run on average: {ev['failures']:.2f} failures ({ev['failure_lost_hours']:.2f} h "
        f"lost), {ev['reclaims']:.2f} spot reclaims ({ev['reclaim_lost_hours']:.2f} h lost)"
    )
    _render_studies(study, spot)
    for warning in sim.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")


def _render_studies(study: CheckpointStudy | None, spot: SpotComparison | None) -> None:
    """The checkpoint-interval and spot-or-not verdicts (None: not run)."""
    if study is not None:
        yd = (
            f"{study.young_daly_hours:.2f} h"
            if study.young_daly_hours is not None
            else "n/a (no failures)"
        )
        mode = "async snapshot" if study.asynchronous else "synchronous write"
        mtbf = (
            f"{study.mtbf_hours:,.1f} h"
            if study.mtbf_hours is not None
            else "n/a: no failures or reclaims"
        )
        console.print(
            f"\n[bold]Checkpoint interval[/bold] ({study.checkpoint_stall_hours_each * 60:.1f} "
            f"min {mode}, job MTBF {mtbf}): Young/Daly {yd}, simulated optimum "
            f"{study.simulated_optimum_hours:.2f} h ({_money(study.optimum_mean_usd)}); the "
            f"plan's {study.plan_interval_hours:g} h costs {_money(study.plan_excess_usd)} more "
            "on average"
        )
    if spot is not None:
        console.print(
            f"\n[bold]Spot or not[/bold] ({spot.spot_fraction:.0%} spot): mean "
            f"{_money(spot.spot_mean_usd)}, P90 {_money(spot.spot_p90_usd)}; all on-demand: mean "
            f"{_money(spot.on_demand_mean_usd)}, P90 {_money(spot.on_demand_p90_usd)}.  Savings: "
            f"nominal {spot.nominal_savings:.1%}, expected {spot.expected_savings:.1%}, at P90 "
            f"{spot.p90_savings:.1%}"
        )


@app.command("simulate")
def simulate_cmd(
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
    spot_fraction: pf.SpotFraction = None,
    as_of: pf.AsOf = None,
    run_date: pf.RunDate = None,
    trials: Annotated[int, typer.Option(help=f"Simulated runs (1..{MAX_TRIALS:,}).")] = 100_000,
    seed: Annotated[int | None, typer.Option(help="Random seed (same seed, same results).")] = None,
    chunk_size: Annotated[
        int, typer.Option("--chunk-size", help="Trials per chunk (memory only).")
    ] = DEFAULT_CHUNK,
    spot_price_of_on_demand: Annotated[
        str | None,
        typer.Option(
            "--spot-price-of-on-demand",
            help="Spot price range as fractions of on-demand, e.g. 0.65:0.75.",
        ),
    ] = None,
    study_trials: Annotated[
        int,
        typer.Option(
            "--study-trials", help="Trials per point of the checkpoint and spot studies (0: skip)."
        ),
    ] = 4000,
    catalog_dir: Annotated[
        list[Path] | None, typer.Option("--catalog", help="Overlay catalog directory.")
    ] = None,
    calibration: Annotated[
        list[Path] | None, typer.Option("--calibration", help=CALIBRATION_HELP)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON contract.")] = False,
) -> None:
    """Simulate the run many times: P10-P99 of cost and wall-clock, checkpoint interval, spot or not."""  # noqa: E501 - Typer lists the first line as written
    _check_counts(trials, seed, chunk_size)
    if study_trials < 0 or study_trials > MAX_TRIALS:
        msg = f"--study-trials must be between 0 and {MAX_TRIALS:,} (got {study_trials})"
        raise SimulationError(msg)
    spot_range = (
        _parse_range(spot_price_of_on_demand) if spot_price_of_on_demand is not None else None
    )
    flags = pf.run_flags(
        params=params, active_params=active_params, tokens=tokens, precision=precision, gpu=gpu,
        gpus=gpus, instance=instance, nodes=nodes, hours=hours, provider=provider, region=region,
        spot_fraction=spot_fraction, as_of=as_of, run_date=run_date,
        architecture=architecture, attention_share=attention_share,
    )  # fmt: skip
    plan = pf.build_plan(plan_file, flags=flags)
    cals = read_calibrations(calibration, command="simulate")
    catalog = catalog_from_options(catalog_dir)
    with _progress(trials) as advance:
        done = simulate_plan(
            plan, catalog, cals, trials=trials, seed=seed, chunk_size=chunk_size,
            spot_price_of_on_demand=spot_range, study_trials=study_trials, progress=advance,
            source=str(plan_file) if plan_file else None,
        )  # fmt: skip
    if as_json:
        print_json(done.as_dict())
    else:
        render_simulation(done.simulation, done.checkpoint, done.spot)


@contextmanager
def _progress(trials: int) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr for long runs (its update callback), else nothing."""
    if trials < _PROGRESS_FROM_TRIALS:
        yield None
        return
    err = Console(stderr=True)
    with Progress(
        TextColumn("simulating"), BarColumn(), TextColumn("{task.completed:,}/{task.total:,}"),
        TimeRemainingColumn(), console=err, transient=True,
    ) as bar:  # fmt: skip
        task = bar.add_task("simulate", total=trials)
        yield lambda done, _: bar.update(task, completed=done)
