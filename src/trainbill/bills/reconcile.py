"""Hold a forecast against a bill: variance per category and the lines that explain it.

Pure functions over values: ``compare`` takes the forecast as a plain category → USD mapping,
so it does not depend on how the forecast was made, and a ``BillSummary`` already read.

The ledger has categories a bill cannot show separately: time stalled in all-reduce, time lost
to spot reclaims and failures, and time spent writing checkpoints are all GPU instance-hours on
the invoice, and a Savings Plan discount shows up as a cheaper compute line, not as its own
line. ``FORECAST_TO_BILL`` folds them into ``compute``; ``forecast_by_bill_category`` does the
same per ledger line and sends a line whose FOCUS ``service_category`` is Storage (checkpoint
storage and PUTs) to ``storage``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from trainbill._record import record
from trainbill.bills._classify import BILL_CATEGORIES
from trainbill.bills.summary import BillLine, BillSummary
from trainbill.errors import BillError

__all__ = [
    "FORECAST_TO_BILL",
    "Reconciliation",
    "Variance",
    "bill_category_of",
    "compare",
    "forecast_by_bill_category",
]

#: Where each ledger category appears on a bill.
FORECAST_TO_BILL: Mapping[str, str] = MappingProxyType(
    {
        "compute": "compute",
        "sync_stall": "compute",
        "evaluation": "compute",
        "spot_reclaim": "compute",
        "failures": "compute",
        "checkpoint": "compute",
        "discount": "compute",
        "storage": "storage",
        "data_transfer": "data_transfer",
        "networking": "networking",
        "monitoring": "monitoring",
        "orchestration": "orchestration",
        "support": "support",
        "tax": "tax",
        "credit": "credit",
        "other": "other",
    }
)
_BASES = ("billed", "effective")
#: A plan's provider (``cluster.provider``) and words that mark it in a bill's provider name
#: (FOCUS ``ProviderName``: "AWS", "Google Cloud", "Microsoft"; CUR is always AWS).
_PROVIDER_WORDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "aws": ("aws", "amazon"),
        "gcp": ("google", "gcp"),
        "azure": ("microsoft", "azure"),
    }
)


def plan_provider(bill_provider: str) -> str | None:
    """The plan's ``cluster.provider`` a bill's provider name stands for ("AWS" → aws, "Google
    Cloud" → gcp, "Microsoft" → azure), or None for a provider trainbill does not price."""
    name = bill_provider.lower()
    return next((p for p, words in _PROVIDER_WORDS.items() if any(w in name for w in words)), None)


@record
class Variance:
    """Forecast vs actual for one bill category; ``variance_usd = actual - forecast``."""

    category: str
    forecast_usd: float
    actual_usd: float
    lines: tuple[BillLine, ...]

    @property
    def variance_usd(self) -> float:
        """Actual minus forecast: positive means the bill is higher than forecast."""
        return self.actual_usd - self.forecast_usd

    @property
    def variance_pct(self) -> float | None:
        """Variance relative to the forecast, in percent; ``None`` when nothing was forecast."""
        if self.forecast_usd == 0:
            return None
        return 100.0 * self.variance_usd / abs(self.forecast_usd)


@record
class Reconciliation:
    """Every bill category with its variance; ``largest`` are the biggest absolute gaps."""

    basis: str
    currency: str
    period_start: str | None
    period_end: str | None
    rows: tuple[Variance, ...]
    largest: tuple[Variance, ...]
    #: Why the comparison may not mean what it says (an empty bill, another provider's bill).
    warnings: tuple[str, ...] = ()

    @property
    def forecast_total(self) -> float:
        """Sum of the forecast over all categories."""
        return sum(r.forecast_usd for r in self.rows)

    @property
    def actual_total(self) -> float:
        """Sum of the bill over all categories (the bill's total for the chosen basis)."""
        return sum(r.actual_usd for r in self.rows)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""

        def one(r: Variance) -> dict[str, Any]:
            return {
                "category": r.category,
                "forecast_usd": r.forecast_usd,
                "actual_usd": r.actual_usd,
                "variance_usd": r.variance_usd,
                "variance_pct": r.variance_pct,
                "lines": [
                    {
                        "service": x.service,
                        "item": x.item,
                        "rows": x.rows,
                        "cost": x.cost(self.basis),
                    }
                    for x in r.lines
                ],
            }

        return {
            "basis": self.basis,
            "currency": self.currency,
            "period_start": self.period_start,
            "period_end": self.period_end,
            "forecast_total_usd": self.forecast_total,
            "actual_total_usd": self.actual_total,
            "variance_usd": self.actual_total - self.forecast_total,
            "categories": [one(r) for r in self.rows],
            "largest": [r.category for r in self.largest],
            "warnings": list(self.warnings),
        }


def bill_category_of(category: str, service_category: str) -> str:
    """The bill category a ledger line of ``category`` lands in on an invoice (checkpoint
    storage and PUTs, FOCUS service category Storage, are billed as storage)."""
    if category == "checkpoint" and service_category == "Storage":
        return "storage"
    return FORECAST_TO_BILL.get(category, "other")


def forecast_by_bill_category(lines: Iterable[Any]) -> dict[str, float]:
    """Fold ledger lines (``category``, ``service_category``, ``cost_usd``) into bill categories."""
    out = dict.fromkeys(BILL_CATEGORIES, 0.0)
    for line in lines:
        out[bill_category_of(line.category, line.service_category)] += float(line.cost_usd)
    return out


def _warnings(summary: BillSummary, provider: str | None) -> tuple[str, ...]:
    """Reasons the variance may compare things that are not alike, each naming the files.

    Warnings, not errors: an empty month or a multi-cloud FOCUS file can be what the user
    meant, but a -100% variance from a header-only file, or an AWS plan held against a Google
    Cloud bill, were reported as if they were findings.
    """
    files = ", ".join(summary.files)
    out: list[str] = []
    if summary.rows == 0:
        out.append(
            f"{files}: the bill has no rows, so every actual is 0 and every variance -100%; "
            "check that the files hold the period the forecast is for"
        )
    if provider in _PROVIDER_WORDS:
        other = {
            name: rows
            for name, rows in summary.by_provider.items()
            if plan_provider(name) != provider
        }
        if other:
            found = ", ".join(f"{name} ({rows:,} rows)" for name, rows in other.items())
            share = sum(other.values())
            out.append(
                f"{files}: the plan is for {provider} but {share:,} of the bill's "
                f"{summary.rows:,} rows are from another provider: {found}; their costs are "
                "in the actuals"
            )
    return tuple(out)


def compare(
    by_category_forecast: Mapping[str, float],
    summary: BillSummary,
    *,
    basis: str = "billed",
    top: int = 3,
    provider: str | None = None,
) -> Reconciliation:
    """Forecast vs actual per bill category.

    Args:
        by_category_forecast: forecast USD per ledger or bill category (ledger categories are
            folded with ``FORECAST_TO_BILL``; unknown names count as ``other``).
        summary: the bill.
        basis: ``"billed"`` (invoice, BilledCost) or ``"effective"`` (amortised EffectiveCost).
        top: how many of the largest absolute variances to report in ``largest``.
        provider: the plan's provider (``aws``, ``gcp``, ``azure``); rows of another provider
            in the bill are warned about (``Reconciliation.warnings``).

    Raises:
        BillError: unknown ``basis``.
    """
    if basis not in _BASES:
        raise BillError(f"unknown basis {basis!r}; allowed: {', '.join(_BASES)}")
    if summary.currency not in ("USD", ""):
        raise BillError(
            f"{', '.join(summary.files)}: the bill is in {summary.currency} and the forecast in "
            "USD; compare a USD bill (a variance across currencies would be meaningless)"
        )
    forecast = dict.fromkeys(BILL_CATEGORIES, 0.0)
    for name, usd in by_category_forecast.items():
        forecast[FORECAST_TO_BILL.get(name, "other")] += float(usd)
    actual = summary.by_category if basis == "billed" else summary.effective_by_category
    rows = tuple(
        Variance(
            category=cat,
            forecast_usd=forecast[cat],
            actual_usd=float(actual.get(cat, 0.0)),
            lines=summary.lines_for(cat, basis),
        )
        for cat in BILL_CATEGORIES
    )
    ranked = sorted(
        (r for r in rows if r.variance_usd != 0),
        key=lambda r: (-abs(r.variance_usd), BILL_CATEGORIES.index(r.category)),
    )
    return Reconciliation(
        basis=basis,
        currency=summary.currency,
        period_start=summary.period_start,
        period_end=summary.period_end,
        rows=rows,
        largest=tuple(ranked[:top]),
        warnings=_warnings(summary, provider),
    )
