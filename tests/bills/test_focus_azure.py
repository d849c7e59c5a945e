"""Azure's FOCUS export (``trainbill.bills.focus``): a GPU VM is named by ``x_SkuDetails``
(Cost Management's AdditionalInfo, ``"ServiceType": "Standard_ND96isr_H100_v5"``) or, when that
is empty, by its N-series meter name (``x_SkuMeterName`` "ND96isr H100 v5 Spot"). The rows
follow the column names of Microsoft's "FOCUS cost and usage details file schema"; the values
are made up for the test."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import read_bill

pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

_HEADER = [
    "BilledCost", "EffectiveCost", "ListCost", "BillingAccountId", "BillingCurrency",
    "BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd",
    "ChargeCategory", "ChargeDescription", "ConsumedQuantity", "ConsumedUnit",
    "PricingCategory", "PricingUnit", "ProviderName", "ResourceId", "ServiceCategory",
    "ServiceName", "x_SkuDetails", "x_SkuMeterName",
]  # fmt: skip
_VM = "/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachines/"
_H100 = '{"ServiceType":"Standard_ND96isr_H100_v5","VCPUs":96,"UsageType":"ComputeHR"}'
_LOW_PRIORITY = "NC24ads A100 v4 Low Priority"
_D8 = '{"ServiceType":"Standard_D8s_v5","VCPUs":8,"UsageType":"ComputeHR"}'
#: (billed, hours, unit, pricing category, service category, service, SKU details, meter)
_ROWS = [
    # An on-demand H100 VM named by x_SkuDetails: 10 h, $983.20.
    ("983.2", "10", "Hours", "Standard", "Compute", "Virtual Machines", _H100, "ND96isr H100 v5"),
    # A spot H100 VM without x_SkuDetails, named by its meter: 5 h, $150.
    ("150", "5", "Hours", "Dynamic", "Compute", "Virtual Machines", "", "ND96isr H100 v5 Spot"),
    # A low-priority A100 VM, meter only: 2 h, $20.
    ("20", "2", "Hours", "Standard", "Compute", "Virtual Machines", "", _LOW_PRIORITY),
    # A CPU VM (D-series): compute, not GPU.
    ("3.1", "8", "Hours", "Standard", "Compute", "Virtual Machines", _D8, "D8s v5"),
    # A managed disk: storage.
    ("12", "1", "1/Month", "Standard", "Storage", "Storage", "", "P30 LRS Disk"),
]  # fmt: skip


def _bill(path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(_HEADER)
        for i, (cost, qty, unit, pricing, cat, svc, details, meter) in enumerate(_ROWS):
            out.writerow([
                cost, cost, cost, "/providers/Microsoft.Billing/billingAccounts/123", "USD",
                "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z", "2026-10-01T00:00:00Z",
                "2026-10-02T00:00:00Z", "Usage", meter, qty, unit, pricing, "1 Hour",
                "Microsoft", f"{_VM}vm{i}", cat, svc, details, meter,
            ])  # fmt: skip
    return path


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_azure_gpu_vms_are_gpu_instance_hours(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """GPU instance-hours: 10 (x_SkuDetails) + 5 (spot meter) + 2 (low-priority meter) = 17;
    the D8s v5 CPU VM's 8 hours are compute but not GPU. GPU compute cost: 983.2 + 150 + 20 =
    1,153.2; compute 1,153.2 + 3.1 = 1,156.3, of which spot (PricingCategory Dynamic) 150."""
    if engine == "spark":
        request.getfixturevalue("spark_available")
    s = read_bill(_bill(tmp_path / "azure.csv"), engine=engine)
    assert s.gpu_instance_hours == pytest.approx(17.0)
    assert s.gpu_compute_cost == pytest.approx(1153.2)
    assert s.by_category["compute"] == pytest.approx(1156.3)
    assert s.by_category["storage"] == pytest.approx(12.0)
    assert s.compute_by_option["spot"] == pytest.approx(150.0)
    assert s.compute_by_option["on_demand"] == pytest.approx(983.2 + 20 + 3.1)


def test_a_cpu_meter_name_is_not_read_as_a_gpu_size(tmp_path: Path) -> None:
    """Only N-series meters name a GPU size: a bill of the D8s v5 row alone has no GPU hours."""
    path = tmp_path / "cpu.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(_HEADER)
        out.writerow([
            "3.1", "3.1", "3.1", "acct", "USD", "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z",
            "2026-10-01T00:00:00Z", "2026-10-02T00:00:00Z", "Usage", "D8s v5", "8", "Hours",
            "Standard", "1 Hour", "Microsoft", f"{_VM}cpu", "Compute", "Virtual Machines", "",
            "D8s v5",
        ])  # fmt: skip
    s = read_bill(path)
    assert s.gpu_instance_hours == 0.0
    assert s.by_category["compute"] == pytest.approx(3.1)


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_an_export_without_x_columns_names_the_vm_in_its_description(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """The FOCUS 1.0 sample's Microsoft rows carry no x_ columns; a VM meter's description is
    "{category} {subcategory} - {meter} - {region}" ("Virtual Machines Dv2/DSv2 Series - D11
    v2/DS11 v2 - US East 2", billed under Azure Machine Learning). A GPU meter so described is
    GPU instance-hours, here 6 + 4 (spot) = 10 hours and $30 + $8 = $38; the D11 v2 row is
    not GPU."""
    if engine == "spark":
        request.getfixturevalue("spark_available")
    header = [
        "BilledCost", "EffectiveCost", "ListCost", "BillingCurrency", "BillingPeriodStart",
        "BillingPeriodEnd", "ChargePeriodStart", "ChargeCategory", "ChargeDescription",
        "ConsumedQuantity",
        "ConsumedUnit", "PricingCategory", "ProviderName", "ServiceCategory", "ServiceName",
    ]  # fmt: skip
    ml = ("AI and Machine Learning", "Azure Machine Learning")
    rows = [
        ("30", "Virtual Machines NCv3 Series - NC6s v3 - US East", "6", "Standard", *ml),
        ("8", "Virtual Machines NCasT4 v3 Series - NC4as T4 v3 Spot - US East", "4", "Dynamic",
         *ml),
        ("1.5", "Virtual Machines Dv2/DSv2 Series - D11 v2/DS11 v2 - US East 2", "5",
         "Standard", *ml),
    ]  # fmt: skip
    path = tmp_path / "ml.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(header)
        for cost, desc, hours, pricing, category, service in rows:
            out.writerow([
                cost, cost, cost, "USD", "2024-09-01 00:00:00", "2024-10-01 00:00:00",
                "2024-09-05 00:00:00", "Usage", desc, hours, "Hours", pricing, "Microsoft",
                category, service,
            ])  # fmt: skip
    s = read_bill(path, engine=engine)
    assert s.gpu_instance_hours == pytest.approx(10.0)
    assert s.gpu_compute_cost == pytest.approx(38.0)
    assert s.by_category["compute"] == pytest.approx(38.0)
