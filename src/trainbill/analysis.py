"""What the report and the web app show, worked out in numbers: the library's analysis layer.

The forecast, the headline (P90 budget, ranked actions), the planner's right-sizing table and
cost/time Pareto front (or a node-count sweep where the planner cannot run), the Monte Carlo
percentiles and histograms, and the spend over time: ``analyse`` gathers them into one
``Analysis``. ``trainbill.report`` renders it as HTML and ``trainbill.web`` serves parts of it
as JSON; neither computes anything of its own, so the two can never disagree. Pure: no I/O,
no imports of the CLI, the report or the web app.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import numpy as np

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import TrainbillError
from trainbill.forecasting import Forecast, forecast
from trainbill.headline import Outlook, outlook_of
from trainbill.optimize import Candidate, RightSizeRow, optimize, own_mix_space
from trainbill.simulate import Histogram, Simulation, Summary
from trainbill.simulate import simulate as run_simulation
from trainbill.sizing import SIZING_FACTORS, SizingPoint, pareto_front, right_sizing
from trainbill.spec import Plan
from trainbill.spend import SpendOverTime, spend_of

__all__ = [
    "SIZING_FACTORS",
    "Analysis",
    "PlannerSummary",
    "SimulationSummary",
    "SizingPoint",
    "analyse",
    "pareto_front",
    "planner_summary",
    "right_sizing",
    "simulation_of",
    "simulation_summary",
]


@record
class SimulationSummary:
    """Percentiles and histograms of simulated bills and wall-clock hours, and the deadline odds."""

    trials: int
    p50_usd: float
    p90_usd: float
    p50_hours: float | None
    p90_hours: float | None
    cost_edges: tuple[float, ...]
    cost_counts: tuple[int, ...]
    hours_edges: tuple[float, ...] = ()
    hours_counts: tuple[int, ...] = ()
    deadline_hours: float | None = None
    p_miss_deadline: float | None = None
    source: str = ""


@record
class PlannerSummary:
    """What ``trainbill.optimize`` says around the plan (the report's right-sizing and Pareto
    front).

    Attributes:
        rightsizing: the plan's own instance and purchase mix at node counts around its own
            (wall hours, scaling efficiency, cost, and whether more nodes still pay).
        rightsizing_mix: the mix those rows hold fixed, in words.
        pareto: the cost/time front over every instance, cloud, purchase mix, orchestrator and
            checkpoint interval searched (deadline not applied, so the whole trade-off shows).
        user: the plan itself, priced the same way.
        best_in_deadline: the cheapest front point within the plan's deadline (None: no
            deadline, or nothing meets it). The front holds the cheapest point under any time
            limit, so this is the planner's best plan for that deadline.
        evaluated: configurations priced by both searches.
        elapsed_s: wall-clock seconds of both searches.
    """

    rightsizing: tuple[RightSizeRow, ...]
    rightsizing_mix: str
    pareto: tuple[Candidate, ...]
    user: Candidate
    best_in_deadline: Candidate | None
    evaluated: int
    elapsed_s: float


@record
class Analysis:
    """Everything the report shows, in numbers; a ``None`` section is one that was not worked out
    (the notes say why), rendered as 'not available'.

    ``planner`` is the right-sizing table and Pareto front from ``trainbill.optimize``; when the
    planner cannot run for the plan (``planner_note`` says why) the report falls back to the
    node-count sweep in ``sizing``/``pareto`` (empty when the planner ran).
    """

    plan: Plan
    forecast: Forecast
    generated: date
    sizing: tuple[SizingPoint, ...]
    sizing_basis: str
    pareto: tuple[SizingPoint, ...]
    simulation: SimulationSummary | None
    simulation_note: str
    planner: PlannerSummary | None = None
    planner_note: str = ""
    #: The ledger by calendar day and month (``trainbill.spend``); None: worked out when drawn.
    spend: SpendOverTime | None = None
    #: The budget and the ranked actions, beside the forecast (``headline.outlook_of``; None:
    #: not worked out, and the report says so).
    outlook: Outlook | None = None


def _mix_words(c: Candidate) -> str:
    sp = (
        "no Savings Plan"
        if c.savings_plan == "none"
        else f"{c.savings_plan} Savings Plan at {c.savings_plan_coverage:.0%}"
    )
    return (
        f"{c.instance} ({c.provider} {c.region}), {c.orchestrator}, {c.spot_fraction:.0%} spot, "
        f"{sp}, checkpoint every {c.checkpoint_interval_hours:g} h"
    )


def planner_summary(
    plan: Plan, catalog: Catalog, *, base: Forecast, today: date | None = None
) -> PlannerSummary:
    """Run the planner twice: the plan's own mix at other node counts, and the open search.

    The plan's deadline is lifted for both searches so a plan that misses it still gets its
    trade-off curve; the deadline is applied afterwards (``best_in_deadline``) and drawn on the
    chart. Both searches together take about a second with the packaged catalog.

    Raises:
        TrainbillError: the planner cannot price the plan (e.g. no node count holds the model).
    """
    open_plan = plan.model_copy(
        update={"run": plan.run.model_copy(update={"deadline_hours": None})}
    )
    u = base.usage
    counts = sorted({max(1, round(u.nodes * f)) for f in SIZING_FACTORS})
    own = own_mix_space(u, tuple(counts))
    sized = optimize(open_plan, catalog, space=own, clouds=(u.provider,), today=today)
    wide = optimize(open_plan, catalog, today=today)
    if wide.user is None:
        # The planner could not price the plan as written (``wide.skipped`` says why).
        msg = "the planner could not price the plan itself"
        raise TrainbillError(msg)
    deadline = plan.run.deadline_hours
    in_time = [c for c in wide.pareto if deadline is not None and c.wall_hours <= deadline]
    return PlannerSummary(
        rightsizing=sized.rightsizing,
        rightsizing_mix=_mix_words(sized.best),
        pareto=wide.pareto,
        user=wide.user,
        best_in_deadline=min(in_time, key=lambda c: (c.total_usd, c.wall_hours))
        if in_time
        else None,
        evaluated=sized.evaluated + wide.evaluated,
        elapsed_s=sized.elapsed_s + wide.elapsed_s,
    )


def simulation_summary(
    totals_usd: Sequence[float],
    wall_hours: Sequence[float] | None = None,
    *,
    deadline_hours: float | None = None,
    bins: int = 40,
    source: str = "",
) -> SimulationSummary:
    """P50/P90, histograms and the share of trials past the deadline, for samples from elsewhere.

    The percentiles and bins are ``trainbill.simulate``'s own (``Summary.of``, ``Histogram.of``:
    linear interpolation, equal-width bins), so sampled bills summarize the same wherever they
    come from.
    """
    totals = np.asarray(totals_usd, dtype=float)
    if totals.size == 0:
        msg = "a simulation summary needs at least one trial"
        raise ValueError(msg)
    cost, cost_hist = Summary.of(totals), Histogram.of(totals, bins=bins)
    hours = (
        np.asarray(wall_hours, dtype=float) if wall_hours is not None and len(wall_hours) else None
    )
    wall = Summary.of(hours) if hours is not None else None
    wall_hist = (
        Histogram.of(hours, bins=bins) if hours is not None else Histogram(edges=(), counts=())
    )
    p_miss = (
        float(np.mean(hours > deadline_hours))
        if hours is not None and deadline_hours is not None
        else None
    )
    return SimulationSummary(
        trials=int(totals.size),
        p50_usd=cost.p50,
        p90_usd=cost.p90,
        p50_hours=wall.p50 if wall is not None else None,
        p90_hours=wall.p90 if wall is not None else None,
        cost_edges=cost_hist.edges,
        cost_counts=cost_hist.counts,
        hours_edges=wall_hist.edges,
        hours_counts=wall_hist.counts,
        deadline_hours=deadline_hours,
        p_miss_deadline=p_miss,
        source=source,
    )


def simulation_of(sim: Simulation) -> SimulationSummary:
    """A ``trainbill.simulate`` result as the summary the report and the web app show."""
    return SimulationSummary(
        trials=sim.trials,
        p50_usd=sim.cost_usd.p50,
        p90_usd=sim.cost_usd.p90,
        p50_hours=sim.wall_hours.p50,
        p90_hours=sim.wall_hours.p90,
        cost_edges=sim.cost_histogram.edges,
        cost_counts=sim.cost_histogram.counts,
        hours_edges=sim.wall_histogram.edges,
        hours_counts=sim.wall_histogram.counts,
        deadline_hours=sim.deadline_hours,
        p_miss_deadline=sim.deadline_miss_probability,
        source=f"trainbill.simulate: {sim.trials:,} trials, seed {sim.seed}",
    )


def analyse(
    plan: Plan,
    catalog: Catalog,
    *,
    today: date | None = None,
    trials: int = 2000,
    seed: int = 0,
    simulate: bool = True,
    search: bool = True,
) -> Analysis:
    """Forecast the plan with its headline, run the planner (or sweep node counts), simulate.

    ``search=False`` skips the planner (about a second) and uses the node-count sweep;
    ``simulate=False`` skips the Monte Carlo.
    """
    # The headline's budget is the risk section's simulation (same trials and seed, so the
    # report shows one P90); without one, the CLI's own (``forecast --json``'s trials and seed).
    fc = forecast(plan, catalog, today=today)
    if simulate:
        outlook = outlook_of(plan, fc, catalog, today=today, trials=trials, seed=seed)
    else:
        outlook = outlook_of(plan, fc, catalog, today=today)
    planner: PlannerSummary | None = None
    planner_note = "The planner search was not requested; right-sizing from a node-count sweep."
    if search:
        try:
            planner = planner_summary(plan, catalog, base=fc, today=today)
        except TrainbillError as exc:
            planner_note = (
                f"The planner could not search around this plan ({exc}); right-sizing from a "
                "node-count sweep."
            )
    sizing: tuple[SizingPoint, ...] = ()
    basis = ""
    if planner is None:
        sizing, basis = right_sizing(plan, catalog, today=today, base=fc)
    sim: SimulationSummary | None = None
    budget = outlook.budget
    note = "Monte Carlo simulation was not requested (--trials 0)" + (
        f"; the headline's P90 budget is the forecast's own ({budget.basis.rstrip('.')})."
        if budget is not None
        else "."
    )
    if simulate:
        sim = simulation_of(run_simulation(plan, catalog, trials=trials, rng=seed, today=today))
        note = ""
    return Analysis(
        plan=plan,
        forecast=fc,
        outlook=outlook,
        generated=today or date.today(),  # noqa: DTZ011 - a calendar date
        sizing=sizing,
        sizing_basis=basis,
        pareto=pareto_front(sizing),
        simulation=sim,
        simulation_note=note,
        planner=planner,
        planner_note="" if planner is not None else planner_note,
        spend=spend_of(fc),
    )
