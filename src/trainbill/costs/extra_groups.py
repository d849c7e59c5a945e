"""Extra instance groups: a CPU head node, a login node or a second pool billed with the run.

Pricing rule: every extra group runs for the whole wall-clock of the run (a head node is not
released while workers wait on a restart), so quantity = count × wall hours at the group's
own on-demand (or spot) price, looked up as the workers' is (``_pricing.group_rate``: the
plan zone's spot price, a Capacity Block rate where there is no On-Demand SKU, the price's
age). Under SageMaker HyperPod an on-demand group is billed as ``ml.<instance>``: its published
SageMaker price is used when the catalog has one, else the EC2 price and the basis says the
ml.* premium is not included; a spot group of a HyperPod run dated before HyperPod offered Spot
is on demand (``usage.hyperpod_spot_note``, as the workers are). No extra groups: no lines.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import group_rate, sagemaker_rate
from trainbill.errors import PriceNotFoundError
from trainbill.ledger import Charge
from trainbill.usage import Usage, hyperpod_spot_note

__all__ = ["CATEGORY", "price"]
CATEGORY = "compute"
#: FOCUS pricing category by purchase option, as the compute driver's lines have it.
_PRICING_CATEGORY = {"spot": "Dynamic", "capacity_block": "Committed"}


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """One compute line per extra instance group, for the whole wall-clock."""
    wall = usage.wall_hours
    before_spot = usage.orchestrator == "hyperpod" and bool(
        hyperpod_spot_note(catalog, "hyperpod", 1.0, usage.run_date)
    )
    for i, (name, instance, count, given_spot) in enumerate(usage.extra_groups):
        spot = given_spot and not before_spot  # HyperPod before Spot: the group is on demand
        try:
            rate = group_rate(catalog, usage, "spot" if spot else "on_demand", instance)
        except PriceNotFoundError as exc:  # name the plan's field, not only the item
            msg = f"cluster.extra_groups[{i}] ({name}, instance {instance!r}): {exc}"
            raise PriceNotFoundError(msg) from None
        unit_price, source, provenance = rate.usd, rate.source, rate.provenance
        how = f"{count} × {instance} ({name} group, {rate.words})"
        price_note = ""
        if usage.orchestrator == "hyperpod" and not spot:
            ml = sagemaker_rate(catalog, usage, instance)
            if ml is None:
                price_note = (
                    f"; EC2 price: no published ml.{instance} price, the HyperPod ml.* premium is "
                    "not included"
                )
            else:
                unit_price = ml.usd
                price_note = f" at the SageMaker ml.{instance} price (HyperPod)"
                source, provenance = ml.source, ml.provenance

        def basis(h: str = how, n: str = price_note) -> str:
            return f"{h} × {wall:,.2f} h wall-clock{n}"

        yield Charge(
            category=CATEGORY,
            item=f"{instance} {name} group ({rate.words})",
            quantity=count * wall,
            unit="instance-hour",
            unit_price_usd=unit_price,
            basis=basis,
            source=source,
            provenance=provenance,
            driver=__name__,
            pricing_category=_PRICING_CATEGORY.get(rate.option, "Standard"),
        )
