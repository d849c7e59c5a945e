"""The endpoints, one router per concern: meta, forecast, charts, risk (simulate, optimize),
catalog, and plan files (TOML in and out, the HTML report).

Each route is a thin shell over the library, like a CLI command: the plan goes through
``Pricing`` (the spec's validation and this server's caps), the answer is the library's own
JSON (``trainbill forecast --json``, ``optimize --json``) or its report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import ValidationError

from trainbill import __version__
from trainbill.catalog import OPTIONS, PROVIDERS, PricePoint
from trainbill.errors import InfeasibleError, SpecError
from trainbill.forecasting import Step
from trainbill.ledger import CATEGORIES
from trainbill.report import render_html
from trainbill.report.charts import headline_waterfall_svg, waterfall_steps, waterfall_svg
from trainbill.report.exports import ledger_csv, ledger_xlsx
from trainbill.report.format import category_name
from trainbill.spec import Plan, plan_json_schema, plan_to_toml, read_plan_toml
from trainbill.usecases.calibrations import parse_calibration_texts
from trainbill.usecases.optimize import SearchSpace, optimize_plan
from trainbill.usecases.price import price_plan, size_plan
from trainbill.usecases.report import ledger_of, report_data
from trainbill.usecases.simulate import simulate_plan
from trainbill.web.limits import Limits
from trainbill.web.models import (
    CalibratedForecastRequest,
    OptimizeRequest,
    OptimizeSpace,
    PlanBody,
    PlanTomlRequest,
    PlanWithCalibrations,
    SimulateRequest,
    WaterfallRequest,
)
from trainbill.web.plans import Pricing, check_forecast, clean

__all__ = ["CSP", "routers"]

#: The page's policy: its own script and style only; SVG charts inline; nothing from elsewhere.
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:"
)
#: The downloaded report has no script at all (``trainbill.report``: style and SVG inline).
_REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _page() -> str:
    return (
        resources.files("trainbill.web").joinpath("static/index.html").read_text(encoding="utf-8")
    )


# --- meta ------------------------------------------------------------------------------------


def meta_routes(p: Pricing) -> APIRouter:
    """The page, liveness and the plan schema."""
    r = APIRouter()

    @r.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index() -> HTMLResponse:
        return HTMLResponse(_page(), headers={"Content-Security-Policy": CSP})

    @r.get("/healthz", tags=["meta"])
    async def healthz() -> dict[str, Any]:  # async: answers on the event loop, never queued
        """Liveness: the app is up and its catalog loaded."""
        return {"status": "ok", "version": __version__, "catalog": p.catalog.version}

    @r.get("/v1/schema/plan", tags=["meta"])
    def plan_schema() -> dict[str, Any]:
        """JSON Schema of a plan (the request body of /v1/forecast)."""
        return plan_json_schema()

    return r


# --- forecast --------------------------------------------------------------------------------


def forecast_routes(p: Pricing) -> APIRouter:
    """The real bill (the CLI's JSON) and the node-count sweep around it."""
    r = APIRouter(tags=["forecast"])

    @r.post("/v1/forecast")
    def post_forecast(body: PlanBody) -> JSONResponse:
        """Itemized real bill and quote: the JSON of ``trainbill forecast --json`` (a plan
        answered before is answered again by ``web._answers``, in front of the app)."""
        plan = p.plan(body)
        priced = price_plan(
            plan, p.catalog, today=p.today,
            check=lambda fc: check_forecast(plan, fc.as_dict(), limits=p.limits, prefix=""),
        )  # fmt: skip
        # The budget and the ranked actions, as ``trainbill forecast --json`` prints them.
        return JSONResponse(clean(priced.as_dict()))

    @r.post("/v1/forecast/calibrated")
    def post_forecast_calibrated(req: CalibratedForecastRequest) -> JSONResponse:
        """The real bill with calibrations applied: the JSON of ``trainbill forecast
        --calibration FILE... --json`` (a profile's measured MFU sets the compute hours, bills'
        fitted rates price the overheads; the budget is simulated with those rates)."""
        plan = p.plan(req.plan, prefix="plan")
        cals = [cal for _, cal in parse_calibration_texts(req.calibrations)]
        priced = price_plan(
            plan, p.catalog, cals, today=p.today,
            check=lambda fc: check_forecast(plan, fc.as_dict(), limits=p.limits, prefix="plan."),
        )  # fmt: skip
        return JSONResponse(clean(priced.as_dict()))

    @r.post("/v1/sizing")
    def post_sizing(body: PlanBody) -> dict[str, Any]:
        """The plan priced at node counts around its own, and the cost/time Pareto front; the
        body may also be ``{"plan": …, "calibrations": […]}``: every size priced as
        ``/v1/forecast/calibrated`` prices the plan (a profile's measured MFU holds at another
        node count of the same instance)."""
        plan, named = _plan_and_calibrations(p, body)
        sized = size_plan(plan, p.catalog, [cal for _, cal in named], today=p.today)
        front = {pt.nodes for pt in sized.front}
        points, basis = sized.points, sized.basis
        out: dict[str, Any] = clean(
            {
                "basis": basis,
                "points": [
                    {
                        "nodes": pt.nodes,
                        "gpus": pt.gpus,
                        "wall_hours": pt.wall_hours,
                        "total_usd": pt.total_usd,
                        "quote_usd": pt.quote_usd,
                        "current": pt.current,
                        "pareto": pt.nodes in front,
                    }
                    for pt in points
                ],
            }
        )
        return out

    return r


# --- charts ----------------------------------------------------------------------------------


def _category_steps(quote_usd: float, by_category: dict[str, float]) -> tuple[Step, ...]:
    """The quote-and-categories waterfall, each amount checked for its sign and the sum finite."""
    unknown = sorted(set(by_category) - set(CATEGORIES))
    if unknown:
        msg = f"unknown categories {', '.join(unknown)}; allowed: {', '.join(CATEGORIES)}"
        raise SpecError(msg, source="request body", field="by_category")
    for name, amount in by_category.items():
        if (amount > 0) if name == "discount" else (amount < 0):
            sign = "at most 0 (a discount lowers the bill)" if name == "discount" else "at least 0"
            msg = f"must be {sign} (got {amount:g})"
            raise SpecError(msg, source="request body", field=f"by_category.{name}")
    steps = waterfall_steps(quote_usd, {c: by_category.get(c, 0.0) for c in CATEGORIES})
    if not all(math.isfinite(x) for step in steps for x in (step.start, step.end)):
        msg = "quote_usd and by_category add up to more than a float can hold; send dollar amounts"
        raise SpecError(msg, source="request body", field="by_category")
    return steps


def chart_routes() -> APIRouter:
    """Server-drawn SVG charts, the report's own functions."""
    r = APIRouter(tags=["charts"])

    @r.post("/v1/charts/waterfall", response_class=Response)
    def post_waterfall(req: WaterfallRequest) -> Response:
        """The quote-to-budget waterfall as SVG (the report's chart), from a forecast's numbers."""
        if req.steps is not None:
            # The forecast's own steps, drawn as they are; labels are escaped by the chart.
            rows = tuple(
                Step(label=st.label, start=st.start, end=st.end, total=st.total) for st in req.steps
            )
            svg = headline_waterfall_svg(rows, standalone=True, narrow=req.narrow)
        elif req.quote_usd is None or req.by_category is None:
            msg = "give steps (a forecast's waterfall) or quote_usd and by_category"
            raise SpecError(msg, source="request body", field="steps")
        else:
            svg = waterfall_svg(_category_steps(req.quote_usd, req.by_category), standalone=True)
        return Response(svg, media_type="image/svg+xml")

    return r


# --- risk: simulate and optimize -------------------------------------------------------------


def _search_space(req: OptimizeSpace | None) -> SearchSpace:
    """The request's axes over the planner's defaults (omitted = derived, as on the CLI)."""
    if req is None:
        return SearchSpace()
    given = {k: tuple(v) for k, v in req.model_dump(exclude_none=True).items()}
    return replace(SearchSpace(), **given)


_BINDING_FIELD = {
    "deadline": "deadline_hours",
    "budget": "budget_usd",
    "memory": "plan.cluster.nodes",
}


def _infeasible(exc: InfeasibleError) -> JSONResponse:
    """Nothing meets the constraints: 422 naming the binding one and the shortfall."""
    body = {
        "detail": str(exc),
        "field": _BINDING_FIELD.get(exc.binding or ""),
        "binding": exc.binding,
        "shortfall": exc.shortfall,
    }
    return JSONResponse(clean(body), status_code=422)


def risk_routes(p: Pricing) -> APIRouter:
    """Monte Carlo (``trainbill.simulate``) and the planner (``trainbill.optimize``)."""
    r = APIRouter()

    @r.post("/v1/simulate", tags=["risk"])
    def post_simulate(req: SimulateRequest) -> JSONResponse:
        """Monte Carlo: P50/P90 bill and wall-clock, chance of missing the deadline."""
        plan = p.checked(req.plan, prefix="plan")
        cals = [cal for _, cal in parse_calibration_texts(req.calibrations)]
        # As ``trainbill simulate --calibration``: every trial priced on the calibrated catalog
        # with the measured MFU.
        done = simulate_plan(plan, p.catalog, cals, trials=req.trials, seed=req.seed, today=p.today)
        s = done.summary()
        out: dict[str, Any] = {
            "trials": s.trials, "p50_usd": s.p50_usd, "p90_usd": s.p90_usd,
            "p50_hours": s.p50_hours, "p90_hours": s.p90_hours,
            "deadline_hours": s.deadline_hours, "p_miss_deadline": s.p_miss_deadline,
            "source": s.source,
        }  # fmt: skip
        if cals:
            out["cautions"] = [x.text for x in done.cautions]
        return JSONResponse(clean(out))

    @r.post(
        "/v1/optimize",
        tags=["planner"],
        responses={
            422: {
                "description": (
                    "invalid input, search too large, or nothing feasible (`binding` "
                    "names the constraint)"
                )
            }
        },
    )
    def post_optimize(req: OptimizeRequest) -> JSONResponse:
        """Planner: the cheapest plan meeting the deadline and budget; the JSON of ``trainbill
        optimize --json``."""
        plan = p.checked(req.plan, prefix="plan", planner=True)
        named = parse_calibration_texts(
            req.calibrations, profiles_refused_by="the planner (/v1/optimize)"
        )
        try:
            done = optimize_plan(
                plan, p.catalog, [cal for _, cal in named], space=_search_space(req.space),
                objective=req.objective, deadline_hours=req.deadline_hours,
                budget_usd=req.budget_usd, clouds=req.clouds, today=p.today,
                allow_stand_ins=req.allow_stand_ins, max_search_cells=p.limits.max_search_cells,
            )  # fmt: skip
        except InfeasibleError as exc:
            return _infeasible(exc)
        return JSONResponse(clean(done.as_dict()))

    return r


def _report_inputs(
    p: Pricing, body: Mapping[str, Any], what: str, *, checked: bool = False
) -> tuple[Plan, list[Any]]:
    """The plan and the calibrations a report or ledger is priced with (the body as
    ``_plan_and_calibrations``). Bill rates only, as ``trainbill report --calibration``: a
    profile is refused (the report prices other plans too)."""
    if "plan" not in body:
        return (p.checked(body) if checked else p.plan(body)), []
    req = _with_calibrations(body)
    plan = p.checked(req.plan, prefix="plan") if checked else p.plan(req.plan, prefix="plan")
    named = parse_calibration_texts(req.calibrations, profiles_refused_by=what)
    return plan, [cal for _, cal in named]


def _with_calibrations(body: Mapping[str, Any]) -> PlanWithCalibrations:
    """``{"plan", "calibrations"}`` checked by the request model (keys, types, count), answered
    as any body's 422."""
    try:
        return PlanWithCalibrations.model_validate(body)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None


def _plan_and_calibrations(
    p: Pricing, body: Mapping[str, Any], *, checked: bool = True
) -> tuple[Plan, list[tuple[str, Any]]]:
    """The plan and its named calibrations from a bare plan or ``{"plan", "calibrations"}``
    (no plan has a ``plan`` section, since unknown sections are refused, so the two cannot be
    confused); ``checked`` also applies the web's size limits."""
    if "plan" not in body:
        return (p.checked(body) if checked else p.plan(body)), []
    req = _with_calibrations(body)
    plan = p.checked(req.plan, prefix="plan") if checked else p.plan(req.plan, prefix="plan")
    return plan, parse_calibration_texts(req.calibrations)


# --- catalog ---------------------------------------------------------------------------------


def _check_price_query(
    limit: int, provider: str | None, option: str | None, limits: Limits
) -> None:
    if limit > limits.max_price_rows:
        msg = f"must be at most {limits.max_price_rows:,} (got {limit})"
        raise SpecError(msg, source="query", field="limit")
    for field, value, allowed in (("provider", provider, PROVIDERS), ("option", option, OPTIONS)):
        if value is not None and value not in allowed:
            msg = f"{value!r} is not allowed; allowed values: {', '.join(allowed)}"
            raise SpecError(msg, source="query", field=field)


def _price_row(pt: PricePoint) -> dict[str, Any]:
    return {
        "provider": pt.provider,
        "region": pt.region,
        "item": pt.item,
        "option": pt.option,
        "unit": pt.unit,
        "usd": pt.usd,
        "effective_from": pt.effective_from.isoformat(),
        "source": pt.source,
    }


def catalog_routes(p: Pricing) -> APIRouter:
    """Price points and the instance list (the page's picker)."""
    r = APIRouter(tags=["catalog"])

    @r.get("/v1/prices")
    def get_prices(
        provider: Annotated[str | None, Query(description=f"one of {', '.join(PROVIDERS)}")] = None,
        item: Annotated[str | None, Query(description="e.g. p5.48xlarge")] = None,
        option: Annotated[str | None, Query(description=f"one of {', '.join(OPTIONS)}")] = None,
        region: Annotated[str | None, Query()] = None,
        limit: Annotated[int, Query(ge=1, description="rows to return (capped)")] = 200,
    ) -> dict[str, Any]:
        """Catalog price points (every dated version, with its source)."""
        _check_price_query(limit, provider, option, p.limits)
        wanted = {"provider": provider, "item": item, "option": option, "region": region}
        rows = [
            pt
            for pt in p.catalog.prices
            if all(v is None or getattr(pt, k) == v for k, v in wanted.items())
        ]
        cat = p.catalog
        return {
            "catalog": {"version": cat.version, "snapshot": cat.snapshot.isoformat()},
            "count": len(rows),
            "truncated": len(rows) > limit,
            "prices": [_price_row(pt) for pt in rows[:limit]],
        }

    @r.get("/v1/instances")
    def get_instances() -> dict[str, Any]:
        """Instance types the catalog can price, with their accelerators (the page's picker)."""
        return {
            # Ledger categories in the report's words, so the page's ledger reads the same.
            "category_names": {c: category_name(c) for c in CATEGORIES},
            "instances": [
                {"provider": i.provider, "instance": i.instance, "accelerator": i.accelerator,
                 "accelerator_count": i.accelerator_count, "stand_in": i.stand_in}
                for i in p.catalog.instances.values()
            ]
        }  # fmt: skip

    return r


# --- plan files: TOML in and out, the report ---------------------------------------------------

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _attachment(name: str, ext: str) -> dict[str, str]:
    """A download header whose file name cannot carry a quote, a path or a header break."""
    stem = _SAFE_NAME.sub("-", name).strip(".-")[:80] or "plan"
    return {"Content-Disposition": f'attachment; filename="{stem}.{ext}"'}


def file_routes(p: Pricing) -> APIRouter:
    """The page's upload and downloads: what a file holds is what ``trainbill forecast`` reads."""
    r = APIRouter(tags=["files"])

    @r.post("/v1/plan/toml", response_class=Response)
    def post_plan_toml(body: PlanBody) -> Response:
        """The plan as a TOML file that ``trainbill forecast FILE`` reads back to the same plan."""
        plan = p.plan(body)
        text = plan_to_toml(
            plan, header=f"trainbill plan, written by the calculator ({__version__})"
        )
        return Response(
            text, media_type="application/toml", headers=_attachment(plan.run.name, "toml")
        )

    @r.post("/v1/plan/parse")
    def post_plan_parse(req: PlanTomlRequest) -> JSONResponse:
        """A plan TOML file's text, read and validated as a file is: the plan as given (dates as
        ISO text), or 422 naming the field."""
        name = _SAFE_NAME.sub("-", req.filename)[:80] or "uploaded plan"
        data = read_plan_toml(req.toml, source=name)
        p.plan(data, source=name)
        return JSONResponse({"plan": clean(data)})

    @r.post("/v1/report", response_class=HTMLResponse)
    def post_report(body: PlanBody) -> HTMLResponse:
        """The HTML report of ``trainbill report`` for this plan, as a download; the body may
        also be ``{"plan": …, "calibrations": […]}`` (bill rates, as ``--calibration``)."""
        plan, cals = _report_inputs(p, body, "the report (/v1/report)", checked=True)
        html = render_html(report_data(plan, p.catalog, cals, today=p.today))
        headers = {**_attachment(plan.run.name, "html"), "Content-Security-Policy": _REPORT_CSP}
        return HTMLResponse(html, headers=headers)

    @r.post("/v1/ledger.csv", response_class=Response)
    def post_ledger_csv(body: PlanBody) -> Response:
        """The forecast's ledger as the CSV that ``trainbill report --ledger-csv`` writes (the
        body as ``/v1/report``'s)."""
        plan, cals = _report_inputs(p, body, "the ledger (/v1/ledger.csv)")
        data = ledger_csv(ledger_of(plan, p.catalog, cals, today=p.today))
        return Response(
            data, media_type="text/csv; charset=utf-8", headers=_attachment(plan.run.name, "csv")
        )

    @r.post("/v1/ledger.xlsx", response_class=Response)
    def post_ledger_xlsx(body: PlanBody) -> Response:
        """The same ledger as an XLSX workbook (numbers as numbers, the total a formula)."""
        plan, cals = _report_inputs(p, body, "the ledger (/v1/ledger.xlsx)")
        data = ledger_xlsx(ledger_of(plan, p.catalog, cals, today=p.today))
        return Response(data, media_type=_XLSX, headers=_attachment(plan.run.name, "xlsx"))

    return r


def routers(p: Pricing) -> tuple[APIRouter, ...]:
    """Every router of the app, in the order the API docs list them."""
    return (
        meta_routes(p),
        forecast_routes(p),
        chart_routes(),
        risk_routes(p),
        catalog_routes(p),
        file_routes(p),
    )
