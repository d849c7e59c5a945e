"""Orchestration driver on a tiny catalog: raw EC2 nothing, EKS control plane, HyperPod ml.*
premium.

Every plan is ``conftest.zero_hidden_plan`` (4 × p5.48xlarge for exactly 10 h, every hidden
cost off, so the wall-clock is the plan's 10 h) with the orchestrator under test; EC2 is
$10/node-hour and SageMaker's ml.p5.48xlarge $12, so HyperPod's premium is $2/node-hour.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog, Provenance
from trainbill.costs import orchestration
from trainbill.errors import PriceNotFoundError
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for

EC2 = price("p5.48xlarge", "on_demand", "instance-hour", 10.0)
EC2_SPOT = price("p5.48xlarge", "spot", "instance-hour", 4.0)
ML = price("ml.p5.48xlarge", "on_demand", "instance-hour", 12.0)
EKS = price("eks.control_plane", "on_demand", "cluster-hour", 0.5)


#: A price date after HyperPod offered Spot (orchestration.hyperpod_spot_from = 2025-11-26).
SPOT_ERA = "2026-01-05"


def _priced(
    base: Catalog, orchestrator: str, *prices: Any, spot: float = 0.0, as_of: str | None = None
) -> tuple[Usage, list[Charge]]:
    """Usage and orchestration charges of the 4-node, 10 h plan run under ``orchestrator``
    (priced 2025-05-01, ``zero_hidden_plan``'s date, unless ``as_of``)."""
    plan = zero_hidden_plan(orchestrator=orchestrator)
    plan["purchase"] = {"spot_fraction": spot}
    if as_of is not None:
        plan["prices"] = {"as_of": as_of}
    tiny = tiny_catalog(base, *prices)
    u = usage_for(plan_from_dict(plan), tiny, today=TODAY)
    assert u.wall_hours == 10.0  # nothing stalls: hand arithmetic below uses 10 h
    return u, list(orchestration.price(u, tiny))


def test_raw_ec2_has_no_orchestration_charge(catalog: Catalog) -> None:
    """Self-managed EC2 pays nothing on top of its instances, even with every price available."""
    _, lines = _priced(catalog, "ec2", EC2, ML, EKS)
    assert lines == []


def test_eks_bills_one_control_plane_for_the_wall_clock(catalog: Catalog) -> None:
    """EKS: one cluster's control plane for 10 h, whatever the node count."""
    _, (line,) = _priced(catalog, "eks", EC2, EKS)
    # 1 cluster (orchestration.eks_clusters) × 10 h = 10 cluster-hours × $0.5 = $5
    assert line.item == "EKS control plane"
    assert line.unit == "cluster-hour"
    assert line.quantity == pytest.approx(10.0)
    assert line.unit_price_usd == 0.5
    assert line.cost_usd == pytest.approx(5.0)


def test_eks_without_a_control_plane_price_is_an_error(catalog: Catalog) -> None:
    """An AWS control-plane price absent from the catalog raises, naming it, instead of $0."""
    with pytest.raises(PriceNotFoundError, match=r"eks\.control_plane"):
        _priced(catalog, "eks", EC2)


def test_hyperpod_bills_the_ml_premium_over_ec2(catalog: Catalog) -> None:
    """HyperPod: (ml.* − EC2) per node-hour for every on-demand node over the wall-clock."""
    _, (line,) = _priced(catalog, "hyperpod", EC2, ML)
    # 4 nodes × 100 % on-demand × 10 h = 40 instance-hours × ($12 − $10) = $80
    assert line.item == "SageMaker HyperPod ml.p5.48xlarge over EC2"
    assert line.unit == "instance-hour"
    assert line.quantity == pytest.approx(40.0)
    assert line.unit_price_usd == pytest.approx(2.0)
    assert line.cost_usd == pytest.approx(80.0)


def test_hyperpod_spot_nodes_carry_no_premium(catalog: Catalog) -> None:
    """Half the nodes on spot (a run after HyperPod offered Spot): only the on-demand half pays
    the ml.* premium."""
    _, (line,) = _priced(catalog, "hyperpod", EC2, EC2_SPOT, ML, spot=0.5, as_of=SPOT_ERA)
    # 4 nodes × 50 % on-demand × 10 h = 20 instance-hours × $2 = $40
    assert line.quantity == pytest.approx(20.0)
    assert line.cost_usd == pytest.approx(40.0)
    _, none = _priced(catalog, "hyperpod", EC2, EC2_SPOT, ML, spot=1.0, as_of=SPOT_ERA)
    assert none == []  # all spot: no on-demand node to carry the premium


def test_hyperpod_without_an_ml_price_is_a_warning_not_a_guess(catalog: Catalog) -> None:
    """No ml.* price: no premium line (no claimed "~20 %"), and the usage warns what is missing."""
    u, lines = _priced(catalog, "hyperpod", EC2)
    assert lines == []
    assert any("ml.p5.48xlarge" in w and "not included" in w for w in u.warnings)


def test_an_ml_price_below_ec2_is_no_premium_and_no_refund(catalog: Catalog) -> None:
    """ml.p5.48xlarge at $9 under the $10 EC2 rate (prices not comparable, e.g. a Capacity Block
    rate): the premium is max($9 − $10, 0) = $0 over the 40 on-demand instance-hours, never -$40."""
    ml_low = price("ml.p5.48xlarge", "on_demand", "instance-hour", 9.0)
    _, (line,) = _priced(catalog, "hyperpod", EC2, ml_low)
    assert line.quantity == pytest.approx(40.0)  # 4 nodes × 10 h
    assert line.unit_price_usd == 0.0
    assert line.cost_usd == 0.0
    assert "below EC2's: no premium" in line.basis()


def test_the_premium_line_has_the_provenance_of_its_weaker_price(catalog: Catalog) -> None:
    """EC2 priced in the plan's us-west-2, ml.* only in us-east-1: a reference-region line; both
    in the plan's region: published."""
    plan = zero_hidden_plan(orchestrator="hyperpod", region="us-west-2")
    tiny = tiny_catalog(
        catalog, price("p5.48xlarge", "on_demand", "instance-hour", 10.0, region="us-west-2"), ML
    )
    u = usage_for(plan_from_dict(plan), tiny, today=TODAY)
    (line,) = orchestration.price(u, tiny)
    assert line.provenance is Provenance.REFERENCE_REGION
    _, (own,) = _priced(catalog, "hyperpod", EC2, ML)
    assert own.provenance is Provenance.PUBLISHED


def test_hyperpod_before_it_offered_spot_runs_every_node_on_demand(catalog: Catalog) -> None:
    """Dated rule, not a refusal: a HyperPod run dated 2025-05-01, before HyperPod offered Spot
    (2025-11-26), with spot_fraction = 0.5 is priced as the cluster it could buy then: all 4
    nodes on demand, each paying the ml.* premium, and a warning names both dates."""
    u, (line,) = _priced(catalog, "hyperpod", EC2, EC2_SPOT, ML, spot=0.5)
    assert u.purchase.spot_fraction == 0.0
    # 4 nodes × 100 % on-demand × 10 h = 40 instance-hours × ($12 − $10) = $80
    assert line.quantity == pytest.approx(4 * 1.0 * 10)
    assert line.cost_usd == pytest.approx(40 * (12.0 - 10.0))
    (note,) = [w for w in u.warnings if "before HyperPod offered Spot" in w]
    assert "2025-05-01" in note
    assert "2025-11-26" in note
    # The same plan on raw EC2 keeps its spot half: the rule is HyperPod's alone.
    ec2 = plan_from_dict(
        {**zero_hidden_plan(orchestrator="ec2"), "purchase": {"spot_fraction": 0.5}}
    )
    assert (
        usage_for(ec2, tiny_catalog(catalog, EC2, EC2_SPOT), today=TODAY).purchase.spot_fraction
        == 0.5
    )


def test_a_missing_ml_price_is_derived_by_the_ec2_price_ratio(catalog: Catalog) -> None:
    """No ml.p5.48xlarge price, but the anchor (orchestration.sagemaker_anchor = p4d.24xlarge)
    has both: ml.p5 = ml.p4d × EC2 p5 ÷ EC2 p4d = $11.5 × $10 ÷ $5 = $23, so the premium is
    $23 − $10 = $13 per node-hour, and the line says it is derived and unverified."""
    anchor_ml = price("ml.p4d.24xlarge", "on_demand", "instance-hour", 11.5)
    anchor_ec2 = price("p4d.24xlarge", "on_demand", "instance-hour", 5.0)
    _, (line,) = _priced(catalog, "hyperpod", EC2, anchor_ml, anchor_ec2)
    assert line.unit_price_usd == pytest.approx(11.5 * 10.0 / 5.0 - 10.0)
    assert line.cost_usd == pytest.approx(40 * 13.0)  # 4 nodes × 10 h
    assert "DERIVED" in line.source
    assert "ml.p4d.24xlarge $11.5 × EC2 p5.48xlarge $10 ÷ EC2 p4d.24xlarge $5" in line.source
    assert line.provenance is Provenance.UNVERIFIED
