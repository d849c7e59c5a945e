"""Checkpoint driver: the write stall at the cluster rate, and on S3 the retained checkpoints and
their PUTs, on round tiny prices ($10/$4 per instance-hour, $0.02/GB-month, $5 per 1000 PUTs)."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import checkpoint
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for


def _usage(catalog: Catalog, purchase: dict[str, Any] | None = None, **ckpt: Any) -> Usage:
    """4 × p5.48xlarge, a stated 10 h, a 720 GB checkpoint every 2 h written at 1 GB/s per node.

    Hand: 10 h / 2 h = 5 checkpoints; 720 GB / (4 nodes × 1 GB/s) = 180 s = 0.05 h each, so
    0.25 h of stall and a 10.25 h wall-clock.
    """
    plan = zero_hidden_plan()
    plan["checkpoint"] = {
        "interval_hours": 2,
        "size_gb": 720,
        "write_gbytes_per_s_per_node": 1,
        **ckpt,
    }
    plan["purchase"] = purchase or {}
    # An FSx fast enough not to cap the 4 GB/s (24,000 GB at 1,000 MB/s per TiB ≈ 21.8 GB/s),
    # and EBS volumes that take 1 GB/s each (1,000 MiB/s ≈ 1.049 GB/s: gp3 allows it from
    # 4,000 IOPS at 0.25 MiB/s per IOPS, which needs 8 GiB at 500 IOPS per GiB).
    plan["storage"] |= {
        "fsx_capacity_gb": 24000,
        "fsx_tier": "persistent_1000",
        "ebs_gb_per_node": 8,
        "ebs_iops": 4000,
        "ebs_throughput_mibps": 1000,
    }
    return usage_for(plan_from_dict(plan), catalog, today=TODAY)


def _tiny(catalog: Catalog) -> Catalog:
    return tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("p5.48xlarge", "spot", "instance-hour", 4.0),
        price("s3.standard.storage", "on_demand", "GB-month", 0.02),
        price("s3.requests.tier1", "on_demand", "1000 requests", 5.0),
    )


def _lines(usage: Usage, catalog: Catalog) -> list[Charge]:
    return list(checkpoint.price(usage, catalog))


def test_usage_counts_the_stated_checkpoints(catalog: Catalog) -> None:
    """The plan above gives 5 checkpoints of 0.05 h each (the figures the tests below price)."""
    u = _usage(catalog, target="s3")
    assert u.checkpoint.count == pytest.approx(5.0)
    assert u.checkpoint.stall_hours == pytest.approx(0.25)
    assert u.wall_hours == pytest.approx(10.25)


@pytest.mark.parametrize("target", ["fsx", "ebs"])
def test_fsx_or_ebs_target_is_only_the_stall(catalog: Catalog, target: str) -> None:
    """On FSx/EBS the capacity is the storage driver's: one line, 0.25 h × 4 nodes × $10 = $10."""
    (stall,) = _lines(_usage(catalog, target=target), _tiny(catalog))
    assert stall.item == "training stalled while checkpointing"
    assert stall.unit == "cluster-hour"
    assert stall.quantity == pytest.approx(0.25)
    assert stall.unit_price_usd == pytest.approx(40.0)
    assert stall.cost_usd == pytest.approx(10.0)
    # The target in AWS's words (services.aws.shared_fs / block_storage).
    product = {"fsx": "FSx for Lustre", "ebs": "EBS gp3"}[target]
    assert f"720 GB at 4 GB/s, synchronous write to {product}" in stall.basis()


def test_stall_is_billed_at_the_blended_spot_rate(catalog: Catalog) -> None:
    """Half spot: 4 × (½ × $10 + ½ × $4) = $28 per cluster-hour × 0.25 h = $7."""
    (stall,) = _lines(_usage(catalog, {"spot_fraction": 0.5}, target="fsx"), _tiny(catalog))
    assert stall.unit_price_usd == pytest.approx(28.0)
    assert stall.cost_usd == pytest.approx(7.0)


def test_s3_target_adds_retained_storage_and_puts(catalog: Catalog) -> None:
    """S3: min(keep_last 3, 5 written) = 3 × 720 GB × (10.25 h run + 30 d × 24 h) / 730 h per month
    at $0.02. PUTs: each of the 4 nodes uploads its 180,000 MB shard as ceil(180,000 / 64) =
    2,813 parts plus create and complete: 4 × 2,815 = 11,260 per checkpoint, × 5 = 56,300
    requests = 56.3 thousand × $5 = $281.50."""
    u = _usage(catalog, target="s3", keep_last=3, retention_days=30)
    stall, store, puts = _lines(u, _tiny(catalog))
    assert stall.cost_usd == pytest.approx(10.0)
    gb_months = 3 * 720 * (10.25 + 30 * 24) / 730  # ≈ 2,160.74
    assert store.item == "checkpoint storage (S3 Standard)"
    assert store.unit == "GB-month"
    assert store.quantity == pytest.approx(gb_months)
    assert store.cost_usd == pytest.approx(gb_months * 0.02)
    assert u.data.object_mb == 64  # packaged assumption: the part size the PUT count uses
    assert puts.unit == "1000 requests"
    assert puts.quantity == pytest.approx(56.3)
    assert puts.cost_usd == pytest.approx(281.5)


def test_s3_keeps_no_more_checkpoints_than_were_written(catalog: Catalog) -> None:
    """keep_last 10 but only 5 written: 5 × 720 GB × (10.25 h + 0 days) / 730 h at $0.02."""
    u = _usage(catalog, target="s3", keep_last=10, retention_days=0)
    _, store, _ = _lines(u, _tiny(catalog))
    assert store.quantity == pytest.approx(5 * 720 * 10.25 / 730)


def test_no_checkpoint_size_gives_no_lines(catalog: Catalog) -> None:
    """A plan with no model size and no checkpoint size writes nothing: no checkpoint lines."""
    plan = zero_hidden_plan()
    u = usage_for(plan_from_dict(plan), catalog, today=TODAY)
    assert u.checkpoint.size_gb == 0
    assert _lines(u, _tiny(catalog)) == []


def test_asynchronous_snapshot_stall_is_priced_and_named(catalog: Catalog) -> None:
    """Async: the stall is the usage's snapshot time (shorter than the 0.25 h synchronous write),
    priced at 4 × $10 = $40 per cluster-hour, and the basis says it was a snapshot."""
    u = _usage(catalog, target="ebs", asynchronous=True)
    assert 0 < u.checkpoint.stall_hours < 0.25
    (stall,) = _lines(u, _tiny(catalog))
    assert stall.quantity == pytest.approx(u.checkpoint.stall_hours)
    assert stall.cost_usd == pytest.approx(u.checkpoint.stall_hours * 40.0)
    assert "async snapshot" in stall.basis()
