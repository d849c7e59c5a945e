"""trainbill: the real bill of training a model on a cloud GPU cluster, before the invoice lands.

The public API is re-exported here, lazily: importing ``trainbill`` loads nothing but this file;
each name imports its module on first use (optional engines such as DuckDB, PyTorch and
FastAPI only load when a command needs them).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from trainbill.profile import profile_step
    from trainbill.spec import Plan, load_plan, plan_from_dict
    from trainbill.usage import Usage, usage_for

# Where each public name lives. Resolved on first use (PEP 562) so that a command which needs
# none of them (``trainbill bill summary`` imports only the bills package) does not pay for
# the plan schema, the catalog and every cost driver at start-up: 0.15 s of a 0.8 s run.
_WHERE = {
    "Catalog": "trainbill.catalog",
    "load_catalog": "trainbill.catalog",
    "QuoteAudit": "trainbill.check",
    "audit_quote": "trainbill.check",
    "BillError": "trainbill.errors",
    "CatalogError": "trainbill.errors",
    "InfeasibleError": "trainbill.errors",
    "PriceNotFoundError": "trainbill.errors",
    "SimulationError": "trainbill.errors",
    "SpecError": "trainbill.errors",
    "TrainbillError": "trainbill.errors",
    "Forecast": "trainbill.forecast",
    "forecast": "trainbill.forecast",
    "forecast_usage": "trainbill.forecast",
    "CATEGORIES": "trainbill.ledger",
    "Ledger": "trainbill.ledger",
    "LineItem": "trainbill.ledger",
    "profile_step": "trainbill.profile",
    "Plan": "trainbill.spec",
    "load_plan": "trainbill.spec",
    "plan_from_dict": "trainbill.spec",
    "Usage": "trainbill.usage",
    "usage_for": "trainbill.usage",
}

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
    """Import a public name's module on first use and cache the name here."""
    module = _WHERE.get(name)
    if module is None:
        msg = f"module 'trainbill' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """``trainbill.forecast`` names both a submodule and the public function.

    The import system binds a submodule onto its package when the submodule first loads; with
    lazy names that can happen after ``import trainbill`` (any ``from trainbill.forecast import
    ...``), which would turn ``trainbill.forecast(plan)`` into calling a module. Binding the
    function instead keeps the eager-import behaviour users had.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "forecast" and isinstance(value, types.ModuleType):
            value = value.forecast
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
