"""``simulate_plan`` and ``optimize_plan``: the same results as the engine path the CLI and the
web app wrote out themselves (calibrate → usage_for → simulate; calibrate → optimize →
plan_cautions)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conftest import BILLS_OVERHEADS_TOML, PROFILE_TOML, TODAY, zero_hidden_plan
from trainbill.calibration import calibrate, calibration_cautions, parse_calibration, plan_cautions
from trainbill.catalog import Catalog
from trainbill.errors import SimulationError, SpecError
from trainbill.optimize import SearchSpace, optimize
from trainbill.simulate import SimulationParams, checkpoint_study, simulate, spot_comparison
from trainbill.spec import plan_from_dict
from trainbill.usage import usage_for
from trainbill.usecases.optimize import optimize_plan, search_cells
from trainbill.usecases.simulate import simulate_plan


def _modelled_plan() -> dict[str, object]:
    return {
        "run": {"deadline_hours": 500},
        "model": {"params": 7e9, "tokens": 1e11},
        "cluster": {"instance": "p5.48xlarge", "nodes": 8},
        "purchase": {"spot_fraction": 0.5},
        "prices": {"as_of": "2025-05-01"},
    }


def test_simulate_plan_is_calibrate_usage_simulate(catalog: Catalog) -> None:
    plan = plan_from_dict(_modelled_plan())
    cals = [parse_calibration(PROFILE_TOML, source="p.toml")]
    c = calibrate(plan, catalog, cals)
    usage = usage_for(plan, c.catalog, today=TODAY, measured_mfu=c.measured_mfu)
    sim = simulate(usage, c.catalog, trials=400, rng=5, deadline_hours=500, today=TODAY)
    params = SimulationParams.from_usage(usage, c.catalog)
    study = checkpoint_study(usage, c.catalog, trials=100, rng=sim.seed, params=params)
    spot = spot_comparison(usage, c.catalog, trials=100, rng=sim.seed, params=params)
    done = simulate_plan(plan, catalog, cals, trials=400, seed=5, study_trials=100, today=TODAY)
    assert np.array_equal(done.simulation.cost_usd.p90, sim.cost_usd.p90)
    assert done.simulation.cost_usd == sim.cost_usd
    assert done.simulation.wall_hours == sim.wall_hours
    assert done.checkpoint is not None
    assert done.spot is not None
    assert done.checkpoint.as_dict() == study.as_dict()
    assert done.spot.as_dict() == spot.as_dict()
    # The calibration's notes are the cautions, and among the simulation's warnings.
    expected = calibration_cautions(usage, c, today=TODAY)
    assert done.cautions == expected
    assert {x.text for x in expected} <= set(done.simulation.warnings)
    assert done.as_dict()["checkpoint"] == study.as_dict()


def test_spot_price_range_and_its_refusal(catalog: Catalog) -> None:
    """A spot range of 0.65-0.75 of on-demand replaces the catalog's (the sampler's low and
    high); a plan with no spot node is refused, naming the plan."""
    plan = plan_from_dict(_modelled_plan())
    usage = usage_for(plan, catalog)
    od = catalog.price("p5.48xlarge", "on_demand", provider="aws", region="us-east-1",
                       as_of=usage.as_of).usd  # fmt: skip
    spot = catalog.price("p5.48xlarge", "spot", provider="aws", region="us-east-1",
                         as_of=usage.as_of).usd  # fmt: skip
    done = simulate_plan(plan, catalog, trials=50, seed=1, spot_price_of_on_demand=(0.65, 0.75))
    # Multipliers of the catalog's spot price: 0.65 × on-demand / spot, 0.75 × on-demand / spot.
    assert done.simulation.params.spot_price_low == pytest.approx(0.65 * od / spot)
    assert done.simulation.params.spot_price_high == pytest.approx(0.75 * od / spot)
    on_demand = plan_from_dict(zero_hidden_plan())
    with pytest.raises(SimulationError, match=r"plan\.toml runs no nodes on spot"):
        simulate_plan(on_demand, catalog, trials=10, spot_price_of_on_demand=(0.6, 0.7),
                      source="plan.toml")  # fmt: skip


def test_optimize_plan_is_calibrate_optimize_cautions(catalog: Catalog) -> None:
    plan = plan_from_dict(zero_hidden_plan())
    cals = [parse_calibration(BILLS_OVERHEADS_TOML, source="b.toml")]
    space = SearchSpace(nodes=(2, 4))
    c = calibrate(plan, catalog, cals)
    result = optimize(plan, c.catalog, space=space, today=TODAY)
    done = optimize_plan(plan, catalog, cals, space=space, today=TODAY)
    timeless = {"elapsed_s"}  # the search's own run time, not a result
    got, want = done.result.as_dict(), result.as_dict()
    assert {k: v for k, v in got.items() if k not in timeless} == {
        k: v for k, v in want.items() if k not in timeless
    }
    assert done.cautions == plan_cautions(result.best_plan, c, today=TODAY)
    assert done.as_dict()["cautions"] == [x.as_dict() for x in done.cautions]
    assert "cautions" not in optimize_plan(plan, catalog, space=space, today=TODAY).as_dict()


def test_search_cells_and_the_cap(catalog: Catalog) -> None:
    """One named instance × node counts {2, 4} and the plan's own 4 = 1 × 2 cells; a cap of 1
    refuses it before any search."""
    plan = plan_from_dict(zero_hidden_plan())
    space = SearchSpace(instances=("p5.48xlarge",), nodes=(2, 4))
    assert search_cells(plan, catalog, space, None, allow_stand_ins=False, today=TODAY) == (1, 2)
    wider = replace(space, nodes=(1, 2))  # the plan's own 4 joins: 3 node counts
    assert search_cells(plan, catalog, wider, None, allow_stand_ins=False, today=TODAY) == (1, 3)
    with pytest.raises(SpecError, match=r"1 instance types × 2 node counts = 2 \(at most 1\)"):
        optimize_plan(plan, catalog, space=space, max_search_cells=1, today=TODAY)
