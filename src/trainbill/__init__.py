"""trainbill: the real bill of training a model on a cloud GPU cluster, before the invoice lands.

The public API is re-exported here. Importing ``trainbill`` loads only the light core (NumPy,
pydantic); optional engines (DuckDB, PyTorch, FastAPI) load on first use, so
``trainbill.profile_step`` is resolved lazily.
"""

from __future__ import annotations

from typing import Any

from trainbill.catalog import Catalog, load_catalog
from trainbill.check import QuoteAudit, audit_quote
from trainbill.errors import (
    BillError,
    CatalogError,
    InfeasibleError,
    PriceNotFoundError,
    SimulationError,
    SpecError,
    TrainbillError,
)
from trainbill.forecast import Forecast, forecast, forecast_usage
from trainbill.ledger import CATEGORIES, Ledger, LineItem
from trainbill.spec import Plan, load_plan, plan_from_dict
from trainbill.usage import Usage, usage_for

__all__ = [
    "CATEGORIES",
    "BillError",
    "Catalog",
    "CatalogError",
    "Forecast",
    "InfeasibleError",
    "Ledger",
    "LineItem",
    "Plan",
    "PriceNotFoundError",
    "QuoteAudit",
    "SimulationError",
    "SpecError",
    "TrainbillError",
    "Usage",
    "__version__",
    "audit_quote",
    "forecast",
    "forecast_usage",
    "load_catalog",
    "load_plan",
    "plan_from_dict",
    "profile_step",
    "usage_for",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Resolve heavy optional names on first use (PyTorch only loads for profiling)."""
    if name == "profile_step":
        from trainbill.profile import profile_step

        return profile_step
    msg = f"module 'trainbill' has no attribute {name!r}"
    raise AttributeError(msg)
