"""Planner: recommends only what can be bought, on the plan's cloud and accelerator family by
default, with a typed caveat for every change of accelerator, cloud or spot share."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import EXAMPLES, SEED, TODAY
from costs.tiny import price
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.optimize import Candidate, SearchSpace, optimize
from trainbill.spec import load_plan


def _buyable(c: Candidate, catalog: Catalog) -> bool:
    inst = catalog.instance(c.instance)
    point = catalog.find_price(
        c.instance, "on_demand", provider=c.provider, region=c.region, as_of=TODAY
    )
    return not inst.stand_in and (point is None or not point.stand_in)


def test_seed_default_search_is_buyable_aws_nvidia(catalog: Catalog) -> None:
    """The seed plan (p5 H100 on AWS): best and Pareto front hold only AWS NVIDIA instances that
    are sold (no h800-8x-gpu-hour stand-in, no TPU, no Trainium); right-sizing efficiency <= 1."""
    result = optimize(load_plan(SEED), catalog, today=TODAY)
    shown = [result.best, *result.pareto]
    assert all(c.provider == "aws" for c in shown)
    assert all(catalog.accelerator(c.accelerator).vendor == "nvidia" for c in shown)
    assert all(_buyable(c, catalog) for c in shown)
    assert any("h800-8x-gpu-hour: not searched" in s for s in result.skipped)
    assert result.rightsizing
    assert all(r.efficiency <= 1.0 for r in result.rightsizing)


def test_seed_caveats_name_what_changes(catalog: Catalog) -> None:
    """p4de (A100, launched 2020-05-14, before the H100's 2022-09-20) at 100% spot of 45 nodes
    vs the plan's 16 spot nodes: 'older_gpu' and 'spot_capacity'; same cloud, vendor and 80 GB,
    so no 'cloud', 'porting' or 'memory'. The plan itself carries none."""
    plan = load_plan(SEED)
    space = SearchSpace(
        instances=("p4de.24xlarge",),
        nodes=(45,),
        spot_fractions=(1.0,),
        orchestrators=("ec2",),
        checkpoint_intervals_hours=(2.0,),
    )
    result = optimize(plan, catalog, space=space, today=TODAY)
    p4de = next(c for c in result.pareto if c.instance == "p4de.24xlarge")
    assert p4de.nodes == 45
    assert p4de.spot_fraction == 1.0
    assert [k.kind for k in p4de.caveats] == ["older_gpu", "spot_capacity"]
    spot = p4de.caveats[1].text
    assert "45 of 45 nodes on spot (the plan: 16)" in spot  # 0.5 × 32 = 16
    assert result.user is not None
    assert result.user.caveats == ()
    as_json = p4de.as_dict()["caveats"]
    assert as_json[0]["kind"] == "older_gpu"
    assert "312 vs 989 TFLOP/s" in as_json[0]["text"]


def test_tpu_recommendation_carries_porting_cloud_memory_spot(catalog: Catalog) -> None:
    """Widening to GCP (--clouds gcp): a 256-chip all-spot TPU v6e cluster is a different vendor
    (google vs nvidia: porting), cloud (gcp vs aws), 32 GB vs 80 GB HBM (memory) and 256 spot
    chips vs the plan's 16 spot nodes (spot capacity); v6e launched after the H100 (no
    older_gpu)."""
    space = SearchSpace(
        instances=("tpu-v6e",),
        nodes=(256,),
        spot_fractions=(1.0,),
        orchestrators=("vm",),
        checkpoint_intervals_hours=(2.0,),
    )
    result = optimize(load_plan(SEED), catalog, space=space, clouds=("gcp",), today=TODAY)
    tpu = next(c for c in result.pareto if c.instance == "tpu-v6e")
    assert [k.kind for k in tpu.caveats] == ["porting", "cloud", "memory", "spot_capacity"]
    assert "JAX" in tpu.caveats[0].text


def test_stand_in_needs_opt_in(catalog: Catalog) -> None:
    """Naming the H800 stand-in is refused with the flag that allows it; with the opt-in it is
    searched and every row on it says it is a stand-in."""
    plan = load_plan(SEED)
    space = SearchSpace(
        instances=("h800-8x-gpu-hour",), nodes=(32,), checkpoint_intervals_hours=(2.0,)
    )
    with pytest.raises(SpecError, match="--allow-stand-ins") as exc:
        optimize(plan, catalog, space=space, today=TODAY)
    assert exc.value.field == "instances"
    result = optimize(plan, catalog, space=space, today=TODAY, allow_stand_ins=True)
    rows = [c for c in (result.best, *result.pareto) if c.instance == "h800-8x-gpu-hour"]
    assert rows
    assert all(c.caveats[0].kind == "stand_in" for c in rows)


def test_trn2_stand_in_price_is_not_searched_on_aws(catalog: Catalog) -> None:
    """--clouds aws searches every AWS accelerator, but trn2.48xlarge's only On-Demand price is a
    catalog stand-in (no public SKU), so it is left out and says why."""
    result = optimize(load_plan(SEED), catalog, clouds=("aws",), today=TODAY)
    assert all(
        c.instance not in {"trn2.48xlarge", "h800-8x-gpu-hour"}
        for c in (result.best, *result.pareto)
    )
    assert any(
        s.startswith("trn2.48xlarge: not searched (its on-demand price is a catalog stand-in")
        for s in result.skipped
    )


def test_rightsizing_efficiency_is_relative_to_the_fewest_node_hours(catalog: Catalog) -> None:
    """hyperpod-finetune (72 h on 16 p5, checkpoints to S3) on trn1: hours scale as 1/nodes, and
    the checkpoint stall (980 GB at 2 GB/s per node, one checkpoint per 2 wall hours) costs
    count ∝ 1/N × N nodes × 980 / (2 N) s ∝ 1/N node-hours, so a larger cluster needs *fewer*
    node-hours than the smallest. Against the smallest count that read 1.0003 (> 1); now each
    row is min(nodes × wall) / (nodes × wall): exactly 1 at the minimum, below elsewhere."""
    plan = load_plan(EXAMPLES / "hyperpod-finetune.toml")
    space = SearchSpace(instances=("trn1.32xlarge",), nodes=(3, 4, 6, 8))
    result = optimize(plan, catalog, space=space, clouds=("aws",), today=TODAY)
    rows = list(result.rightsizing)
    assert len(rows) >= 2
    node_hours = [r.nodes * r.wall_hours for r in rows]
    assert node_hours[0] > min(node_hours)  # the smallest count is not the most efficient
    for r, nh in zip(rows, node_hours, strict=True):
        assert r.efficiency == pytest.approx(min(node_hours) / nh, rel=1e-12)
        assert r.efficiency <= 1.0
    assert max(r.efficiency for r in rows) == 1.0


def _hyperpod_space() -> SearchSpace:
    return SearchSpace(
        instances=("p5.48xlarge",),
        nodes=(32,),
        spot_fractions=(0.0, 1.0),
        orchestrators=("ec2", "hyperpod"),
        checkpoint_intervals_hours=(2.0,),
    )


def test_hyperpod_without_an_ml_price_is_not_a_candidate(catalog: Catalog) -> None:
    """A catalog with no SageMaker ml.* price (so none derivable either): a HyperPod cluster
    priced at the EC2 rate would tie EC2 less its premium and win on its faster restarts, so it
    is left out, with the forecast's own reason."""
    catalog = replace(catalog, prices=tuple(p for p in catalog.prices if "ml." not in p.item))
    result = optimize(load_plan(SEED), catalog, space=_hyperpod_space(), today=TODAY)
    none = catalog.find_price(
        "ml.p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=TODAY
    )
    assert none is None
    assert all(c.orchestrator == "ec2" for c in [result.best, *result.pareto])
    assert any(
        s.startswith("p5.48xlarge: HyperPod not searched (no published SageMaker ml.p5.48xlarge")
        for s in result.skipped
    )


def test_hyperpod_with_an_ml_price_is_searched_on_demand_only(catalog: Catalog) -> None:
    """With an ml.p5.48xlarge price the on-demand premium is priced, so HyperPod is searched; on
    spot it still has no published HyperPod Spot rate, so every HyperPod candidate found keeps its
    nodes on demand although spot would be far cheaper (the plan's own EC2 is searched too)."""
    ml = price("ml.p5.48xlarge", "on_demand", "instance-hour", 1000.0)
    with_ml = replace(catalog, prices=(*catalog.prices, ml))
    space = replace(_hyperpod_space(), orchestrators=("hyperpod",))
    result = optimize(load_plan(SEED), with_ml, space=space, today=TODAY)
    found = [c for c in [result.best, *result.pareto] if c.orchestrator == "hyperpod"]
    assert found
    assert all(c.spot_fraction == 0.0 for c in found)
    assert any(s.startswith("p5.48xlarge: HyperPod on spot not searched") for s in result.skipped)
    assert not any(s.startswith("p5.48xlarge: HyperPod not searched") for s in result.skipped)


def test_a_deadline_met_only_on_average_is_a_caveat(catalog: Catalog) -> None:
    """Was: "cheapest within the 12 h deadline" recommended a plan whose own P90 wall-clock was
    12.6 h, with no word of it. Every candidate meeting the deadline on its expected wall-clock
    but not at its P90 says so, as does one that misses it on average (the plan as written);
    the others do not."""
    plan = load_plan(SEED)
    result = optimize(plan, catalog, deadline_hours=12.0, today=TODAY)
    seen = [result.best, *result.pareto]
    for c in seen:
        # At risk at its P90, or (the plan as written, say) past it on average.
        risky = c.p90_wall_hours > 12.0
        assert ("deadline_risk" in {k.kind for k in c.caveats}) == risky
    assert any("deadline_risk" in {k.kind for k in c.caveats} for c in seen)


def test_a_price_from_the_reference_region_is_a_caveat(catalog: Catalog) -> None:
    """Was: a plan in eu-west-2 got recommendations priced at us-east-1's rates (the catalog has
    no eu-west-2 point for them) with no caveat, while its forecast warns of it."""
    plan = load_plan(SEED)
    plan = plan.model_copy(
        update={"cluster": plan.cluster.model_copy(update={"region": "eu-west-2"})}
    )
    result = optimize(plan, catalog, today=TODAY)
    for c in [result.best, *result.pareto]:
        as_of = plan.prices.as_of
        rate = catalog.find_price(
            c.instance, "on_demand", provider=c.provider, region=c.region, as_of=as_of
        )
        assert rate is not None
        flagged = "reference_region" in {k.kind for k in c.caveats}
        assert flagged == (rate.region != c.region)
    assert "reference_region" in {k.kind for k in result.best.caveats}


def test_a_switch_of_orchestrator_carries_its_caveat(catalog: Catalog) -> None:
    """Issue #38: the seed plan runs on raw EC2; a recommendation on EKS or HyperPod says what the
    move changes (like a move of cloud does), one on the plan's own EC2 does not."""
    space = replace(
        _hyperpod_space(), orchestrators=("ec2", "hyperpod", "eks"), spot_fractions=(0.0,)
    )
    result = optimize(load_plan(SEED), catalog, space=space, today=TODAY)
    seen = {c.orchestrator: c for c in [result.best, *result.pareto]}
    for o, c in seen.items():
        kinds = [k.kind for k in c.caveats]
        if o == "ec2":
            assert "orchestrator" not in kinds
        else:
            (text,) = [k.text for k in c.caveats if k.kind == "orchestrator"]
            assert text.startswith(f"moves the run from ec2 to {o}")
    assert set(seen) - {"ec2"}  # some other orchestrator was among the results
