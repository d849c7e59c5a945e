"""GCP Cloud Billing Catalog API: API key, paging, VM = CPU + RAM + GPU SKUs, TPU per chip-hour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import TODAY
from trainbill.catalog import load_catalog
from trainbill.prices import PriceUpdateError, gcp
from trainbill.prices.update import run_update

httpx = pytest.importorskip("httpx")

COMPUTE = gcp.SKUS_URL.format(service=gcp.COMPUTE_SERVICE)
TPU = gcp.SKUS_URL.format(service=gcp.TPU_SERVICE)


def _route(rec: Any) -> None:
    rec.file(COMPUTE, "gcp/compute_page1.json")
    rec.add(
        COMPUTE,
        lambda r: httpx.Response(
            200,
            content=(Path(__file__).parents[1] / "data/prices/gcp/compute_page2.json").read_bytes(),
        ),
    )
    rec.file(TPU, "gcp/tpu.json")


def test_missing_api_key_is_a_clear_error(rec: Any, cache: Path) -> None:
    """No --api-key and no env var: the error names both ways to pass one; nothing is fetched."""
    with pytest.raises(PriceUpdateError, match=r"--api-key KEY or set TRAINBILL_GCP_API_KEY"):
        run_update("gcp", rec.http(), load_catalog(), cache, today=TODAY)
    assert rec.requests == []


def test_vm_price_is_cpu_plus_ram_plus_gpu(rec: Any) -> None:
    """a2-highgpu-8g (96 vCPU, 680 GiB, 8x A100 40GB) in us-central1:

    96 x $0.031611 = $3.034656; 680 x $0.004237 = $2.88116; 8 x $2.933908 = $23.471264;
    total $29.38708 (matches SkyPilot's host $5.91582 + GPUs $23.47126, REFERENCE §4.2).
    """
    _route(rec)
    cat = load_catalog()
    got = gcp.fetch(
        rec.http(),
        region="us-central1",
        instances=[cat.instance("a2-highgpu-8g")],
        api_key="K",
        today=TODAY,
    )
    od = [p for p in got.points if p.option == "on_demand"]
    assert len(od) == 1
    assert od[0].usd == pytest.approx(29.38708, abs=1e-9)
    assert "96 x 'A2 Instance Core running in Americas'" in od[0].source
    # Spot has CPU and RAM SKUs but no preemptible A100 SKU in the fixture: skipped with a note.
    assert any("a2-highgpu-8g Preemptible: no GPU SKU found" in n for n in got.notes)
    # Paging: the second request carries the page token; the key travels as a query parameter.
    assert rec.requests[1].url.params["pageToken"] == "CiAKGjBpNDd2Nm"
    assert rec.requests[0].url.params["key"] == "K"
    assert rec.requests[0].url.params["currencyCode"] == "USD"


def test_region_must_match(rec: Any) -> None:
    """In europe-west4 only the GPU SKU exists (no A2 core/RAM there): no price, a note instead."""
    _route(rec)
    cat = load_catalog()
    got = gcp.fetch(
        rec.http(),
        region="europe-west4",
        instances=[cat.instance("a2-highgpu-8g")],
        api_key="K",
        today=TODAY,
    )
    assert got.points == ()
    assert any("no vCPU/RAM SKU found" in n for n in got.notes)


def test_tpu_per_chip_hour(rec: Any) -> None:
    """TPU v5p in us-central1: units 4 + nanos 200000000 / 1e9 = $4.20 per chip-hour; spot 1 + 0.68
    = $1.68."""
    _route(rec)
    cat = load_catalog()
    got = gcp.fetch(
        rec.http(),
        region="us-central1",
        instances=[cat.instance("tpu-v5p")],
        api_key="K",
        today=TODAY,
    )
    assert {p.option: p.usd for p in got.points} == {
        "on_demand": pytest.approx(4.20),
        "spot": pytest.approx(1.68),
    }
    assert all(p.unit == "chip-hour" for p in got.points)
    assert [str(r.url.copy_with(query=None)) for r in rec.requests] == [TPU]


def test_units_plus_nanos() -> None:
    """Price = units + nanos/1e9: units '2', nanos 933908000 -> 2.933908."""
    raw = {
        "skuId": "X",
        "description": "Nvidia Tesla A100 GPU running in Americas",
        "category": {"resourceFamily": "Compute", "resourceGroup": "GPU", "usageType": "OnDemand"},
        "serviceRegions": ["us-central1"],
        "pricingInfo": [
            {
                "pricingExpression": {
                    "usageUnit": "h",
                    "tieredRates": [
                        {
                            "startUsageAmount": 0,
                            "unitPrice": {"currencyCode": "USD", "units": "2", "nanos": 933908000},
                        }
                    ],
                }
            }
        ],
    }
    sku = gcp.parse_sku(raw, "t")
    assert sku is not None
    assert sku.usd == pytest.approx(2.933908)


def test_malformed_sku(rec: Any) -> None:
    """A SKU whose pricingInfo is not a list is an error naming the page and index."""
    rec.add(
        COMPUTE,
        lambda r: httpx.Response(
            200,
            json={
                "skus": [
                    {
                        "category": {"resourceFamily": "Compute", "usageType": "OnDemand"},
                        "pricingInfo": "x",
                    }
                ]
            },
        ),
    )
    with pytest.raises(PriceUpdateError, match=r"page 1: skus\[0\]: pricingInfo: expected list"):
        gcp.fetch_skus(rec.http(), service=gcp.COMPUTE_SERVICE, api_key="K")


def test_update_gcp_into_cache(rec: Any, cache: Path) -> None:
    """run_update gcp with --sku a2-highgpu-8g tpu-v5p: 3 points (a2 on-demand, v5p on-demand and
    spot)."""
    _route(rec)
    report = run_update("gcp", rec.http(), load_catalog(), cache, today=TODAY, api_key="K",
                        skus=["a2-highgpu-8g", "tpu-v5p"])  # fmt: skip
    assert sorted((p.item, p.option) for p in report.write.added) == [
        ("a2-highgpu-8g", "on_demand"), ("tpu-v5p", "on_demand"), ("tpu-v5p", "spot"),
    ]  # fmt: skip
