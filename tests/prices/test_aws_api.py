"""AWS with credentials: Price List Query API and spot price history via boto3 (botocore
Stubber)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import TODAY
from trainbill.catalog import load_catalog
from trainbill.prices import aws
from trainbill.prices.update import run_update

boto3 = pytest.importorskip("boto3")
pytest.importorskip("httpx")
from botocore.stub import ANY, Stubber

HOST = "https://pricing.us-east-1.amazonaws.com"
EC2_CSV = f"{HOST}/offers/v1.0/aws/AmazonEC2/20260728175247/us-east-1/index.csv"
SP_INDEX = f"{HOST}/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json"
SP_CSV = f"{HOST}/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/20261003071546/us-east-1/index.csv"


def _product(instance: str, usd: str) -> str:
    sku = f"SKU{instance.replace('.', '')}"
    return json.dumps(
        {
            "product": {
                "productFamily": "Compute Instance",
                "sku": sku,
                "attributes": {
                    "instanceType": instance,
                    "regionCode": "us-east-1",
                    "operatingSystem": "Linux",
                },
            },
            "serviceCode": "AmazonEC2",
            "terms": {
                "OnDemand": {
                    f"{sku}.JRTCKXETXF": {
                        "offerTermCode": "JRTCKXETXF",
                        "sku": sku,
                        "effectiveDate": "2026-11-01T00:00:00Z",
                        "priceDimensions": {
                            f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                                "rateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
                                "unit": "Hrs",
                                "beginRange": "0",
                                "endRange": "Inf",
                                "description": (
                                    f"${usd} per On Demand Linux {instance} Instance Hour"
                                ),
                                "pricePerUnit": {"USD": usd},
                                "appliesTo": [],
                            }
                        },
                    }
                }
            },
            "version": "20261101000000",
            "publicationDate": "2026-11-01T00:00:00Z",
        }
    )


def _clients() -> tuple[Any, Any]:
    session = boto3.Session(
        aws_access_key_id="AKIATEST", aws_secret_access_key="x", region_name="us-east-1"
    )
    return session.client("pricing", region_name="us-east-1"), session.client(
        "ec2", region_name="us-east-1"
    )


def test_query_api_pages() -> None:
    """get_products is paged with NextToken over both accelerator families; prices come from
    PriceList JSON."""
    pricing, _ = _clients()
    with Stubber(pricing) as stub:
        stub.add_response(
            "get_products",
            {
                "PriceList": [_product("p5.48xlarge", "55.0400000000")],
                "NextToken": "t1",
                "FormatVersion": "aws_v1",
            },
            {
                "ServiceCode": "AmazonEC2",
                "Filters": ANY,
                "FormatVersion": "aws_v1",
                "MaxResults": 100,
            },
        )
        stub.add_response(
            "get_products",
            {"PriceList": [_product("p4d.24xlarge", "21.9576420000")], "FormatVersion": "aws_v1"},
            {
                "ServiceCode": "AmazonEC2",
                "Filters": ANY,
                "FormatVersion": "aws_v1",
                "MaxResults": 100,
                "NextToken": "t1",
            },
        )
        stub.add_response(
            "get_products",
            {"PriceList": [_product("trn1.32xlarge", "21.5000000000")], "FormatVersion": "aws_v1"},
            {
                "ServiceCode": "AmazonEC2",
                "Filters": ANY,
                "FormatVersion": "aws_v1",
                "MaxResults": 100,
            },
        )
        got = aws.api_on_demand(pricing, region="us-east-1", today=TODAY)
        stub.assert_no_pending_responses()
    assert {p.item: p.usd for p in got.points} == {
        "p5.48xlarge": 55.04,
        "p4d.24xlarge": 21.957642,
        "trn1.32xlarge": 21.5,
    }


def test_spot_median_last_30_days() -> None:
    """Median across AZ records: p5 [22.90, 23.50, 24.10, 25.00] -> (23.50 + 24.10) / 2 = 23.80;
    window is 30 days."""
    _, ec2 = _clients()
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    recs = [
        ("us-east-1a", "22.900000"),
        ("us-east-1b", "23.500000"),
        ("us-east-1a", "24.100000"),
        ("us-east-1c", "25.000000"),
    ]
    page1 = {
        "SpotPriceHistory": [
            {
                "AvailabilityZone": az,
                "InstanceType": "p5.48xlarge",
                "ProductDescription": "Linux/UNIX",
                "SpotPrice": price,
                "Timestamp": now - timedelta(days=i),
            }
            for i, (az, price) in enumerate(recs[:2])
        ],
        "NextToken": "n1",
    }
    page2 = {
        "SpotPriceHistory": [
            {
                "AvailabilityZone": az,
                "InstanceType": "p5.48xlarge",
                "ProductDescription": "Linux/UNIX",
                "SpotPrice": price,
                "Timestamp": now - timedelta(days=5 + i),
            }
            for i, (az, price) in enumerate(recs[2:])
        ],
        "NextToken": "",
    }
    expected = {
        "InstanceTypes": ["p4d.24xlarge", "p5.48xlarge"],
        "ProductDescriptions": ["Linux/UNIX"],
        "StartTime": datetime(2026, 11, 2, 12, 0, tzinfo=UTC),
        "EndTime": now,
    }
    with Stubber(ec2) as stub:
        stub.add_response("describe_spot_price_history", page1, expected)
        stub.add_response("describe_spot_price_history", page2, {**expected, "NextToken": "n1"})
        got = aws.api_spot_medians(
            ec2, ["p4d.24xlarge", "p5.48xlarge"], region="us-east-1", now=now
        )
        stub.assert_no_pending_responses()
    assert [(p.item, p.option) for p in got.points] == [("p5.48xlarge", "spot")]
    assert got.points[0].usd == pytest.approx(23.80)
    assert "median of 4 price records 2026-11-02..2026-12-02" in got.points[0].source
    assert got.notes == ("aws us-east-1 p4d.24xlarge: no spot price records in the last 30 days",)


def test_update_with_credentials_uses_api_for_on_demand_and_spot(rec: Any, cache: Path) -> None:
    """With clients: on-demand from the Query API (no EC2 CSV download), SP from bulk, spot from
    history."""
    pricing, ec2 = _clients()
    rec.file(SP_INDEX, "aws/sp_region_index.json")
    rec.file(SP_CSV, "aws/sp_us-east-1.csv")
    now = datetime(2026, 12, 2, tzinfo=UTC)
    with Stubber(pricing) as ps, Stubber(ec2) as es:
        ps.add_response(
            "get_products",
            {"PriceList": [_product("p5.48xlarge", "55.0400000000")], "FormatVersion": "aws_v1"},
            None,
        )
        ps.add_response("get_products", {"PriceList": [], "FormatVersion": "aws_v1"}, None)
        es.add_response(
            "describe_spot_price_history",
            {
                "SpotPriceHistory": [
                    {
                        "AvailabilityZone": "us-east-1a",
                        "InstanceType": "p5.48xlarge",
                        "ProductDescription": "Linux/UNIX",
                        "SpotPrice": "23.670000",
                        "Timestamp": now,
                    }
                ]
            },
            None,
        )
        report = run_update(
            "aws", rec.http(), load_catalog(), cache, today=TODAY, now=now, aws_api=(pricing, ec2)
        )
    assert EC2_CSV not in [str(r.url) for r in rec.requests]
    cat = load_catalog([cache])
    assert (
        cat.price("p5.48xlarge", "spot", provider="aws", region="us-east-1", as_of=TODAY).usd
        == 23.67
    )
    assert report.fetched == 4  # p5 on-demand + p5 spot + 2 SP rates
