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
