"""Stored forecasts as FOCUS 1.2 cost-and-usage rows (pure: rows in, rows out).

One row per ledger line of each run, so a FinOps dashboard that reads FOCUS holds the forecast
beside the actual bill and slices it the same way (service category, pricing unit, the
``trainbill-run`` tag). What marks a row as a forecast rather than a charge:
``x_TrainbillForecast`` (``forecast``), plus ``x_TrainbillRunId``, ``x_TrainbillBasis`` and
``x_TrainbillCategory`` (FOCUS reserves the ``x_`` prefix for such extra columns).

Money columns (BilledCost, EffectiveCost, ListCost, ContractedCost) all hold the line's
forecast cost: a forecast has no invoice, negotiated rate or amortisation of its own, and a
dashboard sums one column. The charge period is the run's planned wall-clock from its run
date; the billing period the calendar month it starts in. ``InvoiceId`` is null: a forecast
has no invoice (docs/how-to/runs.md says what focus-validator 2.2.1 makes of that).
``ServiceName`` is the ledger category and the FOCUS service category ("checkpoint /
Storage"), so that each service name has one ``ServiceSubcategory``, the "Other (…)" one of
its category (a forecast line is not one provider service), and units are written in FOCUS's
unit format (``instance-hour`` → ``Instance-Hours``, ``1000 requests`` → ``1000 Requests``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from typing import Any

__all__ = ["COLUMNS", "focus_rows", "focus_unit"]

COLUMNS: tuple[str, ...] = (
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargeFrequency",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ContractedCost",
    "EffectiveCost",
    "InvoiceId",
    "InvoiceIssuerName",
    "ListCost",
    "PricingQuantity",
    "PricingUnit",
    "ProviderName",
    "PublisherName",
    "ServiceCategory",
    "ServiceName",
    "ServiceSubcategory",
    "Tags",
    "x_TrainbillForecast",
    "x_TrainbillRunId",
    "x_TrainbillCategory",
    "x_TrainbillBasis",
)

#: FOCUS ProviderName of each cloud, as the providers' own FOCUS exports write it.
_PROVIDER = {"aws": "AWS", "gcp": "Google Cloud", "azure": "Microsoft"}
_ACCOUNT = "trainbill"


#: ``[count ]unit[-time]`` of the ledger's units (``GB-month``, ``1000 requests``, ``hour``).
_UNIT = re.compile(r"^(\d+ )?([A-Za-z][A-Za-z0-9 ]*?)(?:-(hour|day|month|year))?$")
_TIMES = {"hour": "Hours", "day": "Days", "month": "Months", "year": "Years"}
#: FOCUS's one subcategory for lines that are no particular provider service.
_SUBCATEGORY = {
    "Compute": "Virtual Machines",
    "AI and Machine Learning": "Other (AI and Machine Learning)",
}


def focus_unit(unit: str) -> str:
    """A ledger unit in FOCUS Unit Format: words capitalised, a time suffix plural
    (``instance-hour`` → ``Instance-Hours``); ``hour`` alone → ``Hours``; anything else that
    does not fit → ``Units``."""
    m = _UNIT.match(unit.strip())
    if m is None:
        return "Units"
    count, head, time = m.group(1) or "", m.group(2), m.group(3)
    if head in _TIMES:
        return count + _TIMES[head]
    words = " ".join(w[:1].upper() + w[1:] for w in head.split())
    if words.upper() == words or any(c.isupper() for c in head[1:]):
        words = head  # GB, IOPS, MiBps: as written
    return f"{count}{words}-{_TIMES[time]}" if time else f"{count}{words}"


def _ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _month(day: date) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, 1)  # noqa: DTZ001 - UTC by convention (``_ts``)
    end = datetime(day.year + (day.month == 12), day.month % 12 + 1, 1)  # noqa: DTZ001
    return start, end


def focus_rows(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """FOCUS rows of ``runs``: each a mapping with ``id``, ``provider``, ``run_date``
    (``YYYY-MM-DD``), ``wall_hours`` and ``lines`` (category, item, quantity, unit, cost_usd,
    basis, service_category)."""
    out: list[dict[str, Any]] = []
    for run in runs:
        start = datetime.fromisoformat(run["run_date"])
        end = start + timedelta(hours=max(float(run["wall_hours"]), 1.0 / 60))
        period = _month(start.date())
        provider = _PROVIDER.get(run["provider"], run["provider"])
        tags = json.dumps({"trainbill-run": run["id"]})
        for line in run["lines"]:
            cost = round(float(line["cost_usd"]), 10)
            out.append(
                {
                    "BilledCost": cost,
                    "BillingAccountId": _ACCOUNT,
                    "BillingAccountName": "trainbill forecasts",
                    "BillingCurrency": "USD",
                    "BillingPeriodEnd": _ts(period[1]),
                    "BillingPeriodStart": _ts(period[0]),
                    "ChargeCategory": "Usage",
                    "ChargeClass": None,
                    "ChargeDescription": line["item"],
                    "ChargeFrequency": "Usage-Based",
                    "ChargePeriodEnd": _ts(end),
                    "ChargePeriodStart": _ts(start),
                    "ContractedCost": cost,
                    "EffectiveCost": cost,
                    "InvoiceId": None,
                    "InvoiceIssuerName": provider,
                    "ListCost": cost,
                    "PricingQuantity": round(float(line["quantity"]), 10),
                    "PricingUnit": focus_unit(line["unit"] or ""),
                    "ProviderName": provider,
                    "PublisherName": provider,
                    "ServiceCategory": line["service_category"],
                    "ServiceName": f"{line['category']} / {line['service_category']}",
                    "ServiceSubcategory": _SUBCATEGORY.get(
                        line["service_category"], f"Other ({line['service_category']})"
                    ),
                    "Tags": tags,
                    "x_TrainbillForecast": "forecast",
                    "x_TrainbillRunId": run["id"],
                    "x_TrainbillCategory": line["category"],
                    "x_TrainbillBasis": line["basis"],
                }
            )
    return out
