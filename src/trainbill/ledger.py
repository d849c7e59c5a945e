"""Ledger: the itemized bill, one line per (category, item), each with its arithmetic.

Lines carry FOCUS concepts in snake_case (``service_category``, ``pricing_category``) so a
forecast and a real bill (``trainbill.bills``) meet on the same categories: reconciling them
is a group-by, not a translation. Amounts are float USD and never rounded here; rounding
belongs to presentation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trainbill._record import record
from trainbill.catalog.rows import Provenance

__all__ = ["CATEGORIES", "Amount", "Charge", "Ledger", "LineItem"]

#: A quantity or price: one number when one plan is priced, a float64 array when the drivers
#: price a simulation's trials or a planner's grid in one pass (``trainbill.costs.price_arrays``).
Amount = float | NDArray[np.float64]

#: The closed set of ledger categories, in presentation order. Bills are classified into the
#: same names (plus bill-only ones such as ``tax``/``credit``) so forecasts and invoices compare.
CATEGORIES: tuple[str, ...] = (
    "compute",
    "sync_stall",
    "evaluation",
    "checkpoint",
    "storage",
    "data_transfer",
    "networking",
    "monitoring",
    "spot_reclaim",
    "failures",
    "orchestration",
    "discount",
)


@record
class LineItem:
    """One priced line: ``cost_usd == quantity * unit_price_usd`` by construction.

    ``basis`` says in words how the quantity was derived (formula and assumptions), and
    ``source`` names the price point and its date, so finance can audit every dollar. Both are
    for people; code reads the typed fields: ``provenance`` (where the unit price comes from,
    which the forecast's warnings are drawn from) and ``after_run`` (billed after the run ends,
    which the spend calendar places).
    """

    category: str
    item: str
    quantity: float
    unit: str
    unit_price_usd: float
    basis: str
    source: str
    provenance: Provenance
    driver: str = ""
    service_category: str = "Compute"
    pricing_category: str = "Standard"
    #: Accrues after the run's wall-clock, one quantity unit per hour from its end (a bought
    #: commitment's unused term); every other line accrues during the run.
    after_run: bool = False

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            msg = f"unknown ledger category {self.category!r}; allowed: {', '.join(CATEGORIES)}"
            raise ValueError(msg)

    @property
    def cost_usd(self) -> float:
        """Quantity × unit price; derived, so a line can never disagree with its arithmetic."""
        return self.quantity * self.unit_price_usd

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form with the contract's field names."""
        return {
            "category": self.category,
            "item": self.item,
            "quantity": float(self.quantity),
            "unit": self.unit,
            "unit_price_usd": float(self.unit_price_usd),
            "cost_usd": float(self.cost_usd),
            "basis": self.basis,
            "source": self.source,
            "driver": self.driver,
            "service_category": self.service_category,
            "pricing_category": self.pricing_category,
            # Where the unit price comes from (published / bills / stand_in / reference_region /
            # unpriced): what a reader defending the line to finance needs next to its source.
            "provenance": self.provenance.value,
            "after_run": self.after_run,
        }


@record
class Charge:
    """What a cost driver yields: a line whose quantity and unit price may be arrays.

    One code path prices one plan and a whole array of trials or grid points: the driver's
    arithmetic broadcasts, and its ``basis`` is a function rendered only for a single plan
    (``line``), never for arrays, where formatting a number has no meaning. Everything else
    (item, unit, source) is text that does not depend on the quantities that vary.
    """

    category: str
    item: str
    quantity: Amount
    unit: str
    unit_price_usd: Amount
    basis: Callable[[], str]
    source: str
    #: Where the unit price comes from (the weakest of the prices it is worked out of).
    provenance: Provenance
    driver: str = ""
    service_category: str = "Compute"
    pricing_category: str = "Standard"
    #: Billed after the run ends (``LineItem.after_run``).
    after_run: bool = False

    @property
    def cost_usd(self) -> Amount:
        """Quantity × unit price, elementwise for arrays."""
        cost: Amount = self.quantity * self.unit_price_usd
        return cost

    def line(self) -> LineItem:
        """The ledger line of a single plan's charge, with its basis rendered now."""
        return LineItem(
            category=self.category,
            item=self.item,
            quantity=float(self.quantity),
            unit=self.unit,
            unit_price_usd=float(self.unit_price_usd),
            basis=self.basis(),
            source=self.source,
            provenance=self.provenance,
            driver=self.driver,
            service_category=self.service_category,
            pricing_category=self.pricing_category,
            after_run=self.after_run,
        )


@record
class Ledger:
    """An immutable, ordered collection of lines with totals by category."""

    lines: tuple[LineItem, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, lines: Iterable[LineItem]) -> Ledger:
        """Build a ledger, dropping zero-quantity lines so the table shows only what is paid."""
        return cls(lines=tuple(line for line in lines if line.quantity != 0))

    @property
    def total_usd(self) -> float:
        """Sum of every line (discounts are negative lines)."""
        return float(sum(line.cost_usd for line in self.lines))

    def by_category(self) -> Mapping[str, float]:
        """Cost per category in ``CATEGORIES`` order; categories with no line are 0."""
        totals = dict.fromkeys(CATEGORIES, 0.0)
        for line in self.lines:
            totals[line.category] += line.cost_usd
        return MappingProxyType(totals)

    def in_category(self, category: str) -> tuple[LineItem, ...]:
        """The lines of one category, in ledger order."""
        return tuple(line for line in self.lines if line.category == category)
