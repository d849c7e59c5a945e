"""Node counts priced as one array (``usage.usage_over_nodes`` in the planner's grid) against the
scalar path, one node count at a time, which stays the reference for a single plan."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conftest import SEED, TODAY
from trainbill.catalog import Catalog
from trainbill.forecasting import forecast
from trainbill.optimize import SearchSpace, optimize
from trainbill.optimize.grid import _Bases, _Pricer
from trainbill.optimize.space import _axes_for, candidate_plan
from trainbill.spec import load_plan
from trainbill.usage import usage_for

#: Node counts from one node to four times the seed plan's 32: layouts, stragglers and
#: interruption counts all change along them.
NODES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)


@pytest.mark.parametrize(
    ("instance", "savings_plans"),
    [
        ("p5.48xlarge", ("none", "1yr", "3yr")),
        ("p4d.24xlarge", None),
        ("a3-highgpu-8g", None),
        # per-chip billing: hosts are ceil(chips / chips per host), rounded for every node count
        ("tpu-v5p", None),
    ],
)
def test_stacked_grid_equals_node_by_node(
    catalog: Catalog, instance: str, savings_plans: tuple[str, ...] | None
) -> None:
    """Every (node count, orchestrator, interval, spot share, Savings Plan option) costs, and
    takes, what the same pricer gives that node count's own ``usage_for`` alone, to 1e-9
    relative."""
    plan = load_plan(SEED)
    inst = catalog.instance(instance)
    space = SearchSpace(nodes=NODES, savings_plans=savings_plans)
    axes = _axes_for(plan, catalog, space, inst, None)
    iv, sp = np.array(axes.intervals), np.array(axes.spots)
    made = _Bases(plan=plan, catalog=catalog, inst=inst, interval=iv[0], region=None, today=TODAY)
    compared = 0
    for orch in axes.orchestrators:
        chunks = made.fitting(axes.nodes, orch)
        fitted = sorted(i for g, _ in chunks for i in g)
        assert len(chunks) < len(fitted)  # node counts do share a price pass
        one = _Pricer(catalog=catalog, inst=inst, axes=axes)
        many = _Pricer(catalog=catalog, inst=inst, axes=axes)
        for g, usage in chunks:
            costs, sched = many.price(usage, iv, sp)
            for k, ni in enumerate(g):
                n = axes.nodes[ni]
                cand = candidate_plan(
                    plan, catalog, instance=instance, nodes=n, orchestrator=orch,
                    spot_fraction=1.0, savings_plan="none", savings_plan_coverage=0.0,
                    checkpoint_interval_hours=float(iv[0]),
                )  # fmt: skip
                own = usage_for(cand, catalog, job=replace(made.jobs[orch], nodes=n))
                alone, sched1 = one.price(own, iv, sp)
                at = (slice(None), slice(None), k) if len(g) > 1 else ...
                np.testing.assert_allclose(costs[at], alone, rtol=1e-9)
                wall = np.broadcast_to(sched.wall_hours, (len(g), iv.size, sp.size))[k]
                np.testing.assert_allclose(wall, sched1.wall_hours, rtol=1e-9)
                compared += alone.size
        assert one.notes == many.notes
    assert compared > 400


def test_wide_node_sweep_best_is_its_forecast(catalog: Catalog) -> None:
    """A 1..64 node sweep over three Savings Plan terms: the winner (found in stacked arrays)
    costs and takes exactly what ``forecast`` says for its plan, the scalar path."""
    plan = load_plan(SEED)
    space = SearchSpace(
        instances=("p5.48xlarge", "p4d.24xlarge"),
        nodes=tuple(range(1, 65)),
        savings_plans=("none", "1yr", "3yr"),
    )
    r = optimize(plan, catalog, space=space, deadline_hours=96, today=TODAY)
    for c in (r.best, *r.pareto[:5]):
        if c.is_user_plan:
            continue
        cand = candidate_plan(
            plan, catalog, instance=c.instance, nodes=c.nodes, orchestrator=c.orchestrator,
            spot_fraction=c.spot_fraction, savings_plan=c.savings_plan,
            savings_plan_coverage=c.savings_plan_coverage,
            checkpoint_interval_hours=c.checkpoint_interval_hours, region=c.region,
            savings_plan_kind=c.savings_plan_kind,
        )  # fmt: skip
        f = forecast(cand, catalog, today=TODAY)
        assert c.total_usd == pytest.approx(f.total_usd, rel=1e-9)
        assert c.wall_hours == pytest.approx(f.usage.wall_hours, rel=1e-9)
