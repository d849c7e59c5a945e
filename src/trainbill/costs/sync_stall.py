"""Sync stall: cluster-hours spent waiting on gradient communication and the slowest GPU.

Pricing rule: stall hours = compute hours × (exposed-communication fraction + straggler
fraction) from ``trainbill.timemodel``, billed at the blended cluster rate (every node is
paid for while it waits). Reads ``[time]`` and ``reliability.straggler_cv`` assumptions via the
usage, prices via ``prices.csv``.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainbill.catalog import Catalog
from trainbill.costs._pricing import cluster_rate, instance_rate
from trainbill.ledger import LineItem
from trainbill.usage import Usage

__all__ = ["CATEGORY", "price"]
CATEGORY = "sync_stall"


def price(usage: Usage, catalog: Catalog) -> Iterable[LineItem]:
    """One line per stall cause: exposed communication and stragglers."""
    rate, words = cluster_rate(catalog, usage)
    source = instance_rate(catalog, usage, "on_demand").source
    t = usage.time
    total = t.sync_stall_fraction
    if total <= 0:
        # No modelled stall, but the usage has some (a simulated trial's throttling episodes):
        # those hours are billed too, or a slower trial would come out cheaper.
        if usage.sync_stall_hours > 0:
            yield LineItem(
                category=CATEGORY,
                item="slow steps (throttling, stragglers)",
                quantity=usage.sync_stall_hours,
                unit="cluster-hour",
                unit_price_usd=rate,
                basis=f"{usage.sync_stall_hours:,.2f} h of slowed steps; {words}",
                source=source,
                driver=__name__,
            )
        return
    for label, fraction, why in (
        (
            "gradient communication not hidden by compute",
            t.comm_stall_fraction,
            "exposed all-reduce/all-gather",
        ),
        ("stragglers (slowest GPU sets the step)", t.straggler_fraction, "cv × sqrt(2 ln GPUs)"),
    ):
        if fraction <= 0:
            continue
        hours = usage.sync_stall_hours * fraction / total
        yield LineItem(
            category=CATEGORY,
            item=label,
            quantity=hours,
            unit="cluster-hour",
            unit_price_usd=rate,
            basis=f"{usage.compute_hours:,.2f} h × {fraction:.2%} ({why}); {words}",
            source=source,
            driver=__name__,
        )
