"""Provenance: where a price comes from is a typed field on price points, rates and ledger
lines, so warnings are drawn from it and never from words searched in a source."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from conftest import SEED, TODAY
from costs.tiny import TINY_FROM, price, tiny_catalog
from trainbill.catalog import Catalog, Provenance
from trainbill.catalog.lookups import REFERENCE_PRICE
from trainbill.costs._pricing import UNPRICED
from trainbill.forecasting import CautionKind, forecast
from trainbill.spec import load_plan, plan_from_dict


def test_a_point_of_the_region_asked_for_is_published(catalog: Catalog) -> None:
    """us-east-1 has its own p5 price: published, standing in for no other region."""
    tiny = tiny_catalog(catalog, price("p5.48xlarge", "on_demand", "instance-hour", 10.0))
    p = tiny.find_price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=TINY_FROM
    )
    assert p is not None
    assert p.stands_in_for is None
    assert p.provenance is Provenance.PUBLISHED


def test_another_regions_point_says_which_region_it_stands_in_for(catalog: Catalog) -> None:
    """Only us-east-1 is priced: a us-west-2 look-up gets it, marked as standing in for
    us-west-2."""
    tiny = tiny_catalog(catalog, price("p5.48xlarge", "on_demand", "instance-hour", 10.0))
    p = tiny.find_price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-west-2", as_of=TINY_FROM
    )
    assert p is not None
    assert (p.region, p.usd) == ("us-east-1", 10.0)
    assert p.stands_in_for == "us-west-2"
    assert p.provenance is Provenance.REFERENCE_REGION


def test_a_stand_in_row_is_a_stand_in_unless_it_also_comes_from_another_region(
    catalog: Catalog,
) -> None:
    """A STAND-IN figure in us-east-1: stand_in there, reference_region when us-west-2 asks
    (the forecast must say the plan's region was not priced, whatever the figure is)."""
    row = price("trn2.48xlarge", "on_demand", "instance-hour", 20.0)
    stand_in = replace(row, source="STAND-IN: no published price, test figure")
    tiny = tiny_catalog(catalog, stand_in)
    here = tiny.price("trn2.48xlarge", "on_demand", provider="aws", region="us-east-1",
                      as_of=date(2025, 5, 1))  # fmt: skip
    there = tiny.price("trn2.48xlarge", "on_demand", provider="aws", region="us-west-2",
                       as_of=date(2025, 5, 1))  # fmt: skip
    assert here.provenance is Provenance.STAND_IN
    assert there.provenance is Provenance.REFERENCE_REGION


@pytest.mark.parametrize(
    ("parts", "weakest"),
    [
        ((), Provenance.PUBLISHED),
        ((Provenance.PUBLISHED, Provenance.PUBLISHED), Provenance.PUBLISHED),
        ((Provenance.PUBLISHED, Provenance.STAND_IN), Provenance.STAND_IN),
        ((Provenance.REFERENCE_REGION, Provenance.PUBLISHED), Provenance.REFERENCE_REGION),
        ((Provenance.STAND_IN, Provenance.REFERENCE_REGION), Provenance.REFERENCE_REGION),
        ((Provenance.UNPRICED, Provenance.REFERENCE_REGION), Provenance.UNPRICED),
        ((Provenance.BILLS, Provenance.PUBLISHED), Provenance.BILLS),
    ],
)
def test_a_blend_has_the_provenance_of_its_weakest_price(
    parts: tuple[Provenance, ...], weakest: Provenance
) -> None:
    """Order: published < bills < stand_in < reference_region < unpriced (what a reader must be
    told first wins)."""
    assert Provenance.weakest(*parts) is weakest


def _seed_in(as_of: date | None = None, **cluster: object) -> dict[str, Any]:
    """The seed example's plan, every hidden cost on, with ``cluster`` fields changed."""
    doc: dict[str, Any] = tomllib.loads(SEED.read_text(encoding="utf-8"))
    doc["cluster"].update(cluster)
    if as_of is not None:
        doc["prices"]["as_of"] = as_of
    return doc


#: Azure in eastus on 2026-10-01 (the catalog's Azure prices are read from 2026-09): the node
#: priced there, one service only in another region, five with no Azure price at all.
_AZURE = {"provider": "azure", "instance": "Standard_ND96isr_H100_v5", "region": "eastus",
          "orchestrator": "vm"}  # fmt: skip


@pytest.mark.parametrize(
    "plan",
    [
        _seed_in(),
        _seed_in(region="eu-north-7"),  # in no catalog: the reference region prices every line
        _seed_in(date(2026, 10, 1), **_AZURE),
    ],
    ids=["seed", "unknown-region", "azure-eastus"],
)
def test_every_lines_provenance_agrees_with_what_its_source_tells_a_reader(
    catalog: Catalog, plan: dict[str, Any]
) -> None:
    """The words are for people, the field for code; on every line of real plans they agree: a
    source naming another region's price is a reference-region line, a NOT PRICED one unpriced,
    one its own region prices from a source marked UNVERIFIED an unverified line."""
    fc = forecast(plan_from_dict(plan), catalog, today=TODAY)
    assert fc.ledger.lines
    if plan["cluster"].get("provider") == "azure":  # the case that mixes three of them
        # (its UNVERIFIED lines were the NAT Gateway's third-party estimator rates of
        # 2026-12-03; on this plan's date the NAT meters of 2024-07-01 from infracost's Azure
        # price database price it, which the catalog does not mark UNVERIFIED)
        assert {ln.provenance for ln in fc.ledger.lines} == {
            Provenance.PUBLISHED,
            Provenance.REFERENCE_REGION,
            Provenance.UNPRICED,
        }
    for ln in fc.ledger.lines:
        assert (REFERENCE_PRICE in ln.source) == (ln.provenance is Provenance.REFERENCE_REGION), ln
        assert ln.source.startswith(UNPRICED) == (ln.provenance is Provenance.UNPRICED), ln
        if ln.provenance is Provenance.PUBLISHED:
            assert "UNVERIFIED" not in ln.source, ln
        if ln.provenance is Provenance.UNVERIFIED:
            assert "UNVERIFIED" in ln.source, ln


def test_lines_priced_from_unverified_sources_are_said_with_their_dollars(
    catalog: Catalog,
) -> None:
    """The seed plan's FSx persistent_250 rate is marked UNVERIFIED in the catalog: the caution
    names that line and its dollars, the sum of the lines whose source says UNVERIFIED."""
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    marked = [ln for ln in fc.ledger.lines if "UNVERIFIED" in ln.source]
    assert [ln.item for ln in marked] == ["FSx for Lustre (persistent_250)"]
    (said,) = [c.text for c in fc.cautions if c.kind == CautionKind.UNVERIFIED_PRICES]
    assert said.startswith(f"${sum(ln.cost_usd for ln in marked):,.0f} (")
    assert "FSx for Lustre (persistent_250)" in said
