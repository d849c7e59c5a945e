"""Discount: Savings Plan (or committed-use) savings on covered on-demand node-hours.

Pricing rule: covered node-hours = coverage × on-demand share × nodes × wall hours; the line
is negative: −(on-demand rate − commitment rate) per covered node-hour. The commitment rate is
an explicit ``sp_1yr``/``sp_3yr`` price point or derived from the provider's discount
assumption. Assumes the run consumes an existing commitment (an idle commitment's cost is the
planner's concern, not this run's bill).
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import commitment_rate, instance_rate
from trainbill.ledger import LineItem
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "discount"


def price(usage: Usage, catalog: Catalog) -> Iterable[LineItem]:
    """Negative line for Savings-Plan-covered on-demand node-hours."""
    if usage.savings_plan == "none" or usage.savings_plan_coverage <= 0 or usage.spot_fraction >= 1:
        return
    od = instance_rate(catalog, usage, "on_demand")
    sp = commitment_rate(catalog, usage)
    unit = "chip-hour" if usage.instance.billing == "chip" else "instance-hour"
    covered = (
        usage.savings_plan_coverage * (1 - usage.spot_fraction) * usage.nodes * usage.wall_hours
    )
    yield LineItem(
        category=CATEGORY,
        item=f"{usage.savings_plan} Savings Plan on {usage.instance.instance}",
        quantity=covered,
        unit=unit,  # the compute lines' unit: TPUs are billed per chip-hour
        unit_price_usd=-(od.usd - sp.usd),
        basis=(
            f"{usage.savings_plan_coverage:.0%} coverage × {1 - usage.spot_fraction:.0%} on-demand × {usage.nodes} nodes × "
            f"{usage.wall_hours:,.1f} h; saves ${od.usd:,.4g} − ${sp.usd:,.4g} per {unit}"
        ),
        source=f"commitment rate: {sp.source}",
        driver=__name__,
        pricing_category="Committed",
    )
