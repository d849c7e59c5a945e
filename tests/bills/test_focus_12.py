"""FOCUS 1.2 columns the reader maps, on a tiny FOCUS 1.2 file built in each test."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import read_bill

# FOCUS 1.2 as AWS's ``FOCUS_1_2_AWS`` writes it: no ``x_UsageType``; the usage type is in
# ``SkuMeter`` (AWS Data Exports user guide, "Migrating from FOCUS 1.0 to FOCUS 1.2").
_COLS = [
    "BilledCost", "EffectiveCost", "ListCost", "BillingCurrency", "ChargeCategory",
    "ServiceCategory", "ServiceName", "ChargePeriodStart", "BillingPeriodStart",
    "BillingPeriodEnd", "ChargeDescription", "PricingCategory", "ConsumedQuantity",
    "ConsumedUnit", "SkuMeter", "InvoiceId", "BillingAccountType", "PricingCurrency",
]  # fmt: skip
_BASE = {
    "BillingCurrency": "USD", "PricingCurrency": "USD", "ChargeCategory": "Usage",
    "ChargePeriodStart": "2026-04-02T00:00:00Z", "BillingPeriodStart": "2026-04-01T00:00:00Z",
    "BillingPeriodEnd": "2026-05-01T00:00:00Z", "PricingCategory": "Standard",
    "InvoiceId": "INV-2026-04", "BillingAccountType": "Billing Account",
}  # fmt: skip


def _focus12(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=_COLS, restval="")
        w.writeheader()
        for r in rows:
            w.writerow(
                {**_BASE, "EffectiveCost": r["BilledCost"], "ListCost": r["BilledCost"], **r}
            )
    return path


def test_focus_12_skumeter_is_the_usage_type(tmp_path: Path) -> None:
    """``SkuMeter`` classifies as the usage type does: SageMaker ``Train:ml.p5.48xlarge`` hours
    are GPU compute (not orchestration) and ``…-AWS-Out-Bytes`` under EC2 is data transfer (not
    compute), though neither description says so."""
    bill = _focus12(
        tmp_path / "focus12.csv",
        [
            {"ServiceName": "Amazon SageMaker", "ServiceCategory": "AI and Machine Learning",
             "SkuMeter": "USE1-Train:ml.p5.48xlarge", "ChargeDescription": "Training",
             "BilledCost": "200", "ConsumedQuantity": "2", "ConsumedUnit": "Hours"},
            {"ServiceName": "Amazon Elastic Compute Cloud", "ServiceCategory": "Compute",
             "SkuMeter": "USE1-USE2-AWS-Out-Bytes", "ChargeDescription": "EC2 charge",
             "BilledCost": "5", "ConsumedQuantity": "250", "ConsumedUnit": "GB"},
            {"ServiceName": "Amazon Elastic Compute Cloud", "ServiceCategory": "Storage",
             "SkuMeter": "EBS:VolumeUsage.gp3", "ChargeDescription": "gp3",
             "BilledCost": "8"},
        ],
    )  # fmt: skip
    s = read_bill(bill)
    assert s.format == "focus-1.2"
    assert s.by_category["compute"] == pytest.approx(200.0)  # the ml.p5 training hours
    assert s.by_category["data_transfer"] == pytest.approx(5.0)
    assert s.by_category["storage"] == pytest.approx(8.0)
    assert s.by_category["orchestration"] == 0
    assert s.gpu_instance_hours == pytest.approx(2.0)
    assert s.billed_cost == pytest.approx(200 + 5 + 8)


def test_focus_x_usagetype_wins_over_skumeter(tmp_path: Path) -> None:
    """With both columns (an export adding ``x_UsageType`` to FOCUS 1.2), ``x_UsageType`` is the
    usage type and an empty one falls back on ``SkuMeter``: the first row is storage by its
    ``x_UsageType`` ``EBS:SnapshotUsage`` (its SkuMeter says transfer), the second transfer."""
    path = tmp_path / "both.csv"
    cols = [*_COLS, "x_UsageType"]
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, restval="")
        w.writeheader()
        for r in (
            {
                "SkuMeter": "DataTransfer-Out-Bytes",
                "x_UsageType": "EBS:SnapshotUsage",
                "BilledCost": "3",
            },
            {"SkuMeter": "DataTransfer-Out-Bytes", "x_UsageType": "", "BilledCost": "4"},
        ):
            w.writerow(
                {
                    **_BASE,
                    "ServiceName": "Amazon Elastic Compute Cloud",
                    "ServiceCategory": "Compute",
                    "ChargeDescription": "EC2 charge",
                    "EffectiveCost": r["BilledCost"],
                    "ListCost": r["BilledCost"],
                    **r,
                }
            )
    s = read_bill(path)
    assert s.by_category["storage"] == pytest.approx(3.0)
    assert s.by_category["data_transfer"] == pytest.approx(4.0)
