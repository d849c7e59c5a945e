"""Extra instance groups: a CPU head node, a login node or a second pool billed with the run.

Pricing rule: every extra group runs for the whole wall-clock of the run (a head node is not
released while workers wait on a restart), so quantity = count × wall hours at the group's
own on-demand (or spot) price from ``prices.csv``. Under SageMaker HyperPod an on-demand group
is billed as ``ml.<instance>``: its published SageMaker price is used when the catalog has one,
else the EC2 price and the basis says the ml.* premium is not included. No extra groups: no lines.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import sagemaker_rate
from trainbill.ledger import Charge
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "compute"


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """One compute line per extra instance group, for the whole wall-clock."""
    wall = usage.wall_hours
    for name, instance, count, spot in usage.extra_groups:
        option = "spot" if spot else "on_demand"
        point = catalog.price(
            instance, option, provider=usage.provider, region=usage.region, as_of=usage.as_of
        )
        unit_price = point.usd
        source = point.cite()
        how = f"{count} × {instance} ({name} group, {option.replace('_', '-')})"
        price_note = ""
        if usage.orchestrator == "hyperpod" and not spot:
            ml = sagemaker_rate(catalog, usage, instance)
            if ml is None:
                price_note = f"; EC2 price: no published ml.{instance} price, the HyperPod ml.* premium is not included"
            else:
                unit_price = ml.usd
                price_note = f" at the SageMaker ml.{instance} price (HyperPod)"
                source = ml.source

        def basis(h: str = how, n: str = price_note) -> str:
            return f"{h} × {wall:,.2f} h wall-clock{n}"

        yield Charge(
            category=CATEGORY,
            item=f"{instance} {name} group ({option.replace('_', '-')})",
            quantity=count * wall,
            unit="instance-hour",
            unit_price_usd=unit_price,
            basis=basis,
            source=source,
            driver=__name__,
            pricing_category="Dynamic" if spot else "Standard",
        )
