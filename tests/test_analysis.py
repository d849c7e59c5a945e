"""The analysis layer: what the report and the web app show, worked out without presenting it."""

from __future__ import annotations

import pytest

from conftest import SEED, TODAY
from trainbill.analysis import (
    SizingPoint,
    analyse,
    pareto_front,
    right_sizing,
    simulation_summary,
)
from trainbill.catalog import Catalog
from trainbill.simulate import simulate
from trainbill.spec import load_plan


def _sizing(nodes: int, hours: float, usd: float) -> SizingPoint:
    return SizingPoint(
        nodes=nodes, gpus=8 * nodes, wall_hours=hours, total_usd=usd, quote_usd=usd, current=False
    )


def test_pareto_front_drops_dominated_points() -> None:
    """(10 h, $100) and (20 h, $80) trade off; (15 h, $120) and (30 h, $80) are beaten."""
    pts = [_sizing(4, 20, 80), _sizing(8, 10, 100), _sizing(6, 15, 120), _sizing(2, 30, 80)]
    assert [p.nodes for p in pareto_front(pts)] == [8, 4]


def test_simulation_summary_percentiles() -> None:
    """Bills 1..10: P50 = 5.5, P90 = 1 + 0.9 × 9 = 9.1 (linear interpolation); 2 of 10 runs > 8
    h."""
    s = simulation_summary(
        range(1, 11), [float(h) for h in range(1, 11)], deadline_hours=8.0, bins=5
    )
    assert s.p50_usd == pytest.approx(5.5)
    assert s.p90_usd == pytest.approx(9.1)
    assert s.p_miss_deadline == pytest.approx(0.2)
    assert sum(s.cost_counts) == 10
    assert len(s.cost_edges) == 6


def test_right_sizing_with_fixed_hours_keeps_the_quote(catalog: Catalog) -> None:
    """Fixed run.hours → constant node-hours: every size's quote is 32 × $98.32 × 72 h =
    $226,529.28."""
    points, basis = right_sizing(load_plan(SEED), catalog, today=TODAY)
    assert "perfect scaling" in basis
    assert len(points) >= 5
    assert [p.nodes for p in points if p.current] == [32]
    for p in points:
        assert p.quote_usd == pytest.approx(32 * 98.32 * 72)


def test_analysis_simulation_is_the_simulators(catalog: Catalog) -> None:
    """The report's P50/P90 and deadline odds are ``trainbill.simulate``'s for the same seed, not a
    recount."""
    plan = load_plan(SEED)
    data = analyse(plan, catalog, today=TODAY, trials=500, seed=7, search=False)
    sim = simulate(plan, catalog, trials=500, rng=7, today=TODAY)
    s = data.simulation
    assert s is not None
    assert (s.p50_usd, s.p90_usd) == (sim.cost_usd.p50, sim.cost_usd.p90)
    assert (s.p50_hours, s.p90_hours) == (sim.wall_hours.p50, sim.wall_hours.p90)
    assert s.p_miss_deadline == sim.deadline_miss_probability
    assert s.source == "trainbill.simulate: 500 trials, seed 7"
    assert data.simulation_note == ""


def test_the_report_shows_one_p90(catalog: Catalog) -> None:
    """Was: the headline's budget came from 2,000 trials (seed 0) and the risk section's P90
    from the report's own --trials/--seed: two different P90s on one page. With --trials 0 the
    page said no simulation was run while the headline showed a simulated budget."""
    plan = load_plan(SEED)
    a = analyse(plan, catalog, today=TODAY, trials=500, seed=3, search=False)
    assert a.outlook is not None
    assert a.outlook.budget is not None
    assert a.simulation is not None
    assert a.outlook.budget.p90_usd == a.simulation.p90_usd
    assert a.outlook.budget.trials == 500
    none = analyse(plan, catalog, today=TODAY, simulate=False, search=False)
    assert "the headline's P90 budget is the forecast's own" in none.simulation_note
