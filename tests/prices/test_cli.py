"""``trainbill prices list/show/update`` through ``trainbill.cli.main``."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import trainbill.cli.prices as cli_prices
from conftest import run_cli

httpx = pytest.importorskip("httpx")


run = run_cli


def test_show_json_current(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """p5.48xlarge on 2026-12-01: on-demand $55.04 (June-2025 cut), spot $23.67, and only the
    providers' published commitment rates (issue #38: never the article's 42 %/55 %).

    sp_1yr / sp_3yr: EC2 Instance Savings Plan No Upfront $34.6752 / $23.77728 ([CAT-2026-09],
    prices-2026-12.md §1); Convertible RI 1-yr No Upfront $43.344 ([VAN-2025-11]).
    """
    code, out, err = run(capsys, "prices", "show", "p5.48xlarge", "--as-of", "2026-12-01", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["on_demand_usd_per_hour"] == 55.04
    assert doc["spot_usd_per_hour"] == 23.67
    assert doc["sp_1yr_usd_per_hour"] == pytest.approx(34.6752)
    assert doc["sp_3yr_usd_per_hour"] == pytest.approx(23.77728)
    assert doc["prices"]["convertible_ri_1yr"]["usd_per_hour"] == pytest.approx(43.344)
    assert {o["basis"] for o in doc["prices"].values()} == {"price_point"}
    assert "[CAT-2026-09] third-party" in doc["prices"]["sp_1yr"]["source"]
    assert not any("(1 - 0.42)" in o["source"] or "article" in o["source"].lower()
                   for o in doc["prices"].values())  # fmt: skip
    assert doc["as_of"] == "2026-12-01"
    assert "price point effective 2025-06-01" in doc["source"]
    # The launch point (2023-07-26, AWS GA announcement) and the 2024-01 archive point carry the
    # same $98.32; the June-2025 cut follows.
    assert [(h["option"], h["usd"]) for h in doc["history"] if h["option"] == "on_demand"] == [
        ("on_demand", 98.32), ("on_demand", 98.32), ("on_demand", 55.04),
    ]  # fmt: skip
    # 2025-06-01 -> 2026-12-01 is 548 days (365 + 183): stale.
    assert "548 days old" in doc["stale_warning"]


def test_show_as_of_before_cut(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As of 2025-03-01 the pre-cut price $98.32 applies."""
    code, out, _ = run(capsys, "prices", "show", "p5.48xlarge", "--as-of", "2025-03-01", "--json")
    assert code == 0
    assert json.loads(out)["on_demand_usd_per_hour"] == 98.32


def test_show_explicit_commitment_point(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """p5en sp_3yr comes from the catalog's explicit $23.80 price point, not the 55% assumption."""
    code, out, _ = run(capsys, "prices", "show", "p5en.48xlarge", "--as-of", "2026-12-01", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["sp_3yr_usd_per_hour"] == 23.80
    assert doc["prices"]["sp_3yr"]["basis"] == "price_point"


def test_show_text_warns_when_stale(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The table prints and the stale warning goes to stderr."""
    code, out, err = run(capsys, "prices", "show", "g5.48xlarge", "--as-of", "2026-12-01")
    assert code == 0
    assert "g5.48xlarge" in out
    assert "History" in out
    assert err.startswith("trainbill: warning: price of g5.48xlarge")


def test_show_unknown_instance(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo gets a one-line error with a suggestion and exit 1."""
    code, _, err = run(capsys, "prices", "show", "p5.48xlarg")
    assert code == 1
    assert err.startswith(
        "trainbill: error: unknown instance type 'p5.48xlarg'. Did you mean 'p5.48xlarge'"
    )


def test_list_filters(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--gpu h100 lists each H100 instance once per priced region (a3-highgpu-8g in two); --cloud
    narrows."""
    code, out, _ = run(capsys, "prices", "list", "--gpu", "h100", "--json", "--as-of", "2026-12-01")
    assert code == 0
    assert sorted((r["instance"], r["region"]) for r in json.loads(out)) == [
        ("Standard_ND96isr_H100_v5", "eastus"),
        (
            "a3-highgpu-8g",
            "us-central1",
        ),  # Cloud Billing Catalog snapshots 2025-05-01 and 2026-07-30
        ("a3-highgpu-8g", "us-east4"),
        ("p5.48xlarge", "us-east-1"),
    ]
    code, out, _ = run(
        capsys,
        "prices",
        "list",
        "--gpu",
        "a100",
        "--cloud",
        "azure",
        "--json",
        "--as-of",
        "2026-12-01",
    )
    assert sorted(r["instance"] for r in json.loads(out)) == [
        "Standard_ND96amsr_A100_v4",
        "Standard_ND96asr_v4",
    ]


def test_list_region_filter(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--region eastus2 shows only the ND H200 v5: $84.80 on-demand (Retail Prices API, 2026-09-19)
    and the $42.22 3-yr reservation ($1,109,592 / 26,280 h)."""
    code, out, _ = run(
        capsys, "prices", "list", "--region", "eastus2", "--json", "--as-of", "2026-12-01"
    )
    assert code == 0
    rows = json.loads(out)
    assert [
        (r["instance"], r["on_demand_usd_per_hour"], r["sp_3yr_usd_per_hour"]) for r in rows
    ] == [("Standard_ND96isr_H200_v5", 84.80, 42.22)]


def test_list_text(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The per-GPU table shows published commitments only, and says so (issues 24, 38: a rate
    derived from a claimed discount is never shown)."""
    code, out, _ = run(
        capsys, "prices", "list", "--cloud", "aws", "--as-of", "2026-12-01", "--wide"
    )
    assert code == 0
    assert "$31.9232" not in out  # p5 1-yr derived: 55.04 x 0.58
    assert "$3.9904" not in out  # the same per GPU (÷ 8)
    assert "$2.975 3yr" in out  # p5en 3-yr All Upfront $23.80 published (REFERENCE §4.1) ÷ 8 GPUs
    assert "providers' published rates only (never a claimed discount)" in " ".join(out.split())
    code, out, _ = run(
        capsys, "prices", "list", "--cloud", "aws", "--as-of", "2026-12-01", "--json"
    )
    p5 = next(r for r in json.loads(out) if r["instance"] == "p5.48xlarge")
    # The JSON key is unchanged; its value is now the published EC2 Instance SP 1-yr No Upfront
    # rate $34.6752 ([CAT-2026-09]), not 55.04 x (1 - 0.42).
    assert p5["sp_1yr_usd_per_hour"] == pytest.approx(34.6752)


def test_bad_cloud_and_date(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Invalid --cloud and --as-of values are one-line errors naming the flag and allowed values."""
    code, _, err = run(capsys, "prices", "list", "--cloud", "oracle")
    assert (code, err.strip()) == (
        1,
        "trainbill: error: --cloud: 'oracle' is not one of aws, gcp, azure",
    )
    code, _, err = run(capsys, "prices", "show", "p5.48xlarge", "--as-of", "yesterday")
    assert (code, err.strip()) == (
        1,
        "trainbill: error: --as-of: 'yesterday' is not a date (expected YYYY-MM-DD)",
    )


def test_own_rates_overlay(cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--catalog DIR with a negotiated p5 rate ($40.00 from 2026-11-01) wins over the list price."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "prices.csv").write_text(
        "provider,region,item,option,unit,usd,effective_from,source\n"
        "aws,us-east-1,p5.48xlarge,on_demand,instance-hour,40.00,2026-11-01,EDP contract 2026\n"
    )
    code, out, _ = run(
        capsys,
        "prices",
        "show",
        "p5.48xlarge",
        "--as-of",
        "2026-12-01",
        "--json",
        "--catalog",
        str(own),
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["on_demand_usd_per_hour"] == 40.00
    assert doc["source"].startswith("EDP contract 2026")


def test_own_rates_env(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """TRAINBILL_CATALOG works like --catalog."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "prices.csv").write_text(
        "provider,region,item,option,unit,usd,effective_from,source\n"
        "aws,us-east-1,p5.48xlarge,spot,instance-hour,20.00,2026-11-01,private pricing\n"
    )
    monkeypatch.setenv("TRAINBILL_CATALOG", str(own))
    code, out, _ = run(capsys, "prices", "show", "p5.48xlarge", "--as-of", "2026-12-01", "--json")
    assert code == 0
    assert json.loads(out)["spot_usd_per_hour"] == 20.00


def test_invalid_overlay_is_rejected(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An overlay row with an unknown option fails like packaged data: file, line, field, allowed
    values."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "prices.csv").write_text(
        "provider,region,item,option,unit,usd,effective_from,source\n"
        "aws,us-east-1,p5.48xlarge,reserved,instance-hour,40.00,2026-11-01,contract\n"
    )
    code, _, err = run(capsys, "prices", "list", "--catalog", str(own))
    assert code == 1
    assert "prices.csv, line 2, option: 'reserved' not one of on_demand, spot" in err


def test_update_gcp_without_key(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """prices update gcp with no key: exit 1 with the how-to, no cache written."""
    code, _, err = run(capsys, "prices", "update", "gcp")
    assert code == 1
    assert "--api-key KEY or set TRAINBILL_GCP_API_KEY" in err
    assert not cache.exists()


def test_update_unknown_cloud(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown cloud is refused before any network client is built."""
    code, _, err = run(capsys, "prices", "update", "oracle")
    assert (code, err.strip()) == (
        1,
        "trainbill: error: CLOUD: 'oracle' is not one of aws, azure, gcp",
    )


def test_update_azure_then_show(
    rec: Any, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """update azure (recorded pages) writes the cache; show then reports the fetched price dated
    today."""
    data = Path(__file__).resolve().parents[1] / "data" / "prices" / "azure"
    from trainbill.prices import azure

    rec.file(azure.RETAIL_PRICES_URL, "azure/page1.json")
    body = (data / "page2.json").read_bytes()
    rec.add(azure.RETAIL_PRICES_URL, lambda r: httpx.Response(200, content=body))
    monkeypatch.setattr(
        cli_prices, "_http_client", lambda: httpx.Client(transport=httpx.MockTransport(rec.handle))
    )
    monkeypatch.setattr(cli_prices, "_today", lambda: date(2026, 12, 2))
    code, out, err = run(capsys, "prices", "update", "azure")
    assert code == 0, err
    assert "5 price points fetched, 5 new" in out
    assert (cache / "SCHEMA_VERSION").read_text().strip() == "1"
    code, out, _ = run(
        capsys, "prices", "show", "Standard_ND96isr_H200_v5", "--region", "eastus", "--json"
    )
    doc = json.loads(out)
    assert doc["sp_3yr_usd_per_hour"] == pytest.approx(42.22, abs=0.005)
    assert doc["prices"]["sp_3yr"]["effective_from"] == "2026-12-02"
    assert doc["stale_warning"] is None


def test_an_unknown_region_is_an_error_not_an_empty_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`prices list --region xx-nowhere-1` printed an empty table with exit 0."""
    code, out, err = run(capsys, "prices", "list", "--region", "xx-nowhere-1")
    assert code == 1
    assert out == ""
    assert err.startswith(
        "trainbill: error: --region: 'xx-nowhere-1' has no prices; known regions: "
    )
    assert "us-east-1" in err


def test_a_date_before_any_price_says_when_prices_start(capsys: pytest.CaptureFixture[str]) -> None:
    """`prices show --as-of 1999-01-01` printed an empty rates table with exit 0."""
    code, _, err = run(capsys, "prices", "show", "p5.48xlarge", "--as-of", "1999-01-01")
    assert code == 1
    assert (
        "p5.48xlarge has no price in force on 1999-01-01: its first price point in us-east-1 is"
        in err
    )
