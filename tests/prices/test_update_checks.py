"""`prices update` checks its region and cache directory before any request (issue #23): a
typo'd region or an unwritable cache is one line, and the recorder sees no request at all."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from conftest import TODAY, run_cli
from trainbill.catalog import load_catalog
from trainbill.prices import PriceUpdateError
from trainbill.prices.update import check_region, run_update

httpx = pytest.importorskip("httpx")


@pytest.mark.parametrize(
    ("cloud", "region", "expected"),
    [
        (
            "aws",
            "xx-nowhere-1",
            r"'xx-nowhere-1' is not a region name on aws; aws regions look like us-east-1",
        ),
        ("aws", "us-esat-1", r"'us-esat-1' is not a region name on aws;"),
        ("aws", "mars-1", r"'mars-1' is not a region name on aws;"),
        ("aws", "us-central1", r"\('us-central1' is how gcp names regions\)"),
        ("aws", "eastus", r"\('eastus' is how azure names regions\)"),
        ("gcp", "us-east-1", r"\('us-east-1' is how aws names regions\)"),
        (
            "azure",
            "East US",
            r"'East US' is not a region name on azure; azure regions look like eastus",
        ),
    ],
)
def test_malformed_region_is_refused_before_any_request(
    rec: Any, cache: Path, cloud: str, region: str, expected: str
) -> None:
    """The error names the region and the cloud's naming; no request is made, no cache written."""
    with pytest.raises(PriceUpdateError, match=expected) as err:
        run_update(
            cloud, rec.http(), load_catalog(), cache, region=region, today=TODAY, api_key="K"
        )
    assert "Nothing was fetched" in str(err.value)
    assert rec.requests == []
    assert not cache.exists()


@pytest.mark.parametrize(
    ("cloud", "region"),
    [
        ("aws", "us-east-1"),
        ("aws", "us-gov-west-1"),
        ("aws", "eu-central-2"),
        ("aws", "ap-southeast-5"),
        ("gcp", "us-central1"),
        ("gcp", "europe-west4"),
        ("gcp", "northamerica-northeast1"),
        ("azure", "eastus"),
        ("azure", "westeurope"),
        ("azure", "eastus2"),
    ],
)
def test_real_region_names_pass(cloud: str, region: str) -> None:
    """Regions the catalog does not price yet still pass: updating them is what update is for."""
    check_region(cloud, region, load_catalog())


def test_region_error_lists_the_catalogs_regions(rec: Any, cache: Path) -> None:
    """The AWS regions the catalog prices are named; zone-priced rows (use1-az1) are not regions."""
    with pytest.raises(PriceUpdateError) as err:
        run_update("aws", rec.http(), load_catalog(), cache, region="xx-nowhere-1", today=TODAY)
    text = str(err.value)
    assert "(in the catalog: ap-south-1, eu-west-2, us-east-1, us-east-2, us-west-2)" in text
    assert "use1-az1" not in text


def test_cache_under_a_file_is_refused_before_any_request(rec: Any, tmp_path: Path) -> None:
    """TRAINBILL_CACHE_DIR below a regular file cannot be created: one line, nothing fetched."""
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    target = blocker / "cache"
    with pytest.raises(
        PriceUpdateError, match=rf"price cache {target}: {blocker} is not a directory"
    ):
        run_update("azure", rec.http(), load_catalog(), target, today=TODAY)
    assert rec.requests == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_read_only_cache_is_refused_before_any_request(rec: Any, tmp_path: Path) -> None:
    """A cache directory without write permission: one line naming it, nothing fetched."""
    target = tmp_path / "ro"
    target.mkdir()
    target.chmod(0o500)
    try:
        with pytest.raises(PriceUpdateError, match=rf"{target} is not writable"):
            run_update("azure", rec.http(), load_catalog(), target, today=TODAY)
    finally:
        target.chmod(0o700)
    assert rec.requests == []


def test_cli_unknown_region_is_one_line_with_no_request(
    rec: Any, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`trainbill prices update aws --region xx-nowhere-1`: exit 1, one line, no request."""
    from trainbill.cli import prices as cli_prices

    monkeypatch.setattr(
        cli_prices, "_http_client", lambda: httpx.Client(transport=httpx.MockTransport(rec.handle))
    )
    monkeypatch.setattr(cli_prices, "_aws_api", lambda _region: pytest.fail("AWS API client built"))
    code, out, err = run_cli(capsys, "prices", "update", "aws", "--region", "xx-nowhere-1")
    assert code == 1
    assert out == ""
    assert err.startswith("trainbill: error: --region: 'xx-nowhere-1' is not a region name on aws")
    assert err.count("\n") == 1
    assert rec.requests == []
    assert not cache.exists()


def test_cli_cache_in_the_way_is_one_line_with_no_request(
    rec: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """TRAINBILL_CACHE_DIR naming a regular file: exit 1, one line, the file untouched."""
    from trainbill.cli import prices as cli_prices

    blocker = tmp_path / "cache"
    blocker.write_text("mine", encoding="utf-8")
    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(blocker))
    monkeypatch.setattr(
        cli_prices, "_http_client", lambda: httpx.Client(transport=httpx.MockTransport(rec.handle))
    )
    code, _out, err = run_cli(capsys, "prices", "update", "azure")
    assert code == 1
    assert err.strip() == (
        f"trainbill: error: price cache {blocker}: {blocker} is not a directory; set "
        "TRAINBILL_CACHE_DIR to a writable directory. Nothing was fetched."
    )
    assert rec.requests == []
    assert blocker.read_text(encoding="utf-8") == "mine"
