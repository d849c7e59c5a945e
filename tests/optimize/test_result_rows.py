"""The results stage read in bulk: ``_Block.points`` (the cheapest option of many rows from the
reduced arrays) and the caveats remembered per cluster, against the one-at-a-time paths.

Why: a node-only sweep shows hundreds of candidates on its front and in its right-sizing;
each must carry what pricing that configuration again (``_Block._priced_again``) and the
caveats computed afresh for it say. Expected values are those paths', called here.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import FrozenInstanceError
from datetime import date

import numpy as np
import pytest

from conftest import SEED, TODAY
from trainbill._record import positional_builder, record
from trainbill.catalog import Catalog
from trainbill.optimize import SearchSpace, optimize
from trainbill.optimize.caveats import Caveat, _Noter
from trainbill.optimize.grid import _evaluate_instance
from trainbill.optimize.results import (
    Candidate,
    RightSizeRow,
    _candidates,
    _pareto_indices,
    _rightsize_rows,
)
from trainbill.optimize.space import _axes_for
from trainbill.spec import load_plan
from trainbill.usage import resolve_cluster


def test_points_are_the_configurations_priced_again(catalog: Catalog) -> None:
    plan = load_plan(SEED)
    inst = catalog.instance("p5.48xlarge")
    space = SearchSpace(nodes=(1, 2, 8, 32, 64), savings_plans=("none", "1yr", "3yr"))
    axes = _axes_for(plan, catalog, space, inst, None)
    block, _ = _evaluate_instance(plan, catalog, inst, axes, TODAY, use_p90=False, budget=None)
    # every row's cheapest option, and a sample of the others (each priced again is slow)
    rows = np.arange(block.size // block.shape[4])
    others = np.random.default_rng(0).choice(block.size, size=40, replace=False)
    flats = sorted({*(rows * block.shape[4] + block.arg[rows]).tolist(), *others.tolist()})
    got = block.points(flats)
    cheapest = 0
    for flat, point in zip(flats, got, strict=True):
        want = block._priced_again(flat)
        cheapest += flat % block.shape[4] == int(block.arg[flat // block.shape[4]])
        for a, b in zip(point, want, strict=True):
            assert (math.isinf(a) and math.isinf(b)) or math.isclose(a, b, rel_tol=1e-9)
        assert point == block.point(flat)
    assert cheapest == rows.size  # one cheapest option per row was read
    assert len(flats) > cheapest  # and others priced again
    # the candidates of the rows' cheapest options carry those figures and their coordinates
    best = (rows * block.shape[4] + block.arg[rows]).tolist()
    for flat, c in zip(best, _candidates(block, best), strict=True):
        n = flat // (block.size // len(axes.nodes))
        assert c.nodes == axes.nodes[n]
        assert (c.total_usd, c.wall_hours, c.p90_usd, c.p90_wall_hours) == block.point(flat)


def test_remembered_caveats_are_the_caveats_afresh(catalog: Catalog) -> None:
    """Every Pareto candidate of a three-cloud search with a deadline, noted with one memo
    shared by all, gets the caveats computed for it alone."""
    plan = load_plan(SEED)
    r = optimize(
        plan, catalog, space=SearchSpace(nodes=(4, 8, 16, 32, 64)), deadline_hours=96,
        clouds=("aws", "gcp", "azure"), today=TODAY,
    )  # fmt: skip
    user_inst, _ = resolve_cluster(plan, catalog)
    as_of = plan.prices.as_of or TODAY
    assert isinstance(as_of, date)
    assert r.user is not None
    spot_nodes = plan.purchase.spot_fraction * r.user.nodes  # the plan's nodes on spot
    shared = _Noter(
        user_inst=user_inst, user_spot_nodes=spot_nodes, catalog=catalog, as_of=as_of,
        deadline=96.0, user_orchestrator="ec2",
    )  # fmt: skip
    kinds: set[str] = set()
    for c in (*r.pareto, r.best):
        where = (c.instance, c.accelerator, c.region, c.provider, c.orchestrator)
        figures = (c.nodes, c.spot_fraction, c.wall_hours, c.p90_wall_hours)
        alone = _Noter(
            user_inst=user_inst, user_spot_nodes=spot_nodes, catalog=catalog, as_of=as_of,
            deadline=96.0, user_orchestrator="ec2",
        )  # fmt: skip
        assert shared.of(where, *figures) == alone.of(where, *figures) == c.caveats
        kinds.update(k.kind for k in c.caveats)
    assert len(shared.memo) < len(r.pareto)  # clusters were shared
    assert "cloud" in kinds  # the remembered part holds real caveats


def test_builder_makes_the_keyword_constructors_record() -> None:
    """``positional_builder`` sets every field positionally, in field order: the record equals (and
    hashes, and prints as) the one the keyword constructor makes."""
    values: dict[str, object] = {
        "provider": "aws", "region": "us-east-1", "instance": "p5.48xlarge",
        "accelerator": "h100-80gb", "nodes": 4, "gpus": 32, "orchestrator": "ec2",
        "spot_fraction": 0.5, "savings_plan": "1yr", "savings_plan_coverage": 0.25,
        "checkpoint_interval_hours": 2.0, "total_usd": 1234.5, "wall_hours": 10.0,
        "p90_usd": 1300.0, "p90_wall_hours": 11.0, "is_user_plan": False,
        "caveats": (Caveat(kind="cloud", text="x"),), "savings_plan_kind": "compute",
    }  # fmt: skip
    assert [f.name for f in dataclasses.fields(Candidate)] == list(values)
    made = positional_builder(Candidate)(*values.values())
    want = Candidate(**values)  # type: ignore[arg-type]
    assert made == want
    assert hash(made) == hash(want)
    assert repr(made) == repr(want)
    with pytest.raises(FrozenInstanceError):
        made.nodes = 5  # type: ignore[misc]
    with pytest.raises(ValueError, match="zip"):  # a field left out is refused
        positional_builder(RightSizeRow)(1, 8, 10.0, 1.0, 100.0, None)

    @record
    class Checked:
        x: int

        def __post_init__(self) -> None:
            assert self.x > 0

    with pytest.raises(TypeError, match="__post_init__"):
        positional_builder(Checked)


def test_rightsize_rows_by_hand() -> None:
    """Three node counts (8 GPUs each): 1 node 10 h $100, 2 nodes 6 h $120, 4 nodes 6 h $150."""
    rows = _rightsize_rows(
        np.array([1, 2, 4]), np.array([100.0, 120.0, 150.0]), np.array([10.0, 6.0, 6.0]), 8
    )
    # node-hours 1×10 = 10, 2×6 = 12, 4×6 = 24: the fewest is 10
    assert [r.efficiency for r in rows] == [1.0, 10 / 12, 10 / 24]
    assert [r.gpus for r in rows] == [8, 16, 32]
    # 2 nodes save 10 - 6 = 4 h for $20: $5 per hour; 4 nodes save none (None)
    assert [r.usd_per_hour_saved for r in rows] == [None, (120 - 100) / 4, None]
    # cost × time: 1000, 720 (< 1000, pays), 900 (> 720, does not)
    assert [r.pays for r in rows] == [True, True, False]
    assert rows[1] == RightSizeRow(
        nodes=2, gpus=16, wall_hours=6.0, efficiency=10 / 12, total_usd=120.0,
        usd_per_hour_saved=5.0, pays=True,
    )  # fmt: skip


def test_many_notes_each_candidate_as_of_would(catalog: Catalog) -> None:
    """``_Noter.many`` over candidates with more nodes on spot than the plan, past the deadline
    expected or at their P90, and neither, against ``of`` for each alone (fresh memos)."""
    plan = load_plan(SEED)
    user_inst, _ = resolve_cluster(plan, catalog)
    as_of = plan.prices.as_of or TODAY
    assert isinstance(as_of, date)

    def noter() -> _Noter:
        return _Noter(
            user_inst=user_inst, user_spot_nodes=16.0, catalog=catalog, as_of=as_of,
            deadline=96.0, user_orchestrator="ec2",
        )  # fmt: skip

    where = ("p5.48xlarge", "h100-80gb", "us-east-1", "aws")
    orchs = ["ec2", "eks", "ec2", "hyperpod", "ec2"]
    nodes = [32, 32, 64, 16, 32]
    spots = [0.5, 0.0, 0.5, 1.0, 1.0]  # spot nodes 16, 0, 32 (> 16), 16, 32 (> 16)
    walls = [90.0, 97.0, 50.0, 95.0, 96.0]  # the second misses 96 h on its expected hours
    p90_walls = [95.0, 99.0, 60.0, 97.0, 96.0]  # the fourth misses it at its P90 only
    got = noter().many(where, orchs, nodes, spots, walls, p90_walls)
    for j, caveats in enumerate(got):
        args = (nodes[j], spots[j], walls[j], p90_walls[j])
        assert caveats == noter().of((*where, orchs[j]), *args)
    kinds = [[c.kind for c in caveats] for caveats in got]
    assert "spot_capacity" in kinds[2]
    assert "spot_capacity" in kinds[4]
    assert "deadline_risk" in kinds[1]
    assert "deadline_risk" in kinds[3]
    assert kinds[0] == []  # the plan's own cluster, spot share and time: nothing to say
    assert kinds[1][0] == "orchestrator"


def test_front_is_the_front_of_every_blocks_candidates(catalog: Catalog) -> None:
    """The Pareto front picked on the blocks' arrays is the one of every block's every row's
    candidate and the plan's (the path that made a candidate per row first)."""
    plan = load_plan(SEED)
    space = SearchSpace(
        instances=("p5en.48xlarge", "p5.48xlarge", "p4de.24xlarge"), nodes=(4, 8, 16, 32, 64),
        savings_plans=("none", "1yr"),
    )  # fmt: skip
    r = optimize(plan, catalog, space=space, clouds=("aws",), today=TODAY)
    assert r.user is not None
    everyone = []
    for name in space.instances or ():
        inst = catalog.instance(name)
        axes = _axes_for(plan, catalog, space, inst, r.user.checkpoint_interval_hours)
        block, _ = _evaluate_instance(plan, catalog, inst, axes, TODAY)
        rows = np.flatnonzero(block.row_ok)
        everyone += _candidates(block, (rows * block.shape[4] + block.arg[rows]).tolist())
    everyone.append(r.user)  # last, as the search adds it (first on exact ties)
    on = _pareto_indices(
        np.array([c.total_usd for c in everyone]), np.array([c.wall_hours for c in everyone])
    )
    front = [everyone[int(k)] for k in on]
    assert len(front) > 2
    strip = [dataclasses.replace(c, caveats=()) for c in r.pareto]
    assert strip == front
    assert {c.instance for c in r.pareto} == {"p5en.48xlarge", "p4de.24xlarge"}
