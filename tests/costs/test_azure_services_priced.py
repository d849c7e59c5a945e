"""Azure Premium SSD v2, NAT Gateway and inter-region transfer priced from provider data; Azure
Managed Lustre, still unpriced, stays a visible NOT PRICED line (issue #38 item 7).

Expected figures are the prices-2026-12 §3 meter prices converted by hand."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from conftest import run_cli
from trainbill.catalog import Catalog

DAY = date(2026, 1, 5)


@pytest.mark.parametrize(
    ("item", "region", "expected"),
    [
        # $0.00011 per GiB-hour × 730 h ÷ 1.073741824 GB per GiB
        ("premium_ssd_v2.storage", "eastus", 0.00011 * 730 / 1.073741824),
        ("premium_ssd_v2.iops", "eastus", 0.000007 * 730),  # per IOPS-hour × 730 h
        # per MB/s-hour × 730 h × 1.048576 MB/s per MiB/s
        ("premium_ssd_v2.throughput", "eastus", 0.000055 * 730 * 1.048576),
        ("natgw.hours", "eastus", 0.045),
        ("natgw.data", "eastus", 0.045),
        ("transfer.inter_region", "eastus2", 0.02),
    ],
)
def test_azure_rates_from_the_file(
    catalog: Catalog, item: str, region: str, expected: float
) -> None:
    p = catalog.find_price(item, "on_demand", provider="azure", region=region, as_of=DAY)
    assert p is not None
    assert p.usd == pytest.approx(expected, rel=1e-5)
    assert "prices-2026-12" in p.source


def test_managed_lustre_is_a_visible_not_priced_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan = tmp_path / "az.toml"
    plan.write_text(
        '[run]\nhours = 10\n[model]\nparams = 7e9\n[cluster]\nprovider = "azure"\n'
        'region = "eastus"\ninstance = "Standard_ND96isr_H100_v5"\nnodes = 2\n[prices]\n'
        "as_of = 2026-01-05\n[storage]\nfsx_capacity_gb = 48000\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(capsys, "forecast", str(plan), "--wide")
    assert code == 0, err
    row = next(x for x in out.splitlines() if "Azure Managed Lustre" in x and "│" in x)
    assert "(NOT PRICED)" in row
    assert not [x for x in out.splitlines() if "Premium SSD v2" in x and "NOT PRICED" in x]
