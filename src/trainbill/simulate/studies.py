"""Studies built on ``simulate``: the checkpoint interval and whether spot pays.

Each runs ``simulate`` on a changed usage with the same seed (common random numbers), so the
differences it reports are the change's, not the sampling noise's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from typing import Any

import numpy as np

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import SimulationError
from trainbill.forecasting import forecast_usage
from trainbill.simulate.run import _resolve, simulate
from trainbill.simulate.sampling import SimulationParams, _at_spot_price, expected_usage
from trainbill.spec import Plan
from trainbill.usage import Usage, failures_per_hour, reclaims_per_hour, young_daly_interval_hours

# --- checkpoint interval -----------------------------------------------------------------------


def with_interval(usage: Usage, interval_hours: float) -> Usage:
    """The usage with another checkpoint interval: count, stall and expected losses re-derived
    by ``Usage.with_schedule`` (``usage_for``'s own rule), so the plan's interval gives back the
    same usage."""
    if not interval_hours > 0:
        msg = f"checkpoint interval must be > 0 hours (got {interval_hours!r})"
        raise SimulationError(msg)
    return usage.with_schedule(interval_hours=interval_hours)


def _interruptions_per_hour(usage: Usage, p: SimulationParams) -> float:
    """The whole job's failures plus spot reclaims per hour at the simulation's rates."""
    return failures_per_hour(p.failure_rate_per_gpu_day, usage.gpus) + float(
        reclaims_per_hour(
            p.spot_reclaim_rate_per_node_hour, usage.nodes, usage.purchase.spot_fraction
        )
    )


def young_daly_interval(usage: Usage, p: SimulationParams) -> float | None:
    """Young/Daly first-order optimum sqrt(2 × checkpoint cost × MTBF), in hours.

    Checkpoint cost is one write's stall (the snapshot only, when asynchronous); MTBF is the
    whole job's: 1 / (GPU failures per hour + spot reclaims per hour). None when either is zero.
    """
    per_hour = _interruptions_per_hour(usage, p)
    delta = usage.checkpoint.stall_hours_each
    if per_hour <= 0 or delta <= 0:
        return None
    return young_daly_interval_hours(delta, 1.0 / per_hour)


@record
class CheckpointStudy:
    """Checkpoint interval: Young/Daly, the simulated optimum and what the plan's choice costs."""

    plan_interval_hours: float
    young_daly_hours: float | None
    mtbf_hours: float | None
    checkpoint_stall_hours_each: float
    asynchronous: bool
    simulated_optimum_hours: float
    grid: tuple[tuple[float, float, float], ...]  # (interval h, mean cost $, p90 cost $)
    plan_mean_usd: float
    optimum_mean_usd: float
    trials: int

    @property
    def plan_excess_usd(self) -> float:
        """Expected extra spend of the plan's interval over the simulated optimum."""
        return self.plan_mean_usd - self.optimum_mean_usd

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {
            "plan_interval_hours": self.plan_interval_hours,
            "young_daly_hours": self.young_daly_hours,
            "mtbf_hours": self.mtbf_hours,
            "checkpoint_stall_hours_each": self.checkpoint_stall_hours_each,
            "asynchronous": self.asynchronous,
            "simulated_optimum_hours": self.simulated_optimum_hours,
            "plan_mean_usd": self.plan_mean_usd,
            "optimum_mean_usd": self.optimum_mean_usd,
            "plan_excess_usd": self.plan_excess_usd,
            "trials": self.trials,
            "grid": [{"interval_hours": i, "mean_usd": m, "p90_usd": q} for i, m, q in self.grid],
        }


def checkpoint_study(
    plan_or_usage: Plan | Usage,
    catalog: Catalog,
    *,
    trials: int = 4000,
    rng: int | None = 0,
    params: SimulationParams | None = None,
    grid: Sequence[float] | None = None,
    today: date | None = None,
) -> CheckpointStudy | None:
    """Scan checkpoint intervals with common random numbers (same seed, per-component streams).

    The grid spans a quarter to four times the Young/Daly interval (geometric, 13 points) plus
    the plan's own interval and the longest interval the forecast recommends
    (``defaults.checkpoint.interval_hours``). The simulated optimum is the cheapest interval no
    longer than that, as the forecast's own optimum is (``usage``): checkpoints also serve
    rollbacks after loss spikes, which no failure rate counts, so the two never advise
    opposite intervals; longer rows are still shown. Returns None when the plan writes no
    checkpoints.
    """
    usage, _ = _resolve(plan_or_usage, catalog, today)
    if usage.checkpoint.size_gb <= 0 or usage.checkpoint.stall_hours_each <= 0:
        return None
    p = params if params is not None else SimulationParams.from_usage(usage, catalog)
    yd = young_daly_interval(usage, p)
    plan_interval = usage.checkpoint.interval_hours
    longest = float(catalog.value("defaults.checkpoint.interval_hours"))
    if grid is None:
        centre = yd if yd is not None else plan_interval
        points = set(np.round(centre * np.geomspace(0.25, 4.0, 13), 6).tolist())
        points.add(plan_interval)
        points.add(longest)
        # Never beyond the run itself: one checkpoint at the end is the longest useful interval.
        horizon = max(usage.compute.hours, plan_interval)
        grid = sorted(x for x in points if x <= horizon) or [plan_interval]
    seed = 0 if rng is None else rng
    rows: list[tuple[float, float, float]] = []
    for interval in sorted(set(grid) | {plan_interval}):
        u = with_interval(usage, float(interval))
        sim = simulate(u, catalog, trials=trials, rng=seed, params=p)
        rows.append((float(interval), sim.cost_usd.mean, sim.cost_usd.p90))
    best = min([r for r in rows if r[0] <= longest] or rows, key=lambda r: r[1])
    plan_row = next(r for r in rows if r[0] == plan_interval)
    per_hour = _interruptions_per_hour(usage, p)
    return CheckpointStudy(
        plan_interval_hours=plan_interval,
        young_daly_hours=yd,
        mtbf_hours=1.0 / per_hour if per_hour > 0 else None,
        checkpoint_stall_hours_each=usage.checkpoint.stall_hours_each,
        asynchronous=usage.checkpoint.asynchronous,
        simulated_optimum_hours=best[0],
        grid=tuple(rows),
        plan_mean_usd=plan_row[1],
        optimum_mean_usd=best[1],
        trials=trials,
    )


# --- spot or not -------------------------------------------------------------------------------


def on_demand_usage(usage: Usage) -> Usage:
    """The same run with every node on demand: no spot share, no reclaims."""
    return usage.with_schedule(spot_fraction=0.0, spot_reclaim_rate_per_node_hour=0.0)


@record
class SpotComparison:
    """The plan's spot share against all on-demand, same random numbers for both."""

    spot_fraction: float
    spot_mean_usd: float
    spot_p90_usd: float
    on_demand_mean_usd: float
    on_demand_p90_usd: float
    nominal_savings: float  # what the spot discount alone promises (no reclaims)
    expected_savings: float  # after sampled reclaims, restarts and price variation
    p90_savings: float
    trials: int

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {
            "spot_fraction": self.spot_fraction,
            "spot_mean_usd": self.spot_mean_usd,
            "spot_p90_usd": self.spot_p90_usd,
            "on_demand_mean_usd": self.on_demand_mean_usd,
            "on_demand_p90_usd": self.on_demand_p90_usd,
            "nominal_savings": self.nominal_savings,
            "expected_savings": self.expected_savings,
            "p90_savings": self.p90_savings,
            "trials": self.trials,
        }


def spot_comparison(
    plan_or_usage: Plan | Usage,
    catalog: Catalog,
    *,
    trials: int = 4000,
    rng: int | None = 0,
    params: SimulationParams | None = None,
    today: date | None = None,
) -> SpotComparison | None:
    """Expected cost and P90 with the plan's spot share and with none; None for an all-on-demand
    plan.

    Nominal savings price the spot plan with no reclaims at the mean spot price: the number a
    spreadsheet shows. Expected savings are what the sampled runs keep after reclaims.
    """
    usage, _ = _resolve(plan_or_usage, catalog, today)
    if usage.purchase.spot_fraction <= 0:
        return None
    p = params if params is not None else SimulationParams.from_usage(usage, catalog)
    od = on_demand_usage(usage)
    seed = 0 if rng is None else rng
    spot_sim = simulate(usage, catalog, trials=trials, rng=seed, params=p)
    od_sim = simulate(
        od, catalog, trials=trials, rng=seed, params=replace(p, spot_reclaim_rate_per_node_hour=0.0)
    )
    mean_s = (p.spot_price_low + p.spot_price_high) / 2.0
    no_reclaims = usage.with_values(
        {"reliability.reclaim_events": 0.0, "reliability.reclaim_lost_hours": 0.0}
    )
    quiet = replace(p.quiet(), spot_price_low=mean_s, spot_price_high=mean_s)
    nominal_spot = forecast_usage(
        _at_spot_price(
            expected_usage(no_reclaims, replace(quiet, failure_rate_per_gpu_day=0.0)), mean_s
        ),
        catalog,
    ).total_usd
    nominal_od = forecast_usage(
        expected_usage(on_demand_usage(no_reclaims), quiet), catalog
    ).total_usd
    return SpotComparison(
        spot_fraction=usage.purchase.spot_fraction,
        spot_mean_usd=spot_sim.cost_usd.mean,
        spot_p90_usd=spot_sim.cost_usd.p90,
        on_demand_mean_usd=od_sim.cost_usd.mean,
        on_demand_p90_usd=od_sim.cost_usd.p90,
        nominal_savings=1.0 - nominal_spot / nominal_od,
        expected_savings=1.0 - spot_sim.cost_usd.mean / od_sim.cost_usd.mean,
        p90_savings=1.0 - spot_sim.cost_usd.p90 / od_sim.cost_usd.p90,
        trials=trials,
    )


def spot_range_of_on_demand(
    usage: Usage, catalog: Catalog, low: float, high: float
) -> tuple[float, float]:
    """Turn a spot price range given as fractions of on-demand into multipliers of the catalog
    spot price.

    The seed article states p4d spot "around 65-75% of on-demand"; the catalog's own spot price
    points differ, so the simulation takes the article's range this way.
    """
    if not 0 < low <= high:
        msg = f"spot price range must satisfy 0 < low <= high (got {low:g}:{high:g} of on-demand)"
        raise SimulationError(msg)
    from trainbill.costs._pricing import instance_rate

    od = instance_rate(catalog, usage, "on_demand").usd
    spot = instance_rate(catalog, usage, "spot").usd
    return low * od / spot, high * od / spot
