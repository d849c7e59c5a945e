"""``optimize --savings-plans`` searches both AWS kinds and picks one where it pays; a held EC2
Instance Savings Plan does not follow the run to another family (issue #38 item 2).

Tiny prices (``costs.tiny``): p5.48xlarge $10 on demand, 1yr Compute SP $8, 1yr EC2 Instance
SP $6; trn1.32xlarge $9 on demand; no spot. The plan is ``zero_hidden_plan`` (4 nodes, every
hidden cost off) run for 8,760 h, one whole 1-year term, priced 2025-05-01.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.optimize import SearchSpace, optimize
from trainbill.optimize.grid import _evaluate_instance
from trainbill.optimize.results import _candidate
from trainbill.optimize.space import _axes_for
from trainbill.spec import plan_from_dict


@pytest.fixture
def tiny(catalog: Catalog) -> Catalog:
    return tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("p5.48xlarge", "compute_sp_1yr", "instance-hour", 8.0),
        price("p5.48xlarge", "sp_1yr", "instance-hour", 6.0),
        price("trn1.32xlarge", "on_demand", "instance-hour", 9.0),
    )


def _plan(**purchase: Any) -> Any:
    raw = zero_hidden_plan()
    raw["run"] = {"name": "a-year", "hours": 8760}
    raw["purchase"] = purchase
    return plan_from_dict(raw)


def _space(*instances: str) -> SearchSpace:
    return SearchSpace(
        instances=instances, nodes=(4,), spot_fractions=(0.0,), savings_plans=("1yr",),
        coverages=(1.0,), orchestrators=("ec2",), checkpoint_intervals_hours=(2.0,),
    )  # fmt: skip


def test_both_kinds_are_searched_and_the_cheaper_is_picked(tiny: Catalog) -> None:
    """A year on 4 × p5: on demand 4 × 8,760 × $10 = $350,400; a bought Compute SP 4 × 8,760 ×
    $8 = $280,320; an EC2 Instance SP 4 × 8,760 × $6 = $210,240: the EC2 Instance plan pays."""
    r = optimize(_plan(), tiny, space=_space("p5.48xlarge"), today=TODAY)
    assert r.best.savings_plan == "1yr"
    assert r.best.savings_plan_kind == "ec2-instance"
    assert r.best.total_usd == pytest.approx(4 * 8760 * 6.0)


def test_a_held_ec2_instance_plan_does_not_cover_trainium(tiny: Catalog) -> None:
    """A p5 EC2 Instance SP held (existing): p5 runs at $6, 4 × 8,760 × $6 = $210,240; trn1 is
    not covered, so every trn1 point is on demand at $9 (before, the candidate silently took a
    held Compute Savings Plan), and a note says why."""
    plan = _plan(savings_plan="1yr", commitment="existing", savings_plan_kind="ec2-instance")
    r = optimize(plan, tiny, space=_space("p5.48xlarge", "trn1.32xlarge"), today=TODAY)
    assert r.best.instance == "p5.48xlarge"
    assert r.best.total_usd == pytest.approx(4 * 8760 * 6.0)
    trn1 = tiny.instance("trn1.32xlarge")
    space = _space("trn1.32xlarge")
    block, _ = _evaluate_instance(plan, tiny, trn1, _axes_for(plan, tiny, space, trn1), TODAY)
    cands = [_candidate(block, int(f)) for f in np.flatnonzero(block.fits)]
    priced = [c for c in cands if np.isfinite(c.total_usd)]
    assert {c.savings_plan for c in priced} == {"none"}
    # The planner scales run.hours by total peak: 8,760 h × (4 × 8 H100) / (4 × 16 Trainium1)
    # at their catalog BF16 peaks; every one of those hours at the $9 on-demand rate.
    h100 = tiny.accelerator("h100").peak_tflops("bf16")
    trn = tiny.accelerator(trn1.accelerator).peak_tflops("bf16")
    hours = 8760 * (4 * 8 * h100) / (4 * 16 * trn)
    assert min(c.total_usd for c in priced) == pytest.approx(4 * hours * 9.0)
    assert any(
        "EC2 Instance Savings Plan held covers the p5 family only, not trn1.32xlarge" in n
        for n in r.skipped
    )
