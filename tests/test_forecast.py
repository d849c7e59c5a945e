"""Forecast: hand-computed ledger lines, the seed example and invariants."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SEED, TODAY, h100_maturity, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog, Provenance
from trainbill.forecasting import CautionKind, forecast, forecast_usage
from trainbill.ledger import CATEGORIES
from trainbill.spec import load_plan, plan_from_dict
from trainbill.usage import usage_for


def _line(fc: Any, category: str, item_start: str) -> Any:
    matches = [ln for ln in fc.ledger.in_category(category) if ln.item.startswith(item_start)]
    assert len(matches) == 1, [ln.item for ln in fc.ledger.lines]
    return matches[0]


def test_seed_example_quote_is_the_articles(catalog: Catalog) -> None:
    """Quote = 32 × $98.32 × 72 h = $226,529.28, exactly as the article computes it."""
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    assert fc.quote_usd == pytest.approx(32 * 98.32 * 72, abs=1e-6)
    assert round(fc.quote_usd, 2) == 226529.28


def test_seed_example_compute_lines(catalog: Catalog) -> None:
    """16 on-demand nodes × 72 h × $98.32 = $113,264.64; 16 spot × 72 × $25.66 = $29,560.32."""
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    od = _line(fc, "compute", "p5.48xlarge on-demand")
    spot = _line(fc, "compute", "p5.48xlarge spot")
    assert od.quantity == pytest.approx(1152.0)
    assert od.cost_usd == pytest.approx(113264.64)
    assert spot.cost_usd == pytest.approx(29560.32)


def test_seed_example_straggler_line(catalog: Catalog) -> None:
    """Stall = 72 h × 0.012 × sqrt(2 ln 256) at 32 × (½·98.32 + ½·25.66) = $1,983.68/h."""
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    line = _line(fc, "sync_stall", "stragglers")
    hours = 72 * 0.012 * math.sqrt(2 * math.log(256))  # = 2.8773 h
    assert line.unit_price_usd == pytest.approx(32 * (0.5 * 98.32 + 0.5 * 25.66))
    assert line.quantity == pytest.approx(hours)
    assert line.cost_usd == pytest.approx(hours * 1983.68)


def test_seed_example_checkpoint_stall(catalog: Catalog) -> None:
    """980 GB (70e9 × 14 B) to FSx at 24,000 GiB = 24 of AWS's 'TiB' × 250 MB/s/TiB, 36 times."""
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    line = _line(fc, "checkpoint", "training stalled")
    fsx_gb_per_s = 24000 / 1000 * 250 / 1000  # 6 GB/s < 32 nodes × 2 GB/s
    expected_hours = 36 * 980 / fsx_gb_per_s / 3600  # 1.633 h
    assert line.quantity == pytest.approx(expected_hours)


def test_seed_example_has_every_hidden_category(catalog: Catalog) -> None:
    """The article's run shows stalls, checkpoints, storage, transfer, NAT, reclaims, failures."""
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    by = fc.ledger.by_category()
    for cat in (
        "sync_stall",
        "checkpoint",
        "storage",
        "data_transfer",
        "networking",
        "monitoring",
        "spot_reclaim",
        "failures",
    ):
        assert by[cat] > 0, cat


def test_nat_line_hand_computed(catalog: Catalog) -> None:
    """2 NAT gateways × 10 h × $0.045 = $0.90; 4 nodes × 10 h × 1 GB × $0.045 = $1.80."""
    plan = zero_hidden_plan()
    plan["network"] = {"nat_gateways": 2, "nat_gb_per_node_hour": 1.0, "public_ips_per_node": 0}
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    assert _line(fc, "networking", "NAT gateway hours").cost_usd == pytest.approx(2 * 10 * 0.045)
    assert _line(fc, "networking", "NAT gateway data").cost_usd == pytest.approx(
        4 * 10 * 1.0 * 0.045
    )
    # The two NAT Elastic IPs: 2 addresses × 10 h × $0.005.
    assert _line(fc, "networking", "public IPv4").cost_usd == pytest.approx(2 * 10 * 0.005)


def test_flags_only_plan_derives_hours(catalog: Catalog) -> None:
    """70B on 1.4T tokens on 512 H100 with the fitted kernel efficiency, by hand (no recompute)."""
    plan = plan_from_dict(
        {"model": {"params": 70e9, "tokens": 1.4e12}, "cluster": {"gpu": "h100", "gpus": 512}}
    )
    fc = forecast(plan, catalog, today=TODAY)
    # Shape rule d = (N · 128 / 12)^(1/3) = (7.467e11)^(1/3) = 9071.6 -> 9072;
    # L = 9072/128 = 70.9 -> 71.
    # FLOPs = 6·70e9·1.4e12 + 12·71·9072·4096·1.4e12 (default seq_len 4096) = 5.88e23 + 4.43e22;
    # fused causal attention runs half of its count (time.causal_attention_work_share 0.5).
    flops = 6 * 70e9 * 1.4e12 + 0.5 * 12 * 71 * 9072 * 4096 * 1.4e12
    e_max, k_mem = (
        catalog.value("time.fit.e_max"),
        catalog.value("time.fit.k_mem"),
    )  # fitted catalog data
    m = (
        k_mem * (989e12 / 3.35e12) / 9072
    )  # memory-bound share: H100 989 TFLOP/s over 3.35 TB/s = 295 FLOP/byte, width 9072
    host = (
        catalog.value("time.fit.step_overhead_s") * 1.4e12 / 4_194_304
    )  # fixed seconds per step × 333,786 steps of the 2^22-token floor batch
    # Kernels at e_max × the H100's software maturity on TODAY (conftest.h100_maturity).
    expected = (flops * (1 + m) / (512 * 989e12 * e_max * h100_maturity(catalog)) + host) / 3600
    assert fc.usage.compute.hours == pytest.approx(expected)
    assert fc.usage.instance.instance == "p5.48xlarge"
    assert fc.usage.nodes == 64


def test_zero_hidden_rates_bill_equals_quote(catalog: Catalog) -> None:
    """With every hidden-cost rate at zero the bill is exactly the quote."""
    fc = forecast(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY)
    assert fc.total_usd == pytest.approx(fc.quote_usd)
    assert fc.quote_usd == pytest.approx(4 * 98.32 * 10)


@settings(max_examples=40, deadline=None)
@given(
    hours=st.floats(min_value=1, max_value=2000),
    nodes=st.integers(min_value=1, max_value=256),
    spot=st.floats(min_value=0, max_value=1),
)
def test_bill_invariants(catalog: Catalog, hours: float, nodes: int, spot: float) -> None:
    """Lines sum to the total, percentages to 100, and cost rises with hours and nodes."""
    base: dict[str, Any] = {
        "run": {"hours": hours},
        "model": {"params": 7e9},
        "cluster": {"instance": "p5.48xlarge", "nodes": nodes},
        "purchase": {"spot_fraction": spot},
    }
    fc = forecast(plan_from_dict(base), catalog, today=TODAY)
    assert sum(line.cost_usd for line in fc.ledger.lines) == pytest.approx(fc.total_usd)
    assert sum(fc.percentages().values()) == pytest.approx(100.0)
    assert set(fc.ledger.by_category()) == set(CATEGORIES)
    for line in fc.ledger.lines:
        assert line.cost_usd == pytest.approx(line.quantity * line.unit_price_usd)
    longer = forecast(plan_from_dict({**base, "run": {"hours": hours * 1.5}}), catalog, today=TODAY)
    bigger = forecast(
        plan_from_dict({**base, "cluster": {"instance": "p5.48xlarge", "nodes": nodes + 1}}),
        catalog,
        today=TODAY,
    )
    assert longer.total_usd > fc.total_usd
    assert bigger.total_usd > fc.total_usd


@settings(max_examples=25, deadline=None)
@given(hours=st.floats(min_value=0.5, max_value=500), nodes=st.integers(min_value=1, max_value=64))
def test_zero_hidden_property(catalog: Catalog, hours: float, nodes: int) -> None:
    """For any size and length, zero hidden rates ⇒ bill == quote."""
    plan = zero_hidden_plan()
    plan["run"]["hours"] = hours
    plan["cluster"]["nodes"] = nodes
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    assert fc.total_usd == pytest.approx(fc.quote_usd)


def test_the_error_band_reruns_the_plan_at_the_cross_validated_multipliers(
    catalog: Catalog,
) -> None:
    """gpu_hours_p10/p90 are the plan re-run with training hours × the P10 and P90 of the
    cluster's size bucket in time.error_band (64 GPUs: up to 128, ``small_cluster_*``)."""
    from trainbill.spec import plan_from_dict
    from trainbill.usage import usage_for

    plan = plan_from_dict(
        {
            "model": {"params": 7e9, "tokens": 1e12},
            "cluster": {"gpu": "h100", "gpus": 64},
            "prices": {"as_of": "2025-05-01"},
        }
    )
    fc = forecast(plan, catalog, today=TODAY)
    lo = float(catalog.value("time.error_band.small_cluster_p10"))
    hi = float(catalog.value("time.error_band.small_cluster_p90"))
    assert lo < 1.0 < hi  # the band straddles the forecast
    at_lo = usage_for(plan, catalog, today=TODAY, time_scale=lo)
    # Training hours scale exactly: 64 GPUs × compute hours × lo.
    assert at_lo.compute.hours == pytest.approx(fc.usage.compute.hours * lo, rel=1e-12)
    doc = fc.as_dict()
    # Issue #42: the band is a "range" (80 % of similar runs) in the JSON, not a second "P90".
    t = doc["time"]
    assert t["gpu_hours_range_low"] == pytest.approx(at_lo.wall_hours * 64, rel=1e-12)
    assert t["gpu_hours_range_low"] < t["gpu_hours"] < t["gpu_hours_range_high"]
    assert doc["total_usd_range_low"] < doc["total_usd"] < doc["total_usd_range_high"]
    assert "80 % of similar runs" in t["gpu_hours_range_basis"]
    assert "P90" not in t["gpu_hours_range_basis"]
    assert "clusters of up to 128 GPUs" in t["gpu_hours_range_basis"]


def test_stated_hours_have_no_time_model_band(catalog: Catalog) -> None:
    """A plan that states run.hours has no range: the JSON says null (never a low equal to its
    high, issue #42) and the basis says why."""
    from trainbill.spec import load_plan

    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    doc = fc.as_dict()
    assert doc["time"]["gpu_hours_range_low"] is None
    assert doc["time"]["gpu_hours_range_high"] is None
    assert doc["total_usd_range_low"] is doc["total_usd_range_high"] is None
    assert "stated in the plan" in doc["time"]["gpu_hours_range_basis"]


def test_forecast_cautions_carry_their_kind(catalog: Catalog) -> None:
    """A region no cloud lists is priced at the reference region: one caution of that kind, its text
    among warnings."""
    plan = zero_hidden_plan()
    plan["cluster"]["region"] = "eu-north-7"  # in no cloud's catalog
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    (ref,) = fc.cautions_of(CautionKind.REFERENCE_REGION)
    # 4 × p5.48xlarge × $98.32 × 10 h = $3,932.80, the plan's only line.
    assert ref.text.startswith(
        "every line of the bill ($3,933) is priced at the rates of us-east-1 (aws's reference "
        "region): the catalog has no eu-north-7 price points"
    )
    assert fc.warnings == tuple(c.text for c in fc.cautions)
    out = fc.as_dict()
    # Backward compatible: "warnings" stays the list of texts; "cautions" adds the kinds.
    assert out["warnings"] == list(fc.warnings)
    assert {"kind": "reference_region", "text": ref.text} in [
        {"kind": c["kind"], "text": c["text"]} for c in out["cautions"]
    ]
    as_written = forecast(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY)
    assert not as_written.cautions_of(CautionKind.REFERENCE_REGION)


def test_the_reference_region_caution_stands_on_the_lines_provenance(catalog: Catalog) -> None:
    """eu-north-7 is in no catalog: its lines are priced at the reference region, each line says
    so as a field, and the one caution of that kind is drawn from those fields."""
    plan = zero_hidden_plan()
    plan["cluster"]["region"] = "eu-north-7"
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    assert fc.ledger.lines
    assert all(ln.provenance is Provenance.REFERENCE_REGION for ln in fc.ledger.lines)
    assert len(fc.cautions_of(CautionKind.REFERENCE_REGION)) == 1
    own = forecast(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY)
    assert {ln.provenance for ln in own.ledger.lines} == {Provenance.PUBLISHED}


def test_unpriced_lines_are_named_in_one_caution(catalog: Catalog) -> None:
    """A GCP NAT gateway on a catalog with no Cloud NAT or IP price: both lines are $0, marked
    unpriced, and named in the one ``unpriced`` caution; the priced node line is not."""
    plan = zero_hidden_plan()
    plan["cluster"] = {"provider": "gcp", "instance": "a3-highgpu-8g", "nodes": 4}
    plan["network"] = {**plan["network"], "nat_gateways": 1}
    node = price(
        "a3-highgpu-8g", "on_demand", "instance-hour", 10.0, provider="gcp", region="us-central1"
    )
    tiny = tiny_catalog(catalog, node)
    fc = forecast_usage(usage_for(plan_from_dict(plan), tiny, today=TODAY), tiny, today=TODAY)
    unpriced = [ln for ln in fc.ledger.lines if ln.provenance is Provenance.UNPRICED]
    assert unpriced
    assert all(ln.cost_usd == 0.0 for ln in unpriced)
    assert all(ln.category == "networking" for ln in unpriced)
    (caution,) = fc.cautions_of(CautionKind.UNPRICED)
    assert caution.text.startswith(f"{len(unpriced)} line(s) are NOT PRICED ($0)")
    assert all(ln.item in caution.text for ln in unpriced)
    assert "a3-highgpu-8g" not in caution.text
