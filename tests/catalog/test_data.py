"""Packaged catalog data: provenance, sanity and history."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

import pytest

from trainbill.catalog import Catalog, file_sha256, load_catalog, packaged_data_dir
from trainbill.errors import CatalogSchemaError, PriceNotFoundError


def test_every_price_has_source_and_date(catalog: Catalog) -> None:
    """Every price point names its source and carries an effective date."""
    assert catalog.prices
    for p in catalog.prices:
        assert p.source.strip(), p
        assert isinstance(p.effective_from, date)


def test_no_negative_prices(catalog: Catalog) -> None:
    """Prices are never negative (discounts are ledger lines, not prices)."""
    assert all(p.usd >= 0 for p in catalog.prices)


def test_spot_at_or_below_on_demand(catalog: Catalog) -> None:
    """Wherever both exist on the same day, spot costs no more than on-demand."""
    for p in catalog.prices:
        if p.option != "spot":
            continue
        od = catalog.price(
            p.item, "on_demand", provider=p.provider, region=p.region, as_of=p.effective_from
        )
        assert p.usd <= od.usd, (p.item, p.usd, od.usd)


def test_every_assumption_has_source(catalog: Catalog) -> None:
    """Every default/assumption is data with a source and a date."""
    for a in catalog.assumptions.values():
        assert a.source.strip(), a.key
        assert isinstance(a.as_of, date), a.key


def test_manifest_hashes_match() -> None:
    """MANIFEST.toml records the SHA-256 of every data file (run tools/update_manifest.py)."""
    data = packaged_data_dir()
    manifest = tomllib.loads((data / "MANIFEST.toml").read_text())
    assert manifest["schema_version"] == 1
    for name, entry in manifest["files"].items():
        assert file_sha256(data / name) == entry["sha256"], name


def test_p5_price_history(catalog: Catalog) -> None:
    """p5.48xlarge: $98.32 before the June-2025 cut, $55.04 after (REFERENCE §4.1)."""
    before = catalog.price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=date(2025, 5, 1)
    )
    after = catalog.price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=date(2026, 12, 2)
    )
    assert (before.usd, after.usd) == (98.32, 55.04)


def test_price_before_first_point_is_an_error(catalog: Catalog) -> None:
    """Asking for a date before any price point names the first available date.

    p6-b200 was sold from 2025-05-15 but the catalog's first price point is 2026-07-28 (p5, the
    instance this test used, now has prices back to its 2023 launch).
    """
    with pytest.raises(PriceNotFoundError, match="first price point is 2026-07-28"):
        catalog.price(
            "p6-b200.48xlarge",
            "on_demand",
            provider="aws",
            region="us-east-1",
            as_of=date(2025, 6, 1),
        )


def test_unknown_instance_suggests(catalog: Catalog) -> None:
    """A typo gets a suggestion."""
    with pytest.raises(PriceNotFoundError, match=r"Did you mean 'p5\.48xlarge'"):
        catalog.instance("p5.48xlarg")


def test_region_fallback_is_cited(catalog: Catalog) -> None:
    """A region without its own price point uses the reference region and says so."""
    p = catalog.price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-west-2", as_of=date(2026, 1, 1)
    )
    assert p.usd == 55.04
    assert "us-east-1 price used: no us-west-2 price point" in p.source


def test_overlay_overrides_and_validates(tmp_path: Path) -> None:
    """An overlay's negotiated price wins; a bad overlay row names file, line and column."""
    (tmp_path / "prices.csv").write_text(
        "provider,region,item,option,unit,usd,effective_from,source\n"
        "aws,us-east-1,p5.48xlarge,on_demand,instance-hour,40.00,2026-01-01,EDP contract 2026\n"
    )
    cat = load_catalog([tmp_path])
    p = cat.price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=date(2026, 6, 1)
    )
    assert (p.usd, p.source) == (40.0, "EDP contract 2026")
    (tmp_path / "prices.csv").write_text(
        "provider,region,item,option,unit,usd,effective_from,source\n"
        "aws,us-east-1,p5.48xlarge,on_demand,instance-hour,-1,2026-01-01,oops\n"
    )
    with pytest.raises(CatalogSchemaError, match=r"prices.csv, line 2, usd: -1.0 is below"):
        load_catalog([tmp_path])
