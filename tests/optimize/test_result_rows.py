"""The results stage read in bulk: ``_Block.points`` (the cheapest option of many rows from the
reduced arrays) and the caveats remembered per cluster, against the one-at-a-time paths.

Why: a node-only sweep shows hundreds of candidates on its front and in its right-sizing;
each must carry what pricing that configuration again (``_Block._priced_again``) and the
caveats computed afresh for it say. Expected values are those paths', called here.
"""

from __future__ import annotations

import math
from datetime import date

import numpy as np

from conftest import SEED, TODAY
from trainbill.catalog import Catalog
from trainbill.optimize import SearchSpace, optimize
from trainbill.optimize.grid import _evaluate_instance
from trainbill.optimize.results import _candidates, _caveats
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
    memo: dict[tuple[str, str, str, str], tuple[list, list]] = {}  # type: ignore[type-arg]
    kinds: set[str] = set()
    for c in (*r.pareto, r.best):
        shared = _caveats(c, user_inst, 0.0, catalog, as_of, 96.0, "ec2", memo)
        alone = _caveats(c, user_inst, 0.0, catalog, as_of, 96.0, "ec2")
        assert shared == alone
        kinds.update(k.kind for k in alone)
    assert len(memo) < len(r.pareto)  # clusters were shared
    assert "cloud" in kinds  # the remembered part holds real caveats
