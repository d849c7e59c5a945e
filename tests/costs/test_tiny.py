"""The tiny catalog holds only the prices a test gives (a published price change cannot reach
it)."""

from __future__ import annotations

from costs.tiny import TINY_FROM, price, tiny_catalog
from trainbill.catalog import Catalog


def test_tiny_catalog_holds_only_the_given_prices(catalog: Catalog) -> None:
    """One $10/h on-demand price in; the packaged spot price for the same instance is gone."""
    tiny = tiny_catalog(catalog, price("p5.48xlarge", "on_demand", "instance-hour", 10.0))
    od = tiny.find_price(
        "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=TINY_FROM
    )
    assert od is not None
    assert od.usd == 10.0
    assert (
        tiny.find_price("p5.48xlarge", "spot", provider="aws", region="us-east-1", as_of=TINY_FROM)
        is None
    )
    assert tiny.instances == catalog.instances  # hardware and methodology stay packaged
