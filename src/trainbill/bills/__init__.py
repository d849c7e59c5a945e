"""Bills: read FOCUS and AWS CUR 2.0 exports, classify them into the ledger's categories.

``read_bill`` reads FOCUS 1.0-1.2 and CUR 2.0 (CSV, CSV.gz, Parquet, or a Data Exports folder)
with queries written once in Ibis that run on DuckDB (default) or Spark. ``compare`` holds a
bill against a forecast; ``fit_calibration`` learns overhead factors from past bills.

Importing this package does not import Ibis, DuckDB or PySpark; they load on first use, so
``import trainbill`` stays fast and works without the ``bills`` extra.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Where each public name lives. Loaded on first access (PEP 562): ``trainbill bill summary``
# is benchmarked against a bare DuckDB scan with process start included, and it needs neither
# the calibration writer nor the reconciliation.
_LAZY = {
    "BILL_CATEGORIES": "_classify",
    "PURCHASE_OPTIONS": "_classify",
    "BillCalibration": "calibrate",
    "fit_calibration": "calibrate",
    "read_calibration": "calibrate",
    "write_calibration": "calibrate",
    "Reconciliation": "reconcile",
    "Variance": "reconcile",
    "compare": "reconcile",
    "forecast_by_bill_category": "reconcile",
    "BY_CHOICES": "summary",
    "BillLine": "summary",
    "BillSummary": "summary",
    "BreakdownRow": "summary",
    "read_bill": "summary",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'trainbill.bills' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"trainbill.bills.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
