"""The planner's chunked search: per-row reductions agree with a point-by-point enumeration."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import SEED, TODAY, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.optimize import SearchSpace, optimize
from trainbill.optimize.grid import _evaluate_instance
from trainbill.optimize.results import _candidate
from trainbill.optimize.space import _axes_for
from trainbill.spec import load_plan, plan_from_dict


def test_feasible_count_with_deadline_and_budget(catalog: Catalog) -> None:
    """Zero hidden costs, 40 node-hours at $98.32: 3 grid points + the user's plan = 4 evaluated.

    2 nodes take 40/2 = 20 h > 12 h; 4 nodes (10 h), 8 nodes (5 h) and the user's 4-node plan
    meet 12 h and cost 40 × 98.32 = $3,932.80 ≤ $4,000, so 3 are feasible.
    """
    space = SearchSpace(
        instances=("p5.48xlarge",),
        nodes=(2, 4, 8),
        spot_fractions=(0.0,),
        orchestrators=("ec2",),
        checkpoint_intervals_hours=(2.0,),
    )
    plan = plan_from_dict(zero_hidden_plan())
    result = optimize(
        plan, catalog, space=space, deadline_hours=12, budget_usd=4000, clouds=("aws",), today=TODAY
    )
    assert (result.evaluated, result.feasible) == (4, 3)


@pytest.mark.parametrize("objective", ["expected", "p90"])
def test_chunked_search_matches_enumeration(catalog: Catalog, objective: str) -> None:
    """The per-row reductions give the enumeration's winner and feasible count.

    The enumeration prices every configuration one by one with ``_candidate`` (the drivers on a
    one-point grid) and applies the deadline and budget (their medians over the grid, so both
    bind) in plain Python.
    """
    plan = load_plan(SEED)
    inst = catalog.instance("p5.48xlarge")
    space = SearchSpace(
        instances=("p5.48xlarge",),
        nodes=(16, 32, 48),
        savings_plans=("1yr",),
        coverages=(0.3, 0.6, 0.9),
        spot_fractions=(0.0, 0.25),
        orchestrators=("ec2", "eks"),
    )
    block, _ = _evaluate_instance(plan, catalog, inst, _axes_for(plan, catalog, space, inst), TODAY)
    use_p90 = objective == "p90"
    points = [(_candidate(block, int(f)), int(f)) for f in np.flatnonzero(block.fits)]
    keys = [
        ((c.p90_usd, c.p90_wall_hours) if use_p90 else (c.total_usd, c.wall_hours), f, c)
        for c, f in points
    ]
    deadline = float(np.median([k[0][1] for k in keys]))
    budget = float(np.median([k[0][0] for k in keys]))
    ok = [k for k in keys if k[0][1] <= deadline and k[0][0] <= budget]
    assert 0 < len(ok) < len(keys)
    want = min(ok, key=lambda k: (k[0], k[1]))[2]

    result = optimize(
        plan,
        catalog,
        space=space,
        objective=objective,  # type: ignore[arg-type]
        deadline_hours=deadline,
        budget_usd=budget,
        today=TODAY,
    )
    user_key = (
        (result.user.p90_usd, result.user.p90_wall_hours)
        if use_p90
        else (result.user.total_usd, result.user.wall_hours)
    )
    user_ok = user_key[1] <= deadline and user_key[0] <= budget
    assert result.evaluated == block.size + 1
    assert result.feasible == len(ok) + int(user_ok)
    want_key = (want.p90_usd, want.p90_wall_hours) if use_p90 else (want.total_usd, want.wall_hours)
    got = result.best
    if user_ok and user_key <= want_key:
        assert got.is_user_plan
    else:
        assert not got.is_user_plan
        assert (
            got.nodes,
            got.orchestrator,
            got.spot_fraction,
            got.savings_plan_coverage,
            got.checkpoint_interval_hours,
        ) == (
            want.nodes,
            want.orchestrator,
            want.spot_fraction,
            want.savings_plan_coverage,
            want.checkpoint_interval_hours,
        )
        assert got.total_usd == want.total_usd


@pytest.mark.parametrize("interval", [0.0, 1e308])
def test_a_checkpoint_interval_outside_the_plan_s_range_is_refused(
    catalog: Catalog, interval: float
) -> None:
    """The plan caps checkpoint.interval_hours at 1,000,000 h; an axis value of 1e308 overflowed
    the grid and its points were dropped silently, 0 is no interval."""
    space = SearchSpace(instances=("p5.48xlarge",), checkpoint_intervals_hours=(interval,))
    with pytest.raises(SpecError, match="checkpoint intervals must be > 0 and at most 1,000,000"):
        optimize(load_plan(SEED), catalog, space=space, today=TODAY)


def test_named_instances_and_orchestrators_are_searched_exactly(catalog: Catalog) -> None:
    """Was: the plan's own instance was appended to ``--instances`` and searched over the whole
    node grid with its own orchestrator, so ``--instances p4d.24xlarge`` on the seed plan (32 ×
    p5.48xlarge) answered "16 × p5.48xlarge, all spot". The plan as written is still compared
    (it may win, marked ``is_user_plan``), but nothing else outside the named axes is searched."""
    plan = load_plan(SEED)
    space = SearchSpace(instances=("p4d.24xlarge",), nodes=(8, 16, 32))
    result = optimize(plan, catalog, space=space, today=TODAY)
    searched = [c for c in (result.best, *result.pareto) if not c.is_user_plan]
    assert searched
    assert {c.instance for c in searched} == {"p4d.24xlarge"}
    hyperpod = SearchSpace(orchestrators=("hyperpod",), nodes=(16, 32))
    result = optimize(plan, catalog, space=hyperpod, today=TODAY)
    assert plan.cluster.orchestrator == "ec2"
    others = [c for c in (result.best, *result.pareto) if not c.is_user_plan]
    assert all(c.orchestrator == "hyperpod" for c in others)
