"""Price a plan: the forecast (calibrations applied once) and, beside it, its outlook.

``trainbill forecast``, ``POST /v1/forecast`` and ``POST /v1/forecast/calibrated`` are this
one call; so is the node-count sweep (``size_plan``, ``POST /v1/sizing``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import (
    RANGE_LABEL,
    Caution,
    CautionKind,
    Forecast,
    forecast,
    versus_planned,
    versus_quote,
)
from trainbill.headline import Advised, Outlook, outlook_of, waterfall
from trainbill.sizing import SizingPoint, pareto_front, right_sizing
from trainbill.spec import Plan

__all__ = [
    "RANGE_LABEL",
    "Advised",
    "Caution",
    "CautionKind",
    "Forecast",
    "Outlook",
    "PricedPlan",
    "Sizing",
    "forecast_plan",
    "price_plan",
    "size_plan",
    "versus_planned",
    "versus_quote",
    "waterfall",
]

#: The result of ``price_plan``: the forecast and its outlook side by side.
PricedPlan = Advised


def forecast_plan(
    plan: Plan,
    catalog: Catalog,
    calibrations: Sequence[Any] = (),
    *,
    today: date | None = None,
    source: str | None = None,
) -> Forecast:
    """The plan's forecast with every calibration applied: a profile's measured MFU to the
    time model, bills' overhead rates to the catalog the drivers price with.

    ``source`` names where the plan came from (its file, "command line") in a rule error that
    names only the field (a date before the instance was sold).
    """
    try:
        if calibrations:
            from trainbill.calibration import forecast_calibrated

            return forecast_calibrated(plan, catalog, calibrations, today=today)
        return forecast(plan, catalog, today=today)
    except SpecError as exc:
        if exc.source is not None or source is None:
            raise
        bare = str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)
        raise SpecError(bare, source=source, field=exc.field) from None


def price_plan(
    plan: Plan,
    catalog: Catalog,
    calibrations: Sequence[Any] = (),
    *,
    outlook: bool = True,
    attention_sparsity: float | None = None,
    history: bool = False,
    db: str | None = None,
    check: Callable[[Forecast], None] | None = None,
    today: date | None = None,
    source: str | None = None,
) -> PricedPlan:
    """Price the plan: the forecast, then (``outlook``) its P90 budget and ranked actions
    priced on the same calibrated catalog with the same calibrations.

    ``attention_sparsity`` applies the sparse-attention what-if to the plan first (its note
    becomes a forecast caution); ``history`` applies the run registry's team factors (``db``)
    to the forecast's lines; ``check`` is a front end's own refusal of the forecast (the web
    app's size limits), run before the outlook's many pricings.
    """
    if attention_sparsity is not None:
        from trainbill.whatif import apply_attention_sparsity

        plan, _ = apply_attention_sparsity(
            plan, catalog, attention_sparsity, source=source or "plan"
        )
    fc = forecast_plan(plan, catalog, calibrations, today=today, source=source)
    if check is not None:
        check(fc)
    found: Outlook | None = None
    if outlook:
        from trainbill.calibration import calibrate_catalog

        priced_on = calibrate_catalog(catalog, calibrations)
        found = outlook_of(plan, fc, priced_on, today=today, calibrations=calibrations)
    if history:
        from trainbill.runs.api import forecast_history

        fc = forecast_history(fc, catalog, db=db)
    return Advised(forecast=fc, outlook=found)


@record
class Sizing:
    """The plan priced at node counts around its own, how the hours were set, and the
    cost/time Pareto front of those points."""

    points: tuple[SizingPoint, ...]
    basis: str
    front: tuple[SizingPoint, ...]


def size_plan(
    plan: Plan, catalog: Catalog, calibrations: Sequence[Any] = (), *, today: date | None = None
) -> Sizing:
    """The node-count sweep, every size priced as ``forecast_plan`` prices the plan (a
    profile's measured MFU holds at another node count of the same instance)."""

    def priced(variant: Plan) -> Forecast:
        return forecast_plan(variant, catalog, calibrations, today=today)

    points, basis = right_sizing(plan, catalog, today=today, price=priced if calibrations else None)
    return Sizing(points=points, basis=basis, front=pareto_front(points))
