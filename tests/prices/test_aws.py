"""AWS: bulk Price List (streamed CSV), Savings Plans file, and boto3 Query/spot APIs (Stubber)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import TODAY
from trainbill.catalog import load_catalog
from trainbill.prices import PriceUpdateError, aws
from trainbill.prices.update import run_update

httpx = pytest.importorskip("httpx")

HOST = "https://pricing.us-east-1.amazonaws.com"
EC2_CSV = f"{HOST}/offers/v1.0/aws/AmazonEC2/20260728175247/us-east-1/index.csv"
SP_INDEX = f"{HOST}/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json"
SP_CSV = f"{HOST}/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/20261003071546/us-east-1/index.csv"
DATA = Path(__file__).resolve().parents[1] / "data" / "prices"


def _route_bulk(rec: Any) -> None:
    rec.file(aws.OFFER_INDEX_URL, "aws/offer_index.json")
    rec.file(f"{HOST}/offers/v1.0/aws/AmazonEC2/current/region_index.json", "aws/region_index.json")
    rec.file(EC2_CSV, "aws/ec2_us-east-1.csv")
    rec.file(SP_INDEX, "aws/sp_region_index.json")
    rec.file(SP_CSV, "aws/sp_us-east-1.csv")


def test_offer_csv_filters() -> None:
    """Only Linux/shared/used/OnDemand-market accelerator rows survive: p5 $55.04, p4d $21.957642,
    trn1 $21.50.

    Dropped (fixture rows): $0 CapacityBlock, Reserved term, Windows, UnusedCapacityReservation,
    SQL Std pre-installed, Dedicated tenancy, and m5.large (not an accelerator family).
    """
    lines = (DATA / "aws/ec2_us-east-1.csv").read_text().splitlines()
    got = aws.parse_ec2_offer_csv(lines, region="us-east-1", today=TODAY, url="file")
    assert {p.item: p.usd for p in got.points} == {
        "p5.48xlarge": 55.04, "p4d.24xlarge": 21.957642, "trn1.32xlarge": 21.50,
    }  # fmt: skip
    p5 = next(p for p in got.points if p.item == "p5.48xlarge")
    assert p5.effective_from == TODAY
    assert "3D4V8UAYEMB38GU2.JRTCKXETXF.6YS6EN2CT7" in p5.source
    assert "version 20260728175247" in p5.source


def test_offer_csv_truncated_row_is_an_error() -> None:
    """A last line cut mid-row (fewer fields than the header) is an error naming the line."""
    lines = (DATA / "aws/ec2_us-east-1.csv").read_text().splitlines()
    cut = [*lines[:8], lines[8][:60]]
    with pytest.raises(PriceUpdateError, match=r"line 9: \d+ fields, header has 32"):
        aws.parse_ec2_offer_csv(cut, region="us-east-1", today=TODAY, url="file")


def test_not_a_price_list() -> None:
    """A file without the SKU header line is rejected with a hint."""
    with pytest.raises(PriceUpdateError, match="no header line starting with 'SKU'"):
        aws.parse_ec2_offer_csv(["<html>", "</html>"], region="us-east-1", today=TODAY, url="x")


def test_savings_plans_csv() -> None:
    """EC2 Instance SP, All Upfront, Linux shared: p5en 3-yr $23.80 (REFERENCE §4.1), p5 1-yr
    $34.10.

    Dropped: Dedicated usage ($26.40), Windows operation RunInstances:0002 ($25.90), No Upfront
    ($36.30), the Compute Savings Plan row ($39.60) and m5.large.
    """
    lines = (DATA / "aws/sp_us-east-1.csv").read_text().splitlines()
    got = aws.parse_savings_plans_csv(lines, region="us-east-1", today=TODAY, url="file")
    assert {(p.item, p.option): p.usd for p in got.points} == {
        ("p5en.48xlarge", "sp_3yr"): 23.80, ("p5.48xlarge", "sp_1yr"): 34.10,
    }  # fmt: skip


def test_savings_plans_payment_option() -> None:
    """--sp-payment 'No Upfront' picks the p5 1-yr No Upfront rate $36.30 instead."""
    lines = (DATA / "aws/sp_us-east-1.csv").read_text().splitlines()
    got = aws.parse_savings_plans_csv(
        lines, region="us-east-1", today=TODAY, url="f", payment="No Upfront"
    )
    assert {(p.item, p.option): p.usd for p in got.points} == {("p5.48xlarge", "sp_1yr"): 36.30}


def test_bulk_chain_into_cache(rec: Any, cache: Path) -> None:
    """offer index -> region index -> CSV, plus the SP file, land in the cache and load as an
    overlay."""
    _route_bulk(rec)
    report = run_update("aws", rec.http(), load_catalog(), cache, today=TODAY)
    assert report.region == "us-east-1"
    assert report.fetched == 5  # 3 on-demand + 2 Savings Plans rates
    assert any("no spot prices" in n for n in report.notes)
    fetched_urls = [str(r.url) for r in rec.requests]
    assert fetched_urls == [
        aws.OFFER_INDEX_URL,
        f"{HOST}/offers/v1.0/aws/AmazonEC2/current/region_index.json",
        EC2_CSV,
        SP_INDEX,
        SP_CSV,
    ]
    cat = load_catalog([cache])
    p5en = cat.price("p5en.48xlarge", "sp_3yr", provider="aws", region="us-east-1", as_of=TODAY)
    assert p5en.usd == 23.80
    assert p5en.effective_from == TODAY


def test_unknown_region(rec: Any, cache: Path) -> None:
    """A region absent from the region index is an error listing the known ones."""
    _route_bulk(rec)
    with pytest.raises(
        PriceUpdateError, match=r"no EC2 offer for region 'ap-southeast-9'.*us-east-1, us-west-2"
    ):
        run_update("aws", rec.http(), load_catalog(), cache, region="ap-southeast-9", today=TODAY)


def test_truncated_download_leaves_cache_intact(rec: Any, cache: Path) -> None:
    """A first update succeeds; a second whose CSV download is cut off changes nothing on disk."""
    _route_bulk(rec)
    run_update("aws", rec.http(), load_catalog(), cache, today=TODAY)
    before = {p.name: p.read_bytes() for p in cache.iterdir()}

    body = (DATA / "aws/ec2_us-east-1.csv").read_bytes()

    class Cut(httpx.SyncByteStream):
        def __iter__(self) -> Any:
            yield body[:1500]
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body"
            )

    rec2 = type(rec)()
    _route_bulk(rec2)
    rec2.routes[EC2_CSV] = [lambda r: httpx.Response(200, stream=Cut())]
    with pytest.raises(PriceUpdateError, match="cut off after 1500 bytes"):
        run_update("aws", rec2.http(), load_catalog(), cache, today=TODAY + timedelta(days=3))
    assert {p.name: p.read_bytes() for p in cache.iterdir()} == before
