"""Bill-calibrated overheads: the organisation's own dollars per GPU node-hour, fitted from its
invoices (``trainbill calibrate``), in place of the modelled lines of those categories.

Pricing rule: for each category the catalog's ``bill_rates`` hold (the last calibration that
names a category wins), one line of nodes × wall hours × the fitted rate, and every modelled
line of that category gives way (``replaces``). Object-storage checkpoint lines are storage on
a bill, so they give way to a storage rate too; the checkpoint stall is time, which bills cannot
see, and stays modelled. Orchestration fees on past bills (EKS, SageMaker) do not carry over to
a self-managed plan. No bill rates: no lines and nothing replaced.

This is a step of the one pricing path (``costs.charges``), not an edit of a finished ledger,
so a simulation's trials and the planner's grid price calibrated overheads as a forecast does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from trainbill.catalog import BillRates, Catalog, Provenance
from trainbill.ledger import Charge
from trainbill.spec import SELF_MANAGED
from trainbill.usage import Usage

__all__ = ["applied", "price", "replaces"]


def applied(usage: Usage, catalog: Catalog) -> Mapping[str, BillRates]:
    """Category -> the calibration whose rate prices it for this plan (empty: none)."""
    out: dict[str, BillRates] = {}
    for rates in catalog.bill_rates:
        for category in rates.usd_per_node_hour:
            if category == "orchestration" and usage.orchestrator in SELF_MANAGED:
                continue  # self-managed VMs pay no managed-service fee
            out[category] = rates
    return out


def replaces(charge: Charge, categories: Mapping[str, BillRates]) -> bool:
    """A modelled charge that a bill-fitted rate stands for."""
    if charge.category in categories:
        return True
    return (
        "storage" in categories
        and charge.category == "checkpoint"
        and charge.service_category == "Storage"
    )


def price(usage: Usage, catalog: Catalog) -> Iterable[Charge]:
    """One line per bill-calibrated category with a non-zero rate, calibration by calibration."""
    categories = applied(usage, catalog)
    u = usage
    for rates in catalog.bill_rates:
        for cat, factor in rates.usd_per_node_hour.items():
            if categories.get(cat) is not rates or factor == 0:
                continue

            def basis(cat: str = cat, factor: float = factor, r: BillRates = rates) -> str:
                return (
                    f"{u.nodes} nodes × {u.wall_hours:,.1f} h × ${factor:,.4f} per GPU node-hour, "
                    f"the {cat} cost per GPU instance-hour on bills for {r.period} "
                    f"({r.gpu_node_hours:,.0f} node-hours)"
                )

            yield Charge(
                category=cat,
                item=f"{cat.replace('_', ' ')} (calibrated from bills)",
                quantity=u.node_hours,
                unit="node-hour",
                unit_price_usd=factor,
                basis=basis,
                source=f"calibration from {rates.files} (billing period {rates.period})",
                provenance=Provenance.BILLS,
                driver=__name__,
                service_category="Other",
            )
