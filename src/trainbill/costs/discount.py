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
  "unused commitment" = hourly commitment × (terms × hours per term − covered hours). A run
  longer than one term buys consecutive terms, except that the hours past its last whole term
  run on demand when another term would cost more than it saves (its hourly commitment for the
  whole term against those hours' saving: the tail is shorter than sp / od of a term). Buying
  it regardless priced a 9,902 h run on a 1-year plan as two whole years.

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
from trainbill.usage import Usage, instance_family

__all__ = ["CATEGORY", "price"]
CATEGORY = "discount"
_YEARS = {"1yr": 1, "3yr": 3}


def _covered_nodes(usage: Usage) -> Amount:
    return usage.purchase.savings_plan_coverage * (1 - usage.purchase.spot_fraction) * usage.nodes


def _term_hours(usage: Usage, catalog: Catalog) -> float:
    return _YEARS[usage.purchase.savings_plan] * float(catalog.value("commitment.hours_per_year"))


def _terms(usage: Usage, catalog: Catalog, wall: Amount, ratio: float) -> tuple[Amount, Amount]:
    """(terms bought, hours covered) for a run of ``wall`` hours; ``ratio`` = commitment rate /
    on-demand rate. Whole terms cover what they can; a partial last term is bought when its
    hours are more than ``ratio`` of a term (then its commitment costs less than those hours on
    demand), else they run on demand. At least one term: the plan buys a commitment.
    An existing commitment covers every hour. Elementwise: ``wall`` may be an array."""
    if usage.purchase.commitment != "buy":
        return np.maximum(1.0, np.ceil(wall / _term_hours(usage, catalog))), wall
    term = _term_hours(usage, catalog)
    full = np.floor(wall / term)
    tail = wall - full * term
    last = (full == 0) | (tail > ratio * term)
    terms = full + np.where(last & (tail > 0), 1.0, 0.0)
    hours = np.where(last, wall, full * term)
    if np.ndim(terms) == 0:
        return float(terms), float(hours)
    return terms, hours


def coverage_scope(usage: Usage) -> str:
    """What the plan's commitment kind covers, so the basis answers "does switching instance
    family (to Trainium) lose the discount?" (AWS Savings Plans user guide, "Savings Plans
    types": an EC2 Instance Savings Plan applies to one instance family in one region; a
    Compute Savings Plan to any family, size and region, Trainium included)."""
    kind = usage.purchase.savings_plan_kind
    inst = usage.instance.instance
    if kind == "ec2-instance":
        family = instance_family(inst)
        return (
            f"an EC2 Instance Savings Plan covers the {family} family in {usage.region} only: "
            f"moving the run to another family (trn1, Trainium) or region loses the discount; a "
            "Compute Savings Plan would keep it"
        )
    if kind == "compute":
        return (
            "a Compute Savings Plan covers any instance family in any region, Trainium "
            "included: moving the run off the "
            f"{instance_family(inst)} family keeps the discount (at that family's rate)"
        )
    if kind == "sagemaker":
        return "a SageMaker Savings Plan covers SageMaker ml.* usage only"
    return f"the {usage.provider} commitment covers {inst} in {usage.region}"


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
    terms, hours = _terms(usage, catalog, wall, sp.usd / od.usd)
    if usage.purchase.commitment == "existing":
        whose = (
            "covered by an existing commitment: its cost is sunk or shared with other workloads, "
            "so the run is charged the commitment rate on its own hours only"
        )
    else:
        whose = "commitment bought for this run" + (
            ": its unused term is the next line"
            if some(terms * _term_hours(usage, catalog) > hours)
            else ""
        )
    yield Charge(
        category=CATEGORY,
        item=f"{name} on {item}",
        quantity=covered_nodes * hours,
        unit=unit,  # the compute lines' unit: TPUs are billed per chip-hour
        unit_price_usd=-(od.usd - sp.usd),
        basis=lambda: (
            f"{usage.purchase.savings_plan_coverage:.0%} coverage × "
            f"{1 - usage.purchase.spot_fraction:.0%} on-demand × {usage.nodes} nodes × "
            f"{hours:,.1f} h at the {name} rate: saves ${od.usd:,.4g} − ${sp.usd:,.4g} per {unit}; "
            f"{whose}"
            + (
                f"; the last {wall - hours:,.1f} h run on demand (another whole term would cost "
                "more than it saves)"
                if some(hours < wall)
                else ""
            )
            + f"; {coverage_scope(usage)}; rate: {sp.source}"
        ),
        source=f"commitment rate: {sp.source}; on-demand: {od.source}",
        provenance=Provenance.weakest(sp.provenance, od.provenance),
        driver=__name__,
        pricing_category="Committed",
    )
    if usage.purchase.commitment != "buy":
        return
    term_hours = _term_hours(usage, catalog)
    hourly = hourly_commitment(usage, catalog)
    unused = terms * term_hours - hours
    yield Charge(
        category=CATEGORY,
        item=f"{name}: unused commitment",
        quantity=unused,
        unit="hour",
        unit_price_usd=hourly,
        basis=lambda: (
            f"${hourly:,.2f}/h commitment ({covered_nodes:g} covered nodes × ${sp.usd:,.4g}) "
            f"bought for this run, billed every hour of {int(terms)} × {term_hours:,.0f} h term: "
            f"{terms * term_hours:,.0f} h − {hours:,.1f} h used = {unused:,.1f} h unused; whole "
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
