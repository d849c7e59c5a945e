"""Bills: read FOCUS and AWS CUR 2.0 exports, classify them into the ledger's categories.

``read_bill`` reads FOCUS 1.0-1.2 and CUR 2.0 (CSV, CSV.gz, Parquet, or a Data Exports folder)
with queries written once in Ibis that run on DuckDB (default) or Spark. ``compare`` holds a
bill against a forecast; ``fit_calibration`` learns overhead factors from past bills.

Importing this package does not import Ibis, DuckDB or PySpark; they load on first use, so
``import trainbill`` stays fast and works without the ``bills`` extra.
"""

from __future__ import annotations

from trainbill.bills._classify import BILL_CATEGORIES, PURCHASE_OPTIONS
from trainbill.bills.calibrate import (
    BillCalibration,
    fit_calibration,
    read_calibration,
    write_calibration,
)
from trainbill.bills.reconcile import (
    Reconciliation,
    Variance,
    compare,
    forecast_by_bill_category,
)
from trainbill.bills.summary import BY_CHOICES, BillLine, BillSummary, BreakdownRow, read_bill

__all__ = [
    "BILL_CATEGORIES",
    "BY_CHOICES",
    "PURCHASE_OPTIONS",
    "BillCalibration",
    "BillLine",
    "BillSummary",
    "BreakdownRow",
    "Reconciliation",
    "Variance",
    "compare",
    "fit_calibration",
    "forecast_by_bill_category",
    "read_bill",
    "read_calibration",
    "write_calibration",
]
