"""Cost drivers: each prices one aspect of a ``Usage`` and returns its charges.

Every driver is a module with ``CATEGORY`` and ``price(usage, catalog) -> Iterable[Charge]``,
listed once in ``DRIVERS`` (order = presentation order). Adding a driver is one module and one
line here; no driver knows about another.

One code path prices one plan and many: ``estimate`` runs every driver on a usage and renders
the ledger (each line's basis from this single plan); ``price_arrays`` runs the very same
drivers on a usage whose varying fields are NumPy arrays (a simulation's trials, a planner's
grid) and returns the cost per category, elementwise, with no text rendered. Drivers branch
with ``_arrays.some`` and give zero where a branch does not apply, so the two agree to
rounding by construction; nothing is fitted, probed or copied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
from numpy.typing import NDArray

from trainbill.catalog import Catalog
from trainbill.costs import (
    bill_rates,
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
from trainbill.ledger import CATEGORIES, Charge, Ledger
from trainbill.usage import Usage

__all__ = ["DRIVERS", "CostDriver", "charges", "estimate", "price_arrays"]

CostDriver = Callable[[Usage, Catalog], Iterable[Charge]]

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


def charges(usage: Usage, catalog: Catalog) -> Iterator[Charge]:
    """Every driver's charges, in presentation order.

    With rates fitted from bills on the catalog (``Catalog.bill_rates``), the modelled charges
    they stand for give way to the bill-calibrated ones, which come last (``bill_rates``).
    """
    calibrated = bill_rates.applied(usage, catalog)
    if not calibrated:
        for driver in DRIVERS:
            yield from driver(usage, catalog)
        return
    for driver in DRIVERS:
        yield from (c for c in driver(usage, catalog) if not bill_rates.replaces(c, calibrated))
    yield from bill_rates.price(usage, catalog)


def estimate(usage: Usage, catalog: Catalog) -> Ledger:
    """Price a usage with every driver into one ledger (zero lines left out, bases rendered)."""
    return Ledger.of(c.line() for c in charges(usage, catalog) if c.quantity != 0)


_CATEGORY_INDEX = {c: i for i, c in enumerate(CATEGORIES)}


def price_arrays(
    usage: Usage, catalog: Catalog, *, by_category: bool = False
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """Total cost, and with ``by_category`` the cost per category (``CATEGORIES`` on axis 0),
    of a usage whose varying fields may be arrays, elementwise over their broadcast shape.

    Costs are added in ledger order starting from zero, as ``Ledger.total_usd`` and
    ``Ledger.by_category`` add them, so a point of the array costs exactly what ``estimate``
    says for that one plan (a zero-quantity charge, which the ledger leaves out, adds 0).
    """
    costs = [(_CATEGORY_INDEX[c.category], c.cost_usd) for c in charges(usage, catalog)]
    shape = np.broadcast_shapes(*(np.shape(v) for _, v in costs))
    total = np.zeros(shape)
    for _, v in costs:
        total += v
    if not by_category:
        return total, None
    cats = np.zeros((len(CATEGORIES), *shape))
    for i, v in costs:
        cats[i] += v
    return total, cats
