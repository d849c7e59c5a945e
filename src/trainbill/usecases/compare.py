"""Compare: two plans side by side (``trainbill diff``), the same job on each orchestrator
(``trainbill compare-orchestrators``), and a plan's forecast against a real bill
(``trainbill bill compare``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from trainbill.catalog import Catalog
from trainbill.diff import ForecastDiff, diff_forecasts
from trainbill.spec import Plan
from trainbill.usecases.price import forecast_plan
from trainbill.whatif import OrchestratorRow, cheapest_priced, compare_orchestrators

if TYPE_CHECKING:
    from trainbill.bills import Reconciliation
    from trainbill.bills.filters import BillFilter

__all__ = [
    "ForecastDiff",
    "OrchestratorRow",
    "bill_variance",
    "cheapest_priced",
    "compare_orchestrators",
    "diff_plans",
]


def diff_plans(
    base: Plan,
    new: Plan,
    catalog: Catalog,
    *,
    base_name: str,
    new_name: str,
    today: date | None = None,
) -> ForecastDiff:
    """Both plans priced and compared: headline, category and line deltas, and the inputs that
    moved them; a rule error names the plan (``base_name``/``new_name``) it is in."""
    base_fc = forecast_plan(base, catalog, today=today, source=base_name)
    new_fc = forecast_plan(new, catalog, today=today, source=new_name)
    return diff_forecasts(base_fc, new_fc, base, new, base_name=base_name, new_name=new_name)


def bill_variance(
    plan: Plan,
    catalog: Catalog,
    files: Sequence[str | Path],
    *,
    engine: str,
    where: BillFilter | None,
    basis: str,
) -> Reconciliation:
    """Forecast against actual by bill category: the variance and the bill lines behind it
    (``where`` is the bill filter, refused before any pricing by the front end's parse)."""
    from trainbill.bills import compare, forecast_by_bill_category, read_bill

    fc = forecast_plan(plan, catalog)
    summary = read_bill(files, engine=engine, where=where)
    return compare(
        forecast_by_bill_category(fc.ledger.lines),
        summary,
        basis=basis,
        provider=plan.cluster.provider,
    )
