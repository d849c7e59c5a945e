"""Cost drivers: each prices one aspect of a ``Usage`` and returns ledger lines.

Every driver is a module with ``CATEGORY`` and ``price(usage, catalog) -> Iterable[LineItem]``,
listed once in ``DRIVERS`` (order = presentation order). Adding a driver is one module and one
line here; no driver knows about another. ``estimate`` runs them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from trainbill.catalog import Catalog
from trainbill.costs import (
    checkpoint,
    compute,
    data_transfer,
    discount,
    evaluation,
    extra_groups,
    failures,
    monitoring,
    networking,
    orchestration,
    spot_reclaim,
    storage,
    sync_stall,
)
from trainbill.ledger import Ledger, LineItem
from trainbill.usage import Usage

__all__ = ["DRIVERS", "CostDriver", "estimate"]

CostDriver = Callable[[Usage, Catalog], Iterable[LineItem]]

DRIVERS: tuple[CostDriver, ...] = (
    compute.price,
    extra_groups.price,
    sync_stall.price,
    evaluation.price,
    checkpoint.price,
    storage.price,
    data_transfer.price,
    networking.price,
    monitoring.price,
    spot_reclaim.price,
    failures.price,
    orchestration.price,
    discount.price,
)


def estimate(usage: Usage, catalog: Catalog) -> Ledger:
    """Price a usage with every driver into one ledger."""
    return Ledger.of(line for driver in DRIVERS for line in driver(usage, catalog))
