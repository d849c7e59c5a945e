"""The HTTP API and the single-page calculator, assembled from named parts.

The API is a thin shell over the library, like the CLI: a JSON body goes through the same
``plan_from_dict`` as a TOML file, so the schema and the error messages are the same, and
``POST /v1/forecast`` answers exactly the JSON of ``trainbill forecast --json``,
``POST /v1/forecast/calibrated`` that of ``trainbill forecast --calibration … --json`` (the
calibration files' text goes through the CLI's parser, ``trainbill.calibration``), and
``POST /v1/optimize`` that of ``trainbill optimize --json``. Charts come from
``trainbill.report.charts`` (server-drawn SVG), the same functions the HTML report uses; the
report download is ``trainbill.report``'s own ``build_report`` + ``render_html``.

The parts: ``limits`` (the server's caps), ``models`` (request bodies), ``plans`` (a request's
plan to a priceable plan), ``routes`` (one router per concern), ``errors`` (one JSON error
shape), ``_guard`` (the ASGI middleware) and ``_answers`` (forecasts already made, answered
again in front of the app).

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

from collections.abc import Sequence
from datetime import date

from fastapi import Depends, FastAPI

from trainbill import __version__
from trainbill.catalog import Catalog, load_catalog
from trainbill.web import errors
from trainbill.web._answers import ForecastAnswers
from trainbill.web._guard import LOCAL_HOSTS, Guard, GuardConfig
from trainbill.web.limits import LIMITS, Limits
from trainbill.web.models import OptimizeRequest, OptimizeSpace
from trainbill.web.plans import Pricing
from trainbill.web.routes import routers

__all__ = ["LIMITS", "Limits", "OptimizeRequest", "OptimizeSpace", "create_app"]


def _guard_config(limits: Limits, allowed_hosts: Sequence[str] | None) -> GuardConfig:
    """The middleware's settings from the app's limits and the Host names to serve."""
    hosts = (
        None
        if allowed_hosts is None
        # Each name once (the bound address is often one of the local names already).
        else tuple(dict.fromkeys(h.strip().strip("[]").lower() for h in allowed_hosts))
    )
    return GuardConfig(
        max_body_bytes=limits.max_body_bytes, body_timeout_s=limits.body_timeout_s,
        heavy_workers=limits.heavy_workers, heavy_queue=limits.heavy_queue,
        light_workers=limits.light_workers, light_queue=limits.light_queue,
        retry_after_s=limits.retry_after_s, allowed_hosts=hosts,
    )  # fmt: skip


def create_app(
    *,
    catalog: Catalog | None = None,
    today: date | None = None,
    limits: Limits = LIMITS,
    allowed_hosts: Sequence[str] | None = LOCAL_HOSTS,
    runs_db: str | None = None,
    listen_host: str = "127.0.0.1",
) -> FastAPI:
    """Build the app. ``catalog`` defaults to the packaged one; ``today`` pins the date (tests).

    ``allowed_hosts``: the Host header names served (DNS-rebinding guard, ``web._guard``);
    localhost by default, None serves any name. ``runs_db``: the run registry ``/v1/runs``
    reads (None: ``TRAINBILL_DATABASE_URL`` or the default file); ``listen_host``: the bound
    interface, which decides whether registry writes need a bearer token (``web.runs``).
    """
    app = FastAPI(
        title="trainbill",
        version=__version__,
        description=(
            "The real bill of training a model on a cloud GPU cluster: forecast, simulate, "
            "price lists."
        ),
        dependencies=[Depends(errors.known_query)],
    )
    errors.install(app)
    pricing = Pricing(catalog=catalog or load_catalog(), today=today, limits=limits)
    for router in routers(pricing):
        app.include_router(router)
    from trainbill.web.runs import runs_routes

    app.include_router(runs_routes(db=runs_db, listen_host=listen_host))
    # Inside the guard (added first, so it runs after it): a repeat is answered once the
    # guard has checked the Host, read the body within its caps and admitted the request.
    app.add_middleware(ForecastAnswers, entries=limits.forecast_cache_entries, today=today)
    app.add_middleware(Guard, config=_guard_config(limits, allowed_hosts))
    return app
