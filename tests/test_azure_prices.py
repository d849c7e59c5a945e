"""Azure plans priced with Azure's own published rates: Blob, NAT Gateway, public IPs, Log
Analytics and ND H100 v5 reservations, each line checked by hand against the cited figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from trainbill.catalog import Catalog, load_catalog
from trainbill.costs._pricing import service_rate_at
from trainbill.errors import PriceNotFoundError
from trainbill.forecasting import forecast
from trainbill.spec import plan_from_dict

H100 = "Standard_ND96isr_H100_v5"


def _azure_plan(**extra: Any) -> dict[str, Any]:
    plan = zero_hidden_plan(provider="azure", instance=H100, region="eastus")
    plan["prices"] = {"as_of": "2026-12-03"}
    plan.update(extra)
    return plan


def _line(fc: Any, category: str, item: str) -> Any:
    matches = [ln for ln in fc.ledger.in_category(category) if ln.item == item]
    assert len(matches) == 1, [ln.item for ln in fc.ledger.lines]
    return matches[0]


def test_azure_network_and_logs_lines_hand_computed(catalog: Catalog) -> None:
    """NAT Gateway, public IPv4 and Log Analytics at Azure's rates (10 h run, 4 nodes)."""
    plan = _azure_plan(
        network={"nat_gateways": 1, "nat_gb_per_node_hour": 1.0, "public_ips_per_node": 1},
        monitoring={"custom_metrics_per_node": 0, "logs_gb_per_node_hour": 0.05},
    )
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    assert fc.usage.wall_hours == pytest.approx(10.0)
    # NAT Gateway $0.045 per gateway-hour: 1 gateway × 10 h.
    assert _line(fc, "networking", "Azure NAT Gateway hours").cost_usd == pytest.approx(0.45)
    # $0.045 per GB processed: 4 nodes × 10 h × 1 GB = 40 GB → $1.80.
    assert _line(fc, "networking", "Azure NAT Gateway data processed").cost_usd == pytest.approx(
        1.80
    )
    # Standard static public IPv4 $0.005/h (westus3 Retail Prices API row stands in for eastus).
    ips = _line(fc, "networking", "Standard public IPv4 addresses")
    assert ips.unit_price_usd == pytest.approx(0.005)
    assert "westus3 price used" in ips.source
    # Log Analytics $2.30/GB (East US): 4 nodes × 10 h × 0.05 GB = 2 GB → $4.60.
    assert _line(fc, "monitoring", "Azure Monitor Logs (Log Analytics) ingest").cost_usd == (
        pytest.approx(4.60)
    )


def test_azure_blob_dataset_priced_at_eastus_rate_not_eastus2(catalog: Catalog) -> None:
    """An eastus dataset pays the eastus Hot LRS rate $0.0208/GB-month, not eastus2's $0.0184."""
    plan = _azure_plan(data={"dataset_gb": 730, "source": "s3", "epochs": 1})
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    blob = [ln for ln in fc.ledger.in_category("storage") if "Blob Storage" in ln.item]
    assert len(blob) == 1
    assert blob[0].unit_price_usd == pytest.approx(0.0208)
    assert "NOT PRICED" not in blob[0].source


def test_azure_reservation_rates_are_the_published_totals_per_hour(catalog: Catalog) -> None:
    """ND H100 v5 eastus reservations: $551,221 / 8,760 h and $1,134,310 / 26,280 h."""
    one = catalog.price(H100, "sp_1yr", provider="azure", region="eastus", as_of=TODAY)
    three = catalog.price(H100, "sp_3yr", provider="azure", region="eastus", as_of=TODAY)
    assert one.usd == pytest.approx(62.92477, abs=1e-5)  # 551,221 / 8,760 = 62.924772
    assert three.usd == pytest.approx(43.16248, abs=1e-5)  # 1,134,310 / 26,280 = 43.162481


def test_existing_azure_reservation_charges_its_rate_on_the_run(catalog: Catalog) -> None:
    """An existing 1-yr reservation: 4 nodes × 10 h × ($98.32 − $62.924772) is the discount."""
    plan = _azure_plan(purchase={"savings_plan": "1yr", "commitment": "existing"})
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    (line,) = fc.ledger.in_category("discount")
    # The catalog row is 551,221 / 8,760 to six decimals, $62.924772:
    # 40 node-hours × −($98.32 − $62.924772) = 40 × −$35.395228 = −$1,415.80912
    assert line.cost_usd == pytest.approx(-1415.80912, rel=1e-9)
    assert "existing commitment" in line.basis


def test_azure_spot_price_not_used_before_it_was_read(catalog: Catalog) -> None:
    """ND H100 v5 spot is dated 2026-09-19: a 2025 plan cannot borrow it (one clear error)."""
    plan = _azure_plan(prices={"as_of": "2025-05-01"}, purchase={"spot_fraction": 0.5})
    with pytest.raises(PriceNotFoundError, match="first price point is 2026-09-19"):
        forecast(plan_from_dict(plan), catalog, today=TODAY)


def test_later_service_price_found_in_the_plans_own_region(tmp_path: Path) -> None:
    """A service first priced after the plan's date in its region is found there, even when
    another region of the provider has an older point (tiny overlay; not the packaged prices)."""
    (tmp_path / "prices.csv").write_text(
        "provider,region,item,option,unit,usd,effective_from,source\n"
        "azure,eastus2,test.svc,on_demand,instance-hour,1.0,2017-02-03,test row\n"
        "azure,eastus,test.svc,on_demand,instance-hour,2.0,2026-12-03,test row\n",
        encoding="utf-8",
    )
    cat = load_catalog([tmp_path])
    early = service_rate_at(
        cat, "test.svc", provider="azure", region="eastus", as_of=TODAY.replace(year=2025)
    )
    # eastus's own (later) $2.0, said to be dated after the plan, not NOT PRICED and not eastus2's
    # $1.0.
    assert early.usd == 2.0
    assert "AFTER the plan's price date" in early.source
    late = service_rate_at(
        cat, "test.svc", provider="azure", region="eastus", as_of=TODAY.replace(year=2027)
    )
    assert late.usd == 2.0
    assert "AFTER" not in late.source
