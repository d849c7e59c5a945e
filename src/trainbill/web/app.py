"""The HTTP API and the single-page calculator.

The API is a thin shell over the library, like the CLI: a JSON body goes through the same
``plan_from_dict`` as a TOML file, so the schema and the error messages are the same, and
``POST /v1/forecast`` answers exactly the JSON of ``trainbill forecast --json`` (and
``POST /v1/optimize`` that of ``trainbill optimize --json``). Charts come
from ``trainbill.report.charts`` (server-drawn SVG), the same functions the HTML report uses.

Guard rails, because a calculator on a shared host is a public endpoint in all but name:
``web._guard`` serves only allowed Host names (DNS rebinding), reads every body itself (413
over ``Limits.max_body_bytes`` by header or counted chunks, 408 when it stalls, 400 when it is
not UTF-8) and admits heavy and light requests on separate bounded capacity (503 with
``Retry-After`` when full; ``/healthz`` is never queued); trial counts and search sizes are
capped (422 above the cap); invalid plans get 422 with the field path; ``trainbill serve``
binds to 127.0.0.1 unless told otherwise.

Careless input is refused rather than answered: a boolean where a number belongs (``true`` is
not 1), a non-finite number (``NaN``, ``Infinity``, ``1e400``, ``"inf"``), node and GPU
counts above ``Limits.max_nodes``/``max_gpus``, a plan whose wall-clock exceeds
``Limits.max_wall_hours`` or whose bill is not a finite number, and unknown or repeated query
parameters all get 422 naming the field. No endpoint answers 200 with ``null`` in place of a
cost.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import Body, Depends, FastAPI, Query, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from trainbill import __version__
from trainbill.catalog import OPTIONS, PROVIDERS, Catalog, load_catalog
from trainbill.errors import InfeasibleError, SpecError, TrainbillError
from trainbill.forecast import Step, forecast
from trainbill.headline import advise
from trainbill.ledger import CATEGORIES
from trainbill.optimize import SearchSpace, optimize
from trainbill.report import pareto_front, right_sizing
from trainbill.report._build import run_simulation
from trainbill.report.charts import headline_waterfall_svg, waterfall_steps, waterfall_svg
from trainbill.spec import Plan, plan_from_dict
from trainbill.web._guard import LOCAL_HOSTS, Guard, GuardConfig

__all__ = ["LIMITS", "Limits", "OptimizeRequest", "OptimizeSpace", "create_app"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Caps that keep one request from occupying the server."""

    max_body_bytes: int = 64 * 1024
    max_trials: int = 20_000
    #: Planner work grows with instance types × node counts (each pair costs a few exact
    #: ``usage_for`` calls); the rest of the grid is vectorized. The default search (every
    #: catalog instance, 14 node counts) is 25 × 14 = 350 pairs, about a second.
    max_search_cells: int = 512
    max_axis_values: int = 64
    max_price_rows: int = 1000
    #: A plan's ``cluster.nodes`` (and each extra group's ``count``), as for ``space.nodes``.
    max_nodes: int = 100_000
    max_gpus: int = 1_000_000
    #: A forecast wall-clock above this (about 114 years) is a typo, not a plan; past it the
    #: Monte Carlo and the planner's fits stop being computable.
    max_wall_hours: float = 1e6
    #: A body not fully received within this many seconds is answered 408 (300 clients that
    #: opened a body and never finished it were all held open).
    body_timeout_s: float = 10.0
    #: Simulate/optimize/sizing running at once, and waiting behind them; past both, 503. Two
    #: running matches the two cores of the reference machine: more only shares them.
    heavy_workers: int = 2
    heavy_queue: int = 8
    #: Every other /v1 request (forecast, charts, prices), on capacity of its own.
    light_workers: int = 8
    light_queue: int = 64
    #: What a 503 tells the client to wait, in seconds (about one heavy request's time).
    retry_after_s: int = 2


LIMITS = Limits()

_PLAN_EXAMPLE: dict[str, Any] = {
    "run": {"name": "seed-70b-finetune", "hours": 72},
    "model": {"params": 70e9},
    "cluster": {"provider": "aws", "region": "us-east-1", "instance": "p5.48xlarge", "nodes": 32},
    "purchase": {"spot_fraction": 0.5, "savings_plan": "none"},
    "prices": {"as_of": "2025-05-01"},
    "checkpoint": {"interval_hours": 2},
}

PlanBody = Annotated[
    dict[str, Any],
    Body(
        description="A plan: the same sections and keys as a plan TOML file (schema: GET /v1/schema/plan).",
        examples=[_PLAN_EXAMPLE],
    ),
]


def _no_boolean(value: Any) -> Any:
    """JSON ``true`` is not the number 1 (pydantic's lax mode reads it so)."""
    if isinstance(value, bool):
        msg = f"expected a number, not the boolean {str(value).lower()}"
        raise ValueError(msg)  # noqa: TRY004 - pydantic turns ValueError into a 422 for the field
    return value


#: A JSON integer (or its text); never a boolean.
_Int = Annotated[int, BeforeValidator(_no_boolean)]
#: A finite JSON number (or its text); never a boolean, NaN or ±Infinity.
_Float = Annotated[float, BeforeValidator(_no_boolean), Field(allow_inf_nan=False)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SimulateRequest(_Request):
    """A plan and how many Monte Carlo trials to run."""

    plan: dict[str, Any]
    trials: _Int = Field(default=2000, ge=1, le=LIMITS.max_trials)
    seed: _Int = Field(default=0, ge=0)


_AXIS = LIMITS.max_axis_values


class OptimizeSpace(_Request):
    """The grid to search (``trainbill.optimize.SearchSpace``); omitted axes are derived from the plan."""

    instances: list[str] | None = Field(default=None, max_length=_AXIS)
    nodes: list[Annotated[_Int, Field(ge=1, le=LIMITS.max_nodes)]] | None = Field(
        default=None, max_length=_AXIS
    )
    spot_fractions: list[_Float] | None = Field(default=None, max_length=21)
    savings_plans: list[str] | None = Field(default=None, max_length=3)
    coverages: list[_Float] | None = Field(default=None, max_length=21)
    orchestrators: list[str] | None = Field(default=None, max_length=3)
    checkpoint_intervals_hours: list[_Float] | None = Field(default=None, max_length=24)


class OptimizeRequest(_Request):
    """A plan (the template, always a candidate), the constraints and the search space.

    The same inputs as ``trainbill optimize``: ``deadline_hours`` defaults to the plan's
    ``run.deadline_hours``; ``objective`` "p90" is the CLI's ``--p90``.
    """

    plan: dict[str, Any]
    deadline_hours: _Float | None = None
    budget_usd: _Float | None = None
    objective: Literal["expected", "p90"] = "expected"
    clouds: list[str] | None = Field(default=None, max_length=8)
    space: OptimizeSpace | None = None
    #: The CLI's ``--allow-stand-ins``: also search catalog stand-ins.
    allow_stand_ins: bool = False


class WaterfallStepBody(_Request):
    """One step of a forecast response's ``waterfall`` (``Forecast.waterfall``)."""

    label: str = Field(min_length=1, max_length=200)
    start: _Float
    end: _Float
    total: bool = False
    delta: _Float | None = None


class WaterfallRequest(_Request):
    """What a waterfall needs, from a forecast response: its ``waterfall`` steps (the headline:
    quote → planned → hidden costs → real bill → budget), or the quote and ``by_category``
    (the ledger's categories against the quote)."""

    quote_usd: _Float | None = Field(default=None, ge=0)
    by_category: dict[str, _Float] | None = None
    steps: list[WaterfallStepBody] | None = Field(default=None, min_length=1, max_length=64)


def _clean(x: Any) -> Any:
    """JSON as ``trainbill forecast --json`` writes it: NaN/inf become null, dates ISO strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    if isinstance(x, date):
        return x.isoformat()
    return x


def _plan(body: dict[str, Any], *, limits: Limits, prefix: str = "") -> Plan:
    try:
        plan = plan_from_dict(body, source="request body")
    except SpecError as exc:
        if prefix:
            raise SpecError(
                str(exc).removeprefix("request body: ").removeprefix(f"{exc.field}: "),
                source="request body",
                field=f"{prefix}.{exc.field}" if exc.field else prefix,
            ) from None
        raise
    _check_plan(plan, limits=limits, prefix=f"{prefix}." if prefix else "")
    return plan


def _check_plan(plan: Plan, *, limits: Limits, prefix: str) -> None:
    """This server's own caps on cluster size (``Limits``; the plan schema already refuses
    non-finite numbers and anything past its sanity caps, and a deployment may want less)."""
    c = plan.cluster
    caps = [("cluster.nodes", c.nodes, limits.max_nodes), ("cluster.gpus", c.gpus, limits.max_gpus)]
    caps += [
        (f"cluster.extra_groups.{i}.count", g.count, limits.max_nodes)
        for i, g in enumerate(c.extra_groups)
    ]
    for field, value, cap in caps:
        if value is not None and value > cap:
            msg = f"must be at most {cap:,} (got {value:,})"
            raise SpecError(msg, source="request body", field=f"{prefix}{field}")


def _number(x: Any) -> float:
    """A JSON number as a float; anything else (``None``) as NaN, i.e. not an answer."""
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else math.nan


def _check_forecast(plan: Plan, out: dict[str, Any], *, limits: Limits, prefix: str) -> None:
    """422 instead of a 200 carrying ``null`` costs (overflow) or a centuries-long run."""
    time = out.get("time", {})
    compute, wall = _number(time.get("compute_hours")), _number(time.get("wall_hours"))
    cap = limits.max_wall_hours
    if not (math.isfinite(compute) and compute <= cap):
        if plan.run.hours is not None:
            field, given = "run.hours", f"{plan.run.hours:g} h of training is"
        else:
            field = "model.tokens"
            given = f"{plan.model.tokens:g} tokens of a {plan.model.params:g}-parameter model take {compute:g} h of training,"
        msg = f"{given} over the {cap:,.0f} h (about {cap / 8766:,.0f} years) this API computes"
        raise SpecError(msg, source="request body", field=f"{prefix}{field}")
    if not (math.isfinite(wall) and wall <= cap):
        msg = (
            f"overheads stretch {compute:,.1f} h of training to {wall:g} h of wall-clock, over the {cap:,.0f} h "
            "this API computes; check checkpoint.*, evaluation.* and reliability.* for an outsized value"
        )
        raise SpecError(msg, source="request body", field=prefix.rstrip(".") or "plan")
    bad = [k for k, v in out.get("by_category", {}).items() if not math.isfinite(_number(v))]
    bad = bad or [k for k in ("quote_usd", "total_usd") if not math.isfinite(_number(out.get(k)))]
    if bad:
        msg = f"the bill is not a finite number ({', '.join(bad)} overflow); a value in the plan is far too large"
        raise SpecError(msg, source="request body", field=prefix.rstrip(".") or "plan")


def _page() -> str:
    return (
        resources.files("trainbill.web").joinpath("static/index.html").read_text(encoding="utf-8")
    )


def create_app(
    *,
    catalog: Catalog | None = None,
    today: date | None = None,
    limits: Limits = LIMITS,
    allowed_hosts: Sequence[str] | None = LOCAL_HOSTS,
) -> FastAPI:
    """Build the app. ``catalog`` defaults to the packaged one; ``today`` pins the date (tests).

    ``allowed_hosts``: the Host header names served (DNS-rebinding guard, ``web._guard``);
    localhost by default, None serves any name.
    """
    cat = catalog or load_catalog()
    app = FastAPI(
        title="trainbill",
        version=__version__,
        description="The real bill of training a model on a cloud GPU cluster: forecast, simulate, price lists.",
        dependencies=[Depends(_known_query)],
    )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, StarletteHTTPException) and exc.status_code == 400:
            # FastAPI's "There was an error parsing the body": bytes that are not UTF-8 JSON.
            msg = (
                "body: not parseable as JSON (send UTF-8 JSON with Content-Type: application/json)"
            )
            return JSONResponse({"detail": msg, "field": "body"}, status_code=400)
        return await http_exception_handler(request, exc)  # type: ignore[arg-type]

    @app.exception_handler(OverflowError)
    async def _overflow(_: Request, exc: Exception) -> JSONResponse:
        msg = f"a number in the request is too large to compute with ({exc})"
        return JSONResponse({"detail": msg, "field": None}, status_code=422)

    @app.exception_handler(SpecError)
    async def _spec_error(_: Request, exc: Exception) -> JSONResponse:
        field = exc.field if isinstance(exc, SpecError) else None
        return JSONResponse({"detail": str(exc), "field": field}, status_code=422)

    @app.exception_handler(TrainbillError)
    async def _trainbill_error(_: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(
            {"detail": str(exc), "field": getattr(exc, "field", None)}, status_code=422
        )

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
        errors = exc.errors() if isinstance(exc, RequestValidationError) else []
        first = errors[0] if errors else {}
        loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query")]
        field = "body" if first.get("type") == "json_invalid" else (".".join(loc) or "body")
        message = str(first.get("msg", "invalid request")).removeprefix("Value error, ")
        content_type = request.headers.get("content-type", "")
        if field == "body" and request.method == "POST" and "json" not in content_type:
            message += f" (the body must be JSON sent as Content-Type: application/json, not {content_type or 'none'!r})"
        return JSONResponse({"detail": f"{field}: {message}", "field": field}, status_code=422)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index() -> HTMLResponse:
        return HTMLResponse(_page(), headers={"Content-Security-Policy": _CSP})

    @app.get("/healthz", tags=["meta"])
    async def healthz() -> dict[
        str, Any
    ]:  # async: answers on the event loop, never queued for a thread
        """Liveness: the app is up and its catalog loaded."""
        return {"status": "ok", "version": __version__, "catalog": cat.version}

    @app.get("/v1/schema/plan", tags=["meta"])
    def plan_schema() -> dict[str, Any]:
        """JSON Schema of a plan (the request body of /v1/forecast)."""
        return Plan.model_json_schema()

    @app.post("/v1/forecast", tags=["forecast"])
    def post_forecast(body: PlanBody) -> JSONResponse:
        """Itemized real bill and quote: the JSON of ``trainbill forecast --json``."""
        plan = _plan(body, limits=limits)
        fc = forecast(plan, cat, today=today)
        _check_forecast(plan, fc.as_dict(), limits=limits, prefix="")
        # The budget and the ranked actions, as ``trainbill forecast --json`` prints them.
        out = advise(plan, fc, cat, today=today).as_dict()
        return JSONResponse(_clean(out))

    def _checked_plan(body: dict[str, Any], *, prefix: str = "", planner: bool = False) -> Plan:
        """A valid plan whose own forecast is finite and within the caps.

        For the planner the template need not be feasible itself (it may not fit in memory at
        its own node count): a plan the library refuses is left for ``optimize`` to judge.
        """
        plan = _plan(body, limits=limits, prefix=prefix)
        try:
            out = forecast(plan, cat, today=today).as_dict()
        except TrainbillError:
            if planner:
                return plan
            raise
        _check_forecast(plan, out, limits=limits, prefix=f"{prefix}." if prefix else "")
        return plan

    @app.post("/v1/charts/waterfall", tags=["charts"], response_class=Response)
    def post_waterfall(req: WaterfallRequest) -> Response:
        """The quote-to-budget waterfall as SVG (the report's chart), from a forecast's numbers."""
        if req.steps is not None:
            # The forecast's own steps, drawn as they are; labels are escaped by the chart.
            rows = tuple(
                Step(label=st.label, start=st.start, end=st.end, total=st.total) for st in req.steps
            )
            return Response(
                headline_waterfall_svg(rows, standalone=True), media_type="image/svg+xml"
            )
        if req.quote_usd is None or req.by_category is None:
            msg = "give steps (a forecast's waterfall) or quote_usd and by_category"
            raise SpecError(msg, source="request body", field="steps")
        unknown = sorted(set(req.by_category) - set(CATEGORIES))
        if unknown:
            msg = f"unknown categories {', '.join(unknown)}; allowed: {', '.join(CATEGORIES)}"
            raise SpecError(msg, source="request body", field="by_category")
        for cat_name, amount in req.by_category.items():
            if (amount > 0) if cat_name == "discount" else (amount < 0):
                sign = (
                    "at most 0 (a discount lowers the bill)"
                    if cat_name == "discount"
                    else "at least 0"
                )
                msg = f"must be {sign} (got {amount:g})"
                raise SpecError(msg, source="request body", field=f"by_category.{cat_name}")
        ordered = {c: req.by_category.get(c, 0.0) for c in CATEGORIES}
        steps = waterfall_steps(req.quote_usd, ordered)
        if not all(math.isfinite(x) for step in steps for x in (step.start, step.end)):
            msg = "quote_usd and by_category add up to more than a float can hold; send dollar amounts"
            raise SpecError(msg, source="request body", field="by_category")
        svg = waterfall_svg(steps, standalone=True)
        return Response(svg, media_type="image/svg+xml")

    @app.post("/v1/sizing", tags=["forecast"])
    def post_sizing(body: PlanBody) -> dict[str, Any]:
        """The plan priced at node counts around its own, and the cost/time Pareto front."""
        plan = _checked_plan(body)
        points, basis = right_sizing(plan, cat, today=today)
        front = {p.nodes for p in pareto_front(points)}
        out: dict[str, Any] = _clean({
            "basis": basis,
            "points": [
                {"nodes": p.nodes, "gpus": p.gpus, "wall_hours": p.wall_hours, "total_usd": p.total_usd,
                 "quote_usd": p.quote_usd, "current": p.current, "pareto": p.nodes in front}
                for p in points
            ],
        })  # fmt: skip
        return out

    @app.post(
        "/v1/simulate",
        tags=["risk"],
        responses={501: {"description": "not available in this build"}},
    )
    def post_simulate(req: SimulateRequest) -> JSONResponse:
        """Monte Carlo: P50/P90 bill and wall-clock, chance of missing the deadline."""
        plan = _checked_plan(req.plan, prefix="plan")
        try:
            importlib.import_module("trainbill.simulate")
        except ImportError:
            return _not_available("Monte Carlo simulation (trainbill.simulate)")
        summary, note = run_simulation(plan, cat, trials=req.trials, seed=req.seed, today=today)
        if summary is None:
            return JSONResponse({"detail": note, "field": None}, status_code=501)
        return JSONResponse(_clean({
            "trials": summary.trials, "p50_usd": summary.p50_usd, "p90_usd": summary.p90_usd,
            "p50_hours": summary.p50_hours, "p90_hours": summary.p90_hours,
            "deadline_hours": summary.deadline_hours, "p_miss_deadline": summary.p_miss_deadline,
            "source": summary.source,
        }))  # fmt: skip

    @app.post(
        "/v1/optimize",
        tags=["planner"],
        responses={
            422: {
                "description": "invalid input, search too large, or nothing feasible (`binding` names the constraint)"
            }
        },
    )
    def post_optimize(req: OptimizeRequest) -> JSONResponse:
        """Planner: the cheapest plan meeting the deadline and budget; the JSON of ``trainbill optimize --json``."""
        plan = _checked_plan(req.plan, prefix="plan", planner=True)
        space = _search_space(req.space)
        clouds = tuple(req.clouds) if req.clouds is not None else None
        _check_search_size(cat, space, clouds, limits)
        try:
            result = optimize(
                plan,
                cat,
                space=space,
                objective=req.objective,
                deadline_hours=req.deadline_hours,
                budget_usd=req.budget_usd,
                clouds=clouds,
                today=today,
                allow_stand_ins=req.allow_stand_ins,
            )
        except InfeasibleError as exc:
            field = {
                "deadline": "deadline_hours",
                "budget": "budget_usd",
                "memory": "plan.cluster.nodes",
            }
            return JSONResponse(
                _clean(
                    {
                        "detail": str(exc),
                        "field": field.get(exc.binding or ""),
                        "binding": exc.binding,
                        "shortfall": exc.shortfall,
                    }
                ),
                status_code=422,
            )
        return JSONResponse(_clean(result.as_dict()))

    @app.get("/v1/prices", tags=["catalog"])
    def get_prices(
        provider: Annotated[str | None, Query(description=f"one of {', '.join(PROVIDERS)}")] = None,
        item: Annotated[str | None, Query(description="e.g. p5.48xlarge")] = None,
        option: Annotated[str | None, Query(description=f"one of {', '.join(OPTIONS)}")] = None,
        region: Annotated[str | None, Query()] = None,
        limit: Annotated[int, Query(ge=1, description="rows to return (capped)")] = 200,
    ) -> dict[str, Any]:
        """Catalog price points (every dated version, with its source)."""
        if limit > limits.max_price_rows:
            msg = f"must be at most {limits.max_price_rows:,} (got {limit})"
            raise SpecError(msg, source="query", field="limit")
        if provider is not None and provider not in PROVIDERS:
            msg = f"{provider!r} is not allowed; allowed values: {', '.join(PROVIDERS)}"
            raise SpecError(msg, source="query", field="provider")
        if option is not None and option not in OPTIONS:
            msg = f"{option!r} is not allowed; allowed values: {', '.join(OPTIONS)}"
            raise SpecError(msg, source="query", field="option")
        rows = [
            p for p in cat.prices
            if (provider is None or p.provider == provider) and (item is None or p.item == item)
            and (option is None or p.option == option) and (region is None or p.region == region)
        ]  # fmt: skip
        return {
            "catalog": {"version": cat.version, "snapshot": cat.snapshot.isoformat()},
            "count": len(rows),
            "truncated": len(rows) > limit,
            "prices": [
                {"provider": p.provider, "region": p.region, "item": p.item, "option": p.option,
                 "unit": p.unit, "usd": p.usd, "effective_from": p.effective_from.isoformat(), "source": p.source}
                for p in rows[:limit]
            ],
        }  # fmt: skip

    @app.get("/v1/instances", tags=["catalog"])
    def get_instances() -> dict[str, Any]:
        """Instance types the catalog can price, with their accelerators (the page's picker)."""
        return {
            "instances": [
                {"provider": i.provider, "instance": i.instance, "accelerator": i.accelerator,
                 "accelerator_count": i.accelerator_count}
                for i in cat.instances.values()
            ]
        }  # fmt: skip

    hosts = (
        None
        if allowed_hosts is None
        else tuple(h.strip().strip("[]").lower() for h in allowed_hosts)
    )
    config = GuardConfig(
        max_body_bytes=limits.max_body_bytes, body_timeout_s=limits.body_timeout_s,
        heavy_workers=limits.heavy_workers, heavy_queue=limits.heavy_queue,
        light_workers=limits.light_workers, light_queue=limits.light_queue,
        retry_after_s=limits.retry_after_s, allowed_hosts=hosts,
    )  # fmt: skip
    app.add_middleware(Guard, config=config)
    return app


_CSP = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"


def _known_query(request: Request) -> None:
    """422 for a query parameter the endpoint does not take (``?provder=gcp`` would otherwise
    answer every provider) or one given twice (only the last would count)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or not route.path.startswith("/v1/"):
        return
    allowed = sorted(p.alias for p in route.dependant.query_params)
    for key in request.query_params:
        if key not in allowed:
            took = (
                f"allowed: {', '.join(allowed)}"
                if allowed
                else "this endpoint takes no query parameters"
            )
            msg = f"unknown query parameter; {took}"
            raise SpecError(msg, source="query", field=key)
        if len(request.query_params.getlist(key)) > 1:
            msg = "given more than once; give it once"
            raise SpecError(msg, source="query", field=key)


def _search_space(req: OptimizeSpace | None) -> SearchSpace:
    """The request's axes over the planner's defaults (omitted = derived, as on the CLI)."""
    if req is None:
        return SearchSpace()
    given = {k: tuple(v) for k, v in req.model_dump(exclude_none=True).items()}
    return replace(SearchSpace(), **given)


def _check_search_size(
    cat: Catalog, space: SearchSpace, clouds: tuple[str, ...] | None, limits: Limits
) -> None:
    """422 before any work when instance types × node counts exceed the cap.

    Counts as the planner does: the named instances (or every catalog instance of the allowed
    clouds) plus the plan's own; the named node counts (or the default 13 √2 steps) plus the
    plan's own. Unknown clouds are left for the planner to name.
    """
    allowed = set(clouds) if clouds is not None else set(PROVIDERS)
    if space.instances is not None:
        n_inst = len(set(space.instances)) + 1
    else:
        n_inst = sum(1 for i in cat.instances.values() if i.provider in allowed) + 1
    n_nodes = (len(set(space.nodes)) if space.nodes is not None else 13) + 1
    if n_inst * n_nodes > limits.max_search_cells:
        msg = (
            f"search too large: {n_inst} instance types × {n_nodes} node counts = {n_inst * n_nodes:,} "
            f"(at most {limits.max_search_cells:,}); name fewer space.instances or space.nodes, or fewer clouds"
        )
        raise SpecError(msg, source="request body", field="space")


def _not_available(what: str) -> JSONResponse:
    return JSONResponse(
        {"detail": f"{what} is not available in this build", "field": None}, status_code=501
    )
