"""The public API is pinned: removing or renaming a name is a breaking change."""

from __future__ import annotations

import trainbill


def test_public_names() -> None:
    """``trainbill.__all__`` lists exactly the supported names, and each resolves."""
    expected = {
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
    }
    assert set(trainbill.__all__) == expected
    for name in expected - {"profile_step"}:
        assert getattr(trainbill, name) is not None


def test_forecast_is_the_function_once_its_module_is_loaded() -> None:
    """``trainbill.forecast`` is the function, and its module has a name of its own
    (``trainbill.forecasting``): importing the module (as every front end does) binds
    ``trainbill.forecasting`` on the package, never a module over the function's name."""
    import importlib

    module = importlib.import_module("trainbill.forecasting")
    assert trainbill.forecast is module.forecast
    assert callable(trainbill.forecast)
    assert trainbill.forecasting is module
