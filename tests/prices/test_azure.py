"""Azure Retail Prices API: OData filter, NextPageLink paging, row mapping, throttling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import TODAY
from trainbill.catalog import load_catalog
from trainbill.prices import PriceUpdateError, azure
from trainbill.prices.update import run_update

httpx = pytest.importorskip("httpx")

DATA = Path(__file__).resolve().parents[1] / "data" / "prices"
# NextPageLink has the same path (":443" is normalised away): pages are served in order.
PAGE2 = azure.RETAIL_PRICES_URL


def _route(rec: Any, *page2_first: Any) -> None:
    rec.file(azure.RETAIL_PRICES_URL, "azure/page1.json")
    body = (DATA / "azure/page2.json").read_bytes()
    rec.add(PAGE2, *page2_first, lambda r: httpx.Response(200, content=body))


def test_filter_is_case_sensitive_odata() -> None:
    """The filter names the service, region and each size with eq (values are case-sensitive)."""
    assert azure.retail_filter("eastus", ["Standard_ND96isr_H100_v5", "Standard_ND96asr_v4"]) == (
        "serviceName eq 'Virtual Machines' and armRegionName eq 'eastus' and "
        "(armSkuName eq 'Standard_ND96isr_H100_v5' or armSkuName eq 'Standard_ND96asr_v4')"
    )


def test_filter_rejects_quotes() -> None:
    """A quote in a value would break out of the OData string: refused."""
    with pytest.raises(PriceUpdateError, match="may not contain a quote"):
        azure.retail_filter("eastus", ["x' or 1 eq 1"])


def test_paging_and_mapping(rec: Any) -> None:
    """Two pages: Linux $98.32 on-demand, Spot meter $39.328; Windows, Low Priority, DevTest
    skipped.

    Reservations are totals per term: 3 yr $1,109,592 / (3 x 8,760 = 26,280 h) = $42.22/h
    (REFERENCE §4.3); 1 yr $525,600 / 8,760 h = $60.00/h.
    """
    _route(rec)
    got = azure.fetch(rec.http(), region="eastus", skus=["Standard_ND96isr_H100_v5"], today=TODAY)
    prices = {(p.item, p.option): p.usd for p in got.points}
    assert prices[("Standard_ND96isr_H100_v5", "on_demand")] == 98.32
    assert prices[("Standard_ND96isr_H100_v5", "spot")] == 39.328
    assert prices[("Standard_ND96isr_H200_v5", "sp_3yr")] == pytest.approx(42.22, abs=0.005)
    assert prices[("Standard_ND96isr_H200_v5", "sp_1yr")] == pytest.approx(60.00)
    assert prices[("Standard_ND96asr_v4", "on_demand")] == 27.197
    assert len(prices) == 5
    first = rec.requests[0]
    assert first.url.params["api-version"] == "2023-01-01-preview"
    assert "armSkuName eq 'Standard_ND96isr_H100_v5'" in first.url.params["$filter"]
    assert "$skip=1000" in str(rec.requests[1].url)
    h200 = next(p for p in got.points if p.option == "sp_3yr")
    assert "$1,109,592.00 per term / 26,280 h" in h200.source


def test_throttled_page_is_retried(rec: Any) -> None:
    """A 429 on page 2 waits (Retry-After 2 s) and continues; all prices still arrive."""
    _route(rec, lambda r: httpx.Response(429, headers={"Retry-After": "2"}))
    got = azure.fetch(rec.http(), region="eastus", skus=["Standard_ND96isr_H100_v5"], today=TODAY)
    assert len(got.points) == 5
    assert rec.sleeps == [2.0]


def test_malformed_page(rec: Any) -> None:
    """A page whose Items is not a list is an error naming the page and field."""
    rec.add(
        azure.RETAIL_PRICES_URL,
        lambda r: httpx.Response(200, json={"Items": {"oops": 1}, "NextPageLink": None}),
    )
    with pytest.raises(PriceUpdateError, match="page 1: Items: expected list, got dict"):
        azure.fetch(rec.http(), region="eastus", skus=[], today=TODAY)


def test_page_cut_mid_json(rec: Any) -> None:
    """Page 2 ending mid-document (a truncated body) is 'not valid JSON', and the cache is
    untouched."""
    body = (DATA / "azure/page2.json").read_bytes()
    rec.file(azure.RETAIL_PRICES_URL, "azure/page1.json")
    rec.add(PAGE2, lambda r: httpx.Response(200, content=body[: len(body) // 2]))
    with pytest.raises(PriceUpdateError, match="not valid JSON"):
        azure.fetch(rec.http(), region="eastus", skus=["Standard_ND96isr_H100_v5"], today=TODAY)


def test_paging_loop_is_detected(rec: Any) -> None:
    """A NextPageLink pointing back at an already-read page stops with an error, not a hang."""
    loop = f"{azure.RETAIL_PRICES_URL}?page=1"
    rec.add(
        azure.RETAIL_PRICES_URL,
        lambda r: httpx.Response(200, json={"Items": [], "NextPageLink": loop}),
    )
    with pytest.raises(PriceUpdateError, match="paging did not end"):
        azure.fetch(rec.http(), region="eastus", skus=[], today=TODAY)


def test_update_writes_cache(rec: Any, cache: Path) -> None:
    """run_update azure: cache gains the five points; ND H100 v5 on-demand on TODAY is the fetched
    one."""
    _route(rec)
    report = run_update("azure", rec.http(), load_catalog(), cache, today=TODAY)
    assert len(report.write.added) == 5
    cat = load_catalog([cache])
    p = cat.price(
        "Standard_ND96isr_H100_v5", "on_demand", provider="azure", region="eastus", as_of=TODAY
    )
    assert p.effective_from == TODAY
    assert "Azure Retail Prices API" in p.source
    # The default SKU list is the catalog's Azure instances.
    flt = rec.requests[0].url.params["$filter"]
    assert all(
        f"armSkuName eq '{i}'" in flt for i in ("Standard_ND96asr_v4", "Standard_ND96isr_H200_v5")
    )


def test_empty_result_does_not_touch_cache(rec: Any, cache: Path) -> None:
    """No matching rows: an error saying the cache was not changed, and no cache is created."""
    rec.add(
        azure.RETAIL_PRICES_URL,
        lambda r: httpx.Response(200, content=json.dumps({"Items": [], "NextPageLink": None})),
    )
    with pytest.raises(PriceUpdateError, match="cache was not changed"):
        run_update("azure", rec.http(), load_catalog(), cache, today=TODAY)
    assert not cache.exists()
