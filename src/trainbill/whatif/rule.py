"""The article's ``instances × rate × hours × 1.3-1.5 × 1.1`` next to the itemized bill, with
the gap explained category by category."""

from __future__ import annotations

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.forecasting import Forecast, quote_of
from trainbill.ledger import CATEGORIES

__all__ = ["RuleOfThumb", "rule_of_thumb"]


# --- rule of thumb ---------------------------------------------------------------------------
@record
class RuleOfThumb:
    """The article's formula next to the itemized bill, and the gap by category."""

    base_usd: float
    base_basis: str
    utilization_low: float
    utilization_high: float
    risk: float
    low_usd: float
    high_usd: float
    itemized_usd: float
    #: (category, itemized $, what the category adds beyond the rule's base); sums to itemized −
    #: base.
    by_category: tuple[tuple[str, float, float], ...]
    #: The forecast's P90 budget (``headline.budget``), when known: the rule's uplift is a
    #: budget, so it is judged against the budget too, not only the expected bill.
    budget_usd: float | None = None

    @property
    def mid_usd(self) -> float:
        """Midpoint of the rule's range."""
        return (self.low_usd + self.high_usd) / 2.0

    def _where(self, usd: float) -> str:
        if usd < self.low_usd:
            return "below"
        return "above" if usd > self.high_usd else "inside"

    @property
    def verdict(self) -> str:
        """Where the itemized bill, and the P90 budget when known, fall against the rule's range.

        The expected bill alone once made "the rule over-budgets this plan" the verdict on a
        plan whose own P90 budget was far above the rule's range."""
        expected = self._where(self.itemized_usd)
        if self.budget_usd is None:
            return {
                "below": "below the rule's range: the rule over-budgets this plan",
                "above": "above the rule's range: the rule under-budgets this plan",
                "inside": "inside the rule's range",
            }[expected]
        p90 = self._where(self.budget_usd)
        said = f"the expected bill is {expected} the rule's range, the P90 budget {p90} it"
        if p90 == "below":
            return f"{said}: the rule over-budgets this plan"
        if expected == "above":
            return f"{said}: the rule under-budgets this plan"
        if p90 == "above":
            return f"{said}: the rule covers the expected bill, not a 1-in-10 overrun"
        return f"{said}: the rule covers the P90 budget"


def rule_of_thumb(fc: Forecast, catalog: Catalog, budget_usd: float | None = None) -> RuleOfThumb:
    """``instances × on-demand rate × planned hours × utilization (1.3–1.5) × risk (1.1 if spot)``.

    The rule multiplies one base; the itemized bill adds categories. The gap is explained as:
    compute minus the base (negative when spot or a Savings Plan makes compute cheaper than list),
    plus every other category in full, minus the rule's uplift ``base × (factor − 1)``.
    """
    u = fc.usage
    quote = quote_of(u, catalog)  # the rule's base is the forecast's quote
    base = quote.usd
    lo = float(catalog.value("whatif.rule_utilization_low"))
    hi = float(catalog.value("whatif.rule_utilization_high"))
    risk = float(catalog.value("whatif.rule_risk_spot")) if u.purchase.spot_fraction > 0 else 1.0
    cats = fc.ledger.by_category()
    rows = []
    for c in CATEGORIES:
        amount = cats.get(c, 0.0)
        beyond = amount - base if c == "compute" else amount
        rows.append((c, amount, beyond))
    return RuleOfThumb(
        base_usd=base,
        base_basis=f"{u.nodes} × ${quote.rate_usd:,.2f}/h × {u.compute.hours:,.2f} h",
        utilization_low=lo,
        utilization_high=hi,
        risk=risk,
        low_usd=base * lo * risk,
        high_usd=base * hi * risk,
        itemized_usd=fc.total_usd,
        by_category=tuple(rows),
        budget_usd=budget_usd,
    )
