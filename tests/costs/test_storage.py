"""Storage driver on a tiny catalog: GB × run hours / 730 at round made-up prices.

Every plan is ``conftest.zero_hidden_plan`` (4 × p5.48xlarge for exactly 10 h, every hidden
cost off) with one storage item switched on, so a month fraction is 10 / 730 and each expected
figure is hand arithmetic on the prices written here.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import storage
from trainbill.costs._pricing import UNPRICED
from trainbill.errors import PriceNotFoundError
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import usage_for

NODE_HOUR = price("p5.48xlarge", "on_demand", "instance-hour", 10.0)
EBS = price("ebs.gp3.storage", "on_demand", "GB-month", 0.1)
IOPS = price("ebs.gp3.iops", "on_demand", "IOPS-month", 0.01)
THROUGHPUT = price("ebs.gp3.throughput", "on_demand", "MiBps-month", 0.05)
FSX = price("fsx.lustre.persistent_125", "on_demand", "GB-month", 0.2)
S3 = price("s3.standard.storage", "on_demand", "GB-month", 0.02)
ALL = (NODE_HOUR, EBS, IOPS, THROUGHPUT, FSX, S3)


def _lines(base: Catalog, storage_: dict[str, Any], *prices: Any, **data: Any) -> list[Charge]:
    """The storage driver's charges for the 4-node, 10 h plan with ``storage_`` (and ``data``)."""
    plan = zero_hidden_plan()
    plan["storage"] = {**plan["storage"], **storage_}
    plan["data"] = {**plan["data"], **data}
    tiny = tiny_catalog(base, *(prices or ALL))
    return list(storage.price(usage_for(plan_from_dict(plan), tiny, today=TODAY), tiny))


def test_ebs_volumes_at_baseline_are_capacity_only(catalog: Catalog) -> None:
    """730 GB per node at the free 3,000 IOPS / 125 MiB/s: one capacity line, no performance
    lines."""
    (line,) = _lines(
        catalog, {"ebs_gb_per_node": 730, "ebs_iops": 3000, "ebs_throughput_mibps": 125}
    )
    # 4 nodes × 730 GB × 10 h / 730 h = 40 GB-month × $0.1 = $4
    assert line.item == "EBS gp3 volumes"
    assert line.unit == "GB-month"
    assert line.quantity == pytest.approx(40.0)
    assert line.unit_price_usd == 0.1
    assert line.cost_usd == pytest.approx(4.0)


def test_ebs_iops_and_throughput_above_the_free_baseline_are_billed(catalog: Catalog) -> None:
    """gp3 at 10,000 IOPS and 500 MiB/s bills only what is above 3,000 IOPS and 125 MiB/s."""
    lines = _lines(
        catalog, {"ebs_gb_per_node": 730, "ebs_iops": 10000, "ebs_throughput_mibps": 500}
    )
    by_unit = {ln.unit: ln for ln in lines}
    assert set(by_unit) == {"GB-month", "IOPS-month", "MiBps-month"}
    # 4 nodes × (10,000 − 3,000) IOPS × 10 / 730 = 383.56 IOPS-month × $0.01 = $3.8356
    iops = by_unit["IOPS-month"]
    assert iops.quantity == pytest.approx(4 * 7000 * 10 / 730)
    assert iops.cost_usd == pytest.approx(4 * 7000 * 10 / 730 * 0.01)
    # 4 nodes × (500 − 125) MiB/s × 10 / 730 = 20.548 MiBps-month × $0.05 = $1.0274
    tp = by_unit["MiBps-month"]
    assert tp.quantity == pytest.approx(4 * 375 * 10 / 730)
    assert tp.cost_usd == pytest.approx(4 * 375 * 10 / 730 * 0.05)


def test_fsx_bills_its_whole_capacity_at_the_tier_price(catalog: Catalog) -> None:
    """An FSx file system is one line for its capacity, independent of the node count."""
    (line,) = _lines(catalog, {"fsx_capacity_gb": 7200, "fsx_tier": "persistent_125"})
    # 7,200 GiB (3 × 2,400, a size AWS creates) × 10 h / 730 h = 98.63 GB-month × $0.2 = $19.73
    assert line.item == "FSx for Lustre (persistent_125)"
    assert line.quantity == pytest.approx(7200 * 10 / 730)
    assert line.unit_price_usd == 0.2
    assert line.cost_usd == pytest.approx(7200 * 10 / 730 * 0.2)


def test_fsx_is_billed_at_the_size_aws_creates(catalog: Catalog) -> None:
    """FSx for Lustre comes in 1,200 GiB, 2,400 GiB or multiples of 2,400 GiB: 100 GB asked for is
    a 1,200 GiB file system (1,200 × 10 / 730 = 16.44 GB-month), 3,000 is 4,800 (65.75)."""
    (small,) = _lines(catalog, {"fsx_capacity_gb": 100, "fsx_tier": "persistent_125"})
    assert small.quantity == pytest.approx(1200 * 10 / 730)
    (odd,) = _lines(catalog, {"fsx_capacity_gb": 3000, "fsx_tier": "persistent_125"})
    assert odd.quantity == pytest.approx(4800 * 10 / 730)


def test_dataset_sits_in_object_storage_for_the_run(catalog: Catalog) -> None:
    """The dataset is billed as S3 GB-months over the wall-clock, once (not per node)."""
    (line,) = _lines(catalog, {}, dataset_gb=14600)
    # 14,600 GB × 10 / 730 = 200 GB-month × $0.02 = $4
    assert line.item == "training dataset in S3 Standard"
    assert line.quantity == pytest.approx(200.0)
    assert line.cost_usd == pytest.approx(4.0)


def test_nothing_stored_gives_no_lines(catalog: Catalog) -> None:
    """No volumes, file system or dataset: the driver yields nothing."""
    assert _lines(catalog, {}) == []


def test_missing_aws_price_is_an_error_not_a_zero(catalog: Catalog) -> None:
    """AWS is the fully priced provider: an EBS price absent from the catalog raises, naming it."""
    with pytest.raises(PriceNotFoundError, match=r"ebs\.gp3\.storage"):
        _lines(catalog, {"ebs_gb_per_node": 730}, NODE_HOUR)


def test_missing_gcp_price_is_a_not_priced_line(catalog: Catalog) -> None:
    """A GCP disk with no price point is a $0 NOT PRICED line, never AWS's EBS price."""
    plan = zero_hidden_plan()
    plan["cluster"] = {"provider": "gcp", "instance": "a3-highgpu-8g", "nodes": 4}
    plan["storage"] = {"ebs_gb_per_node": 730, "fsx_capacity_gb": 0}
    node = price(
        "a3-highgpu-8g", "on_demand", "instance-hour", 10.0, provider="gcp", region="us-central1"
    )
    tiny = tiny_catalog(catalog, node, EBS)  # an AWS EBS price only: must not be used for GCP
    u = usage_for(plan_from_dict(plan), tiny, today=TODAY)
    (line,) = storage.price(u, tiny)
    assert line.item == "Balanced Persistent Disk volumes"
    assert line.quantity == pytest.approx(40.0)  # 4 × 730 × 10 / 730, as on AWS
    assert line.unit_price_usd == 0.0
    assert line.source.startswith(UNPRICED)


def test_volumes_at_baseline_need_no_performance_price(catalog: Catalog) -> None:
    """gp3 at the free 3,000 IOPS / 125 MiB/s bills capacity only, so needs no IOPS price."""
    lines = _lines(catalog, {"ebs_gb_per_node": 730}, NODE_HOUR, EBS)
    assert [ln.unit for ln in lines] == ["GB-month"]  # 4 × 730 × 10 / 730 = 40 GB-month


def test_the_dataset_is_stored_where_it_is_held(catalog: Catalog) -> None:
    """Read from FSx, the dataset's durable copy is still in S3 (the file system is loaded from
    it): 14,600 GB × 10 / 730 = 200 GB-month, said in the basis. Held on premises it is stored,
    and billed, there: no line."""
    (line,) = _lines(catalog, {}, dataset_gb=14600, source="fsx")
    assert line.quantity == pytest.approx(200.0)
    assert "(the copy fsx is loaded from)" in line.basis()
    assert _lines(catalog, {}, dataset_gb=14600, source="on_premises") == []
