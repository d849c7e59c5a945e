"""Simulate a plan: the Monte Carlo of its bill and wall-clock, and the checkpoint and spot
studies (``trainbill simulate``, ``POST /v1/simulate``).

Calibrations are applied once (``calibration.calibrate``): every trial and study prices on the
calibrated catalog with the measured MFU, as ``price_plan`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.analysis import SimulationSummary, simulation_of
from trainbill.calibration import calibrate, calibration_cautions
from trainbill.catalog import Catalog
from trainbill.errors import SimulationError
from trainbill.forecasting import Caution
from trainbill.simulate import (
    MAX_TRIALS,
    CheckpointStudy,
    Simulation,
    SimulationParams,
    SpotComparison,
    checkpoint_study,
    simulate,
    spot_comparison,
    spot_range_of_on_demand,
)
from trainbill.spec import Plan
from trainbill.usage import usage_for

__all__ = [
    "DEFAULT_CHUNK",
    "MAX_TRIALS",
    "CheckpointStudy",
    "SimulatedPlan",
    "Simulation",
    "SimulationSummary",
    "SpotComparison",
    "simulate_plan",
]

#: Trials priced at once (memory only: the results do not depend on it).
DEFAULT_CHUNK = 65_536


@record
class SimulatedPlan:
    """A simulation of the plan, its studies (None: not asked for) and its calibration
    cautions (also among the simulation's warnings)."""

    simulation: Simulation
    checkpoint: CheckpointStudy | None = None
    spot: SpotComparison | None = None
    cautions: tuple[Caution, ...] = ()

    def summary(self) -> SimulationSummary:
        """The percentiles the report and the web app show."""
        return simulation_of(self.simulation)

    def as_dict(self) -> dict[str, Any]:
        """``trainbill simulate --json``: the simulation with its two studies."""
        out = self.simulation.as_dict()
        out["checkpoint"] = self.checkpoint.as_dict() if self.checkpoint is not None else None
        out["spot"] = self.spot.as_dict() if self.spot is not None else None
        return out


def simulate_plan(
    plan: Plan,
    catalog: Catalog,
    calibrations: Sequence[Any] = (),
    *,
    trials: int,
    seed: int | None = None,
    chunk_size: int = DEFAULT_CHUNK,
    spot_price_of_on_demand: tuple[float, float] | None = None,
    study_trials: int = 0,
    progress: Callable[[int, int], None] | None = None,
    today: date | None = None,
    source: str | None = None,
) -> SimulatedPlan:
    """Simulate ``trials`` runs of the plan (and, with ``study_trials``, the checkpoint-interval
    and spot studies from the simulation's seed).

    ``spot_price_of_on_demand`` (LOW, HIGH fractions of on-demand) replaces the catalog's spot
    price range; ``source`` names the plan in errors.
    """
    calibrated = calibrate(plan, catalog, calibrations)
    priced_on = calibrated.catalog
    usage = usage_for(plan, priced_on, today=today, measured_mfu=calibrated.measured_mfu)
    params = SimulationParams.from_usage(usage, priced_on)
    if spot_price_of_on_demand is not None:
        if usage.purchase.spot_fraction <= 0:
            msg = (
                f"--spot-price-of-on-demand: {source or 'the plan'} runs no nodes on spot "
                "(purchase.spot_fraction = 0), so a spot price range would change nothing; set "
                "purchase.spot_fraction or drop the flag"
            )
            raise SimulationError(msg)
        lo, hi = spot_range_of_on_demand(usage, priced_on, *spot_price_of_on_demand)
        params = replace(params, spot_price_low=lo, spot_price_high=hi)
        SimulationParams(**params.as_dict())  # re-validate
    sim = simulate(
        usage, priced_on, trials=trials, rng=seed, chunk_size=chunk_size, params=params,
        deadline_hours=plan.run.deadline_hours, today=today, progress=progress,
    )  # fmt: skip
    cautions: tuple[Caution, ...] = ()
    if calibrations:
        cautions = calibration_cautions(usage, calibrated, today=today)
        notes = tuple(c.text for c in cautions)
        sim = replace(sim, warnings=tuple(dict.fromkeys((*sim.warnings, *notes))))
    if study_trials <= 0:
        return SimulatedPlan(simulation=sim, cautions=cautions)
    return SimulatedPlan(
        simulation=sim,
        checkpoint=checkpoint_study(
            usage, priced_on, trials=study_trials, rng=sim.seed, params=params
        ),
        spot=spot_comparison(usage, priced_on, trials=study_trials, rng=sim.seed, params=params),
        cautions=cautions,
    )
