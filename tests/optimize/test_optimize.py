"""The planner: vectorized grid consistent with forecast(), constraints, what it skips and why,
output and bad input. The command line is tested in ``tests/cli/test_optimize.py``."""

from __future__ import annotations

import itertools
from datetime import date
from typing import Any

import numpy as np
import pytest

from conftest import SEED, TODAY, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import InfeasibleError, SpecError
from trainbill.forecasting import forecast
from trainbill.optimize import SearchSpace, candidate_plan, optimize
from trainbill.optimize.grid import _evaluate_instance
from trainbill.optimize.results import _candidate
from trainbill.optimize.space import _axes_for, _default_nodes
from trainbill.spec import load_plan, plan_from_dict

# p5.48xlarge on-demand before the June-2025 cut: $98.32/h (catalog prices.csv, as_of 2025-05-01).
P5_OLD = 98.32
ONLY_P5 = SearchSpace(
    instances=("p5.48xlarge",),
    nodes=(2, 4, 8),
    spot_fractions=(0.0,),
    orchestrators=("ec2",),
    checkpoint_intervals_hours=(2.0,),
)


def _zero() -> Any:
    return plan_from_dict(zero_hidden_plan())


@pytest.mark.parametrize("instance", ["p5.48xlarge", "p4d.24xlarge", "a3-highgpu-8g", "tpu-v6e"])
def test_random_grid_points_match_forecast(catalog: Catalog, instance: str) -> None:
    """Random grid points priced by the drivers on arrays equal forecast(candidate plan) to 1e-9."""
    plan = load_plan(SEED)
    space = SearchSpace(savings_plans=("1yr", "3yr"))
    axes = _axes_for(plan, catalog, space, catalog.instance(instance))
    block, _ = _evaluate_instance(plan, catalog, catalog.instance(instance), axes, TODAY)
    rng = np.random.default_rng(7)
    valid = np.flatnonzero(block.fits)
    for flat in rng.choice(valid, size=8, replace=False):
        c = _candidate(block, int(flat))
        fc = forecast(
            candidate_plan(
                plan,
                catalog,
                instance=c.instance,
                nodes=c.nodes,
                orchestrator=c.orchestrator,
                spot_fraction=c.spot_fraction,
                savings_plan=c.savings_plan,
                savings_plan_coverage=c.savings_plan_coverage,
                checkpoint_interval_hours=c.checkpoint_interval_hours,
                region=c.region,
                savings_plan_kind=c.savings_plan_kind,  # searched: compute or ec2-instance
            ),
            catalog,
            today=TODAY,
        )
        assert fc.total_usd == pytest.approx(c.total_usd, rel=1e-9)
        assert fc.usage.wall_hours == pytest.approx(c.wall_hours, rel=1e-9)


def test_best_plan_forecasts_to_its_reported_cost(catalog: Catalog) -> None:
    """The plan written for the winner forecasts to exactly the winner's cost and time."""
    result = optimize(load_plan(SEED), catalog, deadline_hours=100, today=TODAY)
    fc = forecast(result.best_plan, catalog, today=TODAY)
    assert fc.total_usd == pytest.approx(result.best.total_usd, rel=1e-9)
    assert result.best.wall_hours <= 100
    assert result.best.total_usd <= result.user.total_usd


def test_user_plan_is_a_candidate(catalog: Catalog) -> None:
    """With the grid reduced to the user's own configuration, the user's plan is the answer."""
    plan = load_plan(SEED)
    space = SearchSpace(
        instances=("p5.48xlarge",),
        nodes=(32,),
        spot_fractions=(0.5,),
        orchestrators=("ec2",),
        checkpoint_intervals_hours=(2.0,),
    )
    result = optimize(plan, catalog, space=space, today=TODAY)
    assert result.user.is_user_plan
    assert (result.best.instance, result.best.nodes, result.best.spot_fraction) == (
        "p5.48xlarge",
        32,
        0.5,
    )
    assert result.best.total_usd == pytest.approx(
        forecast(plan, catalog, today=TODAY).total_usd, rel=1e-9
    )


def test_deadline_picks_the_cluster_that_meets_it(catalog: Catalog) -> None:
    """Zero hidden costs: 4 nodes × 10 h = 40 node-hours; cost 40 × $98.32 = $3,932.80 at any size.

    2 nodes take 20 h, 4 take 10 h, 8 take 5 h; a 12 h deadline leaves 4 and 8 nodes.
    """
    result = optimize(
        _zero(), catalog, space=ONLY_P5, deadline_hours=12, clouds=("aws",), today=TODAY
    )
    assert result.best.nodes in {4, 8}
    assert result.best.total_usd == pytest.approx(40 * P5_OLD)
    walls = {r.nodes: r.wall_hours for r in result.rightsizing}
    assert walls == pytest.approx({2: 20.0, 4: 10.0, 8: 5.0})
    assert [r.efficiency for r in result.rightsizing] == pytest.approx([1.0, 1.0, 1.0])


def test_infeasible_deadline_names_binding_constraint(catalog: Catalog) -> None:
    """The fastest option is 8 nodes at 40/8 = 5 h, so a 4 h deadline binds by 1 h (25%)."""
    with pytest.raises(InfeasibleError) as err:
        optimize(_zero(), catalog, space=ONLY_P5, deadline_hours=4, clouds=("aws",), today=TODAY)
    assert err.value.binding == "deadline"
    assert err.value.shortfall == pytest.approx(1.0)
    assert "deadline of 4.0 h" in str(err.value)
    assert "5.0 h" in str(err.value)


def test_infeasible_budget_names_shortfall(catalog: Catalog) -> None:
    """Every size costs 40 × $98.32 = $3,932.80, so a $3,000 budget is $932.80 short."""
    with pytest.raises(InfeasibleError) as err:
        optimize(_zero(), catalog, space=ONLY_P5, budget_usd=3000, clouds=("aws",), today=TODAY)
    assert err.value.binding == "budget"
    assert err.value.shortfall == pytest.approx(40 * P5_OLD - 3000)


def test_hours_scale_with_gpu_count_and_peak(catalog: Catalog) -> None:
    """10 h on 4 × 8 H100 (989 TFLOP/s) → 2 × 8 A100-40GB (312): 10 × 32 × 989 / (16 × 312) h."""
    plan = candidate_plan(
        _zero(),
        catalog,
        instance="p4d.24xlarge",
        nodes=2,
        orchestrator="ec2",
        spot_fraction=0.0,
        savings_plan="none",
        savings_plan_coverage=0.0,
        checkpoint_interval_hours=2.0,
    )
    assert plan.run.hours == pytest.approx(10 * 32 * 989 / (16 * 312))


def test_p90_is_not_below_expected_and_pareto_is_monotone(catalog: Catalog) -> None:
    """P90 ≥ expected for every front point; along the front, faster always costs more."""
    result = optimize(load_plan(SEED), catalog, objective="p90", clouds=("aws",), today=TODAY)
    front = sorted(result.pareto, key=lambda c: c.p90_wall_hours)
    assert all(c.p90_usd >= c.total_usd for c in front)
    costs = [c.p90_usd for c in front]
    assert all(a > b for a, b in itertools.pairwise(costs))


def test_p90_equals_expected_without_disruptions(catalog: Catalog) -> None:
    """With zero failure and reclaim rates there is no spread: P90 = expected."""
    result = optimize(
        _zero(), catalog, space=ONLY_P5, objective="p90", clouds=("aws",), today=TODAY
    )
    assert result.best.p90_usd == pytest.approx(result.best.total_usd)


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"deadline_hours": 0}, "deadline must be > 0 hours"),
        ({"deadline_hours": -5}, "deadline must be > 0 hours"),
        ({"clouds": ("aws", "oracle")}, "unknown cloud 'oracle'"),
        ({"space": SearchSpace(instances=())}, "the search space is empty"),
        ({"space": SearchSpace(spot_fractions=())}, "the search space is empty"),
        ({"space": SearchSpace(spot_fractions=(1.5,))}, "values must lie in [0, 1]"),
    ],
)
def test_bad_input_is_a_clear_error(catalog: Catalog, kwargs: dict[str, Any], text: str) -> None:
    """Deadline ≤ 0, unknown cloud, empty or out-of-range space: SpecError saying which."""
    with pytest.raises(SpecError) as err:
        optimize(_zero(), catalog, today=TODAY, **kwargs)
    assert text in str(err.value)


def test_optimize_skips_node_counts_too_small_for_the_model(catalog: Catalog) -> None:
    """A 405B plan that forecasts fine must not make the planner fail on a smaller node count.

    405e9 params × 16 bytes of weights, gradients and Adam state = 6.48e12 B = 6,480 GB; one
    p5.48xlarge holds 8 × 80 GB = 640 GB, so 1 node cannot train it (the time model refuses it
    with MemoryFitError) while the user's 32 nodes (256 × 80 GB = 20,480 GB) can. Before the fix
    the whole search raised MemoryFitError.
    """
    plan = plan_from_dict({
        "model": {"params": 405e9, "tokens": 1e12},
        "cluster": {"instance": "p5.48xlarge", "nodes": 32},
        "prices": {"as_of": date(2026, 1, 1)},
    })  # fmt: skip
    own = forecast(plan, catalog, today=TODAY)
    space = SearchSpace(
        instances=("p5.48xlarge",),
        nodes=(1, 32),
        spot_fractions=(0.0,),
        savings_plans=("none",),
        orchestrators=("ec2",),
        checkpoint_intervals_hours=(plan.checkpoint.interval_hours or 2.0,),
    )
    result = optimize(plan, catalog, space=space, clouds=("aws",), today=TODAY)
    assert result.best.nodes == 32  # the only node count that holds the model
    assert result.best.total_usd <= own.total_usd * (1 + 1e-9)
    assert all(row.nodes == 32 for row in result.rightsizing)
    assert all(c.nodes == 32 for c in result.pareto)


def test_optimize_instance_that_never_fits_is_skipped(catalog: Catalog) -> None:
    """An instance on which no searched node count holds the model is skipped and listed.

    405B × 16 B = 6,480 GB; 2 × p4d.24xlarge = 16 × 40 GB = 640 GB: never enough.
    """
    plan = plan_from_dict({
        "model": {"params": 405e9, "tokens": 1e12},
        "cluster": {"instance": "p5.48xlarge", "nodes": 32},
        "prices": {"as_of": date(2026, 1, 1)},
    })  # fmt: skip
    space = SearchSpace(
        instances=("p4d.24xlarge",),
        nodes=(2,),
        spot_fractions=(0.0,),
        savings_plans=("none",),
        orchestrators=("ec2",),
        checkpoint_intervals_hours=(2.0,),
    )
    result = optimize(plan, catalog, space=space, clouds=("aws",), today=TODAY)
    assert result.best.instance == "p5.48xlarge"
    assert any(
        s.startswith("p4d.24xlarge: not searched") and "does not fit" in s for s in result.skipped
    )


def test_optimize_default_node_grid_stays_within_plan_limits(catalog: Catalog) -> None:
    """The default grid spans ⅛× to 8× the plan's GPUs; it may not leave the plan schema's 100,000
    nodes.

    20,000 tpu-v6e chips at 1 chip per node: 8× = 160,000 nodes > 100,000, so the top of the grid
    is 100,000 (before the fix: candidate_plan raised "cluster.nodes: must be at most 100,000").
    The smallest is 20,000 / 8 = 2,500. A TPU is sold by slice (v6e: up to 256 chips, then
    Multislice in whole 256-chip slices), so both are the nearest sold sizes: the top is
    floor(100,000 / 256) = 390 slices = 99,840 chips, the bottom 10 × 256 = 2,560
    (ln(2,560 / 2,500) = 0.024 < ln(2,500 / 2,304) = 0.082).
    """
    plan = plan_from_dict({
        "run": {"hours": 1},
        "cluster": {"provider": "gcp", "instance": "tpu-v6e", "nodes": 20_000},
        "prices": {"as_of": date(2025, 7, 1)},
    })  # fmt: skip
    nodes = _default_nodes(plan, catalog, catalog.instance("tpu-v6e"))
    assert max(nodes) == 390 * 256
    assert min(nodes) == 10 * 256
    space = SearchSpace(
        instances=("tpu-v6e",),
        spot_fractions=(0.0,),
        savings_plans=("none",),
        orchestrators=("vm",),
        checkpoint_intervals_hours=(2.0,),
    )
    result = optimize(plan, catalog, space=space, clouds=("gcp",), today=TODAY)
    assert result.best.nodes <= 100_000


def test_optimize_finds_a_cluster_when_the_users_own_does_not_fit(catalog: Catalog) -> None:
    """405e9 params × 16 B of Adam state = 6,480 GB: one p5 node (8 × 80 GB = 640 GB) cannot hold
    it, but 32 nodes (20,480 GB) can. The search used to stop at the user's own plan."""
    plan = plan_from_dict({"model": {"params": 405e9, "tokens": 1e11},
                           "cluster": {"instance": "p5.48xlarge", "nodes": 1}})  # fmt: skip
    space = SearchSpace(instances=("p5.48xlarge",), nodes=(16, 32), spot_fractions=(0.0,),
                        checkpoint_intervals_hours=(1.0,))  # fmt: skip
    result = optimize(plan, catalog, space=space, today=TODAY)
    assert result.user is None
    assert result.as_dict()["user"] is None
    assert result.best.nodes in (16, 32)
    assert any(
        s.startswith("your plan: not a candidate") and "does not fit" in s for s in result.skipped
    )


def test_optimize_says_why_nothing_could_be_searched(catalog: Catalog) -> None:
    """Every searched instance too small for 405B (6,480 GB of state): the error used to blame
    prices."""
    plan = plan_from_dict({"model": {"params": 405e9, "tokens": 1e11},
                           "cluster": {"instance": "p4d.24xlarge", "nodes": 1}})  # fmt: skip
    space = SearchSpace(
        instances=("p4d.24xlarge",),
        nodes=(1,),
        spot_fractions=(0.0,),
        checkpoint_intervals_hours=(1.0,),
    )
    with pytest.raises(SpecError) as err:
        optimize(plan, catalog, space=space, today=TODAY)
    text = str(err.value)
    assert "no instance could be searched" in text
    assert "p4d.24xlarge: not searched" in text
    assert "does not fit" in text
    assert "price" not in text


def test_the_best_plan_keeps_the_deadline_it_was_chosen_for(catalog: Catalog) -> None:
    """Was: ``optimize --deadline-hours 12 -o best.toml`` wrote a plan without the deadline, so
    ``simulate`` and ``report`` on it showed no odds of meeting it."""
    plan = load_plan(SEED)
    assert plan.run.deadline_hours is None
    result = optimize(plan, catalog, deadline_hours=200.0, today=TODAY)
    assert result.best_plan.run.deadline_hours == 200.0
