"""Report data: everything the HTML report and the ledger exports show, in numbers
(``trainbill report``, ``POST /v1/report``, ``/v1/ledger.csv``, ``/v1/ledger.xlsx``).

Bill rates only: the report prices other plans (the planner's, the right-sizing's) that have no
measured MFU, so the front ends refuse a profile calibration; the rates go on the catalog and
reach the forecast, the planner and the simulation alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from trainbill.analysis import Analysis as ReportData
from trainbill.analysis import analyse
from trainbill.calibration import calibrate_catalog
from trainbill.catalog import Catalog
from trainbill.forecasting import CautionKind, Forecast, forecast
from trainbill.spec import Plan

__all__ = ["CautionKind", "ReportData", "ledger_of", "report_data"]


def report_data(
    plan: Plan,
    catalog: Catalog,
    calibrations: Sequence[Any] = (),
    *,
    trials: int = 2000,
    seed: int = 0,
    today: date | None = None,
) -> ReportData:
    """The report's numbers: the forecast and its outlook, the planner's right-sizing and
    Pareto front (or the node-count sweep), the Monte Carlo (``trials`` 0: none)."""
    return analyse(
        plan, calibrate_catalog(catalog, calibrations), today=today, trials=trials, seed=seed,
        simulate=trials > 0,
    )  # fmt: skip


def ledger_of(
    plan: Plan, catalog: Catalog, calibrations: Sequence[Any] = (), *, today: date | None = None
) -> Forecast:
    """The forecast whose ledger the CSV and XLSX exports write (bill rates applied)."""
    return forecast(plan, calibrate_catalog(catalog, calibrations), today=today)
