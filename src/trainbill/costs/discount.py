"""Discount: a Savings Plan (or committed-use / reservation) on the covered on-demand node-hours.

Pricing rule. Covered node-hours = coverage × on-demand share × nodes × wall hours, priced at
the provider's published commitment rate for the plan's kind and term (``commitment_rate``):
the line is −(on-demand rate − commitment rate) per covered node-hour, so compute + discount
charge the covered hours at the commitment rate. What else is charged depends on whose
commitment it is (``purchase.commitment``):

* ``existing``: the run consumes a commitment the organisation already holds. Its cost is sunk
  or shared with other workloads, so the run is charged only the commitment rate on its hours,
  and the basis says so.
* ``buy`` (default): the commitment is bought for this run. AWS bills the hourly commitment for
  every hour of the term, used or not (AWS Savings Plans user guide: "you are charged the
  commitment ... regardless of usage"), so the hourly commitment = covered nodes × commitment
  rate, and the hours of the term the run does not use are a second line,
  "unused commitment" = hourly commitment × (terms × hours per term − wall hours). A run longer
  than one term buys consecutive terms.

A kind that does not cover the plan's usage is refused earlier (``trainbill.usage``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from trainbill.catalog import Catalog, Provenance
from trainbill.costs._arrays import some
from trainbill.costs._pricing import (
    commitment_name,
    commitment_rate,
    covered_item,
    covered_on_demand_rate,
)
from trainbill.ledger import Amount, Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "discount"
_YEARS = {"1yr": 1, "3yr": 3}


def _covered_nodes(usage: Usage) -> Amount:
    return usage.purchase.savings_plan_coverage * (1 - usage.purchase.spot_fraction) * usage.nodes


def hourly_commitment(usage: Usage, catalog: Catalog) -> Amount:
    """$/h a bought commitment bills every hour of its term, used or not.

    The headline's caveat quotes it even when the run fills whole terms and the unused-term
    line is empty (zero quantity), so it is computed here rather than read off that line.
    """
    return _covered_nodes(usage) * commitment_rate(catalog, usage).usd


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """Commitment-rate line for the covered hours, plus the unused term of a commitment bought."""
    covers = (usage.purchase.savings_plan_coverage > 0) & (usage.purchase.spot_fraction < 1)
    if usage.purchase.savings_plan == "none" or not some(covers):
        return
    # The commitment rate first: without a published rate (p5e has no On-Demand SKU either) the
    # error to show is "no published … Savings Plan rate", which says how to add one.
    sp = commitment_rate(catalog, usage)
    od = covered_on_demand_rate(catalog, usage)
    name = commitment_name(usage)
    item = covered_item(usage)
    unit = "chip-hour" if usage.instance.billing == "chip" else "instance-hour"
    covered_nodes = _covered_nodes(usage)
    wall = usage.wall_hours
    if usage.purchase.commitment == "existing":
        whose = (
            "covered by an existing commitment: its cost is sunk or shared with other workloads, "
            "so the run is charged the commitment rate on its own hours only"
        )
    else:
        whose = "commitment bought for this run: its unused term is the next line"
    yield Charge(
        category=CATEGORY,
        item=f"{name} on {item}",
        quantity=covered_nodes * wall,
        unit=unit,  # the compute lines' unit: TPUs are billed per chip-hour
        unit_price_usd=-(od.usd - sp.usd),
        basis=lambda: (
            f"{usage.purchase.savings_plan_coverage:.0%} coverage × "
            f"{1 - usage.purchase.spot_fraction:.0%} on-demand × {usage.nodes} nodes × "
            f"{wall:,.1f} h at the {name} rate: saves ${od.usd:,.4g} − ${sp.usd:,.4g} per {unit}; "
            f"{whose}"
        ),
        source=f"commitment rate: {sp.source}; on-demand: {od.source}",
        provenance=Provenance.weakest(sp.provenance, od.provenance),
        driver=__name__,
        pricing_category="Committed",
    )
    if usage.purchase.commitment != "buy":
        return
    term_hours = _YEARS[usage.purchase.savings_plan] * float(
        catalog.value("commitment.hours_per_year")
    )
    terms = np.maximum(1.0, np.ceil(wall / term_hours))  # elementwise: wall may be an array
    hourly = hourly_commitment(usage, catalog)
    unused = terms * term_hours - wall
    yield Charge(
        category=CATEGORY,
        item=f"{name}: unused commitment",
        quantity=unused,
        unit="hour",
        unit_price_usd=hourly,
        basis=lambda: (
            f"${hourly:,.2f}/h commitment ({covered_nodes:g} covered nodes × ${sp.usd:,.4g}) "
            f"bought for this run, billed every hour of {int(terms)} × {term_hours:,.0f} h term: "
            f"{terms * term_hours:,.0f} h − {wall:,.1f} h used = {unused:,.1f} h unused; whole "
            f"commitment ${hourly * terms * term_hours:,.0f}"
        ),
        source=(
            f"commitment rate: {sp.source}; "
            f"{catalog.assumption('commitment.hours_per_year').cite()}"
        ),
        provenance=sp.provenance,
        driver=__name__,
        pricing_category="Committed",
        after_run=True,  # billed every hour of the term after the run ends
    )
