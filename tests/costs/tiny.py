"""A tiny catalog for driver tests: the packaged hardware and methodology, round made-up prices.

A driver test checks a pricing *rule* (what is multiplied by what), so it must not move when a
published price is refreshed. ``tiny_catalog`` keeps the packaged accelerators, instances and
assumptions (the rules' inputs: instance shapes, failure rates, which service a role uses) but
replaces every price with the round figures a test passes in, so the expected value is hand
arithmetic on numbers written in the test itself.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from trainbill.catalog import Catalog, PricePoint

#: Every tiny price is effective from this date; tests price their plans on or after it.
TINY_FROM = date(2024, 1, 1)


def price(
    item: str,
    option: str,
    unit: str,
    usd: float,
    *,
    provider: str = "aws",
    region: str = "us-east-1",
) -> PricePoint:
    """One made-up price point, marked as such in its source."""
    return PricePoint(
        provider=provider,
        region=region,
        item=item,
        option=option,
        unit=unit,
        usd=usd,
        effective_from=TINY_FROM,
        source=f"test price {usd} per {unit}",
    )


def tiny_catalog(base: Catalog, *prices: PricePoint) -> Catalog:
    """``base`` with only ``prices``: any price the test did not give is simply not there."""
    return replace(base, prices=tuple(prices), version="tiny", overlays=())
