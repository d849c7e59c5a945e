"""``/v1/runs`` (list, detail, delete) and the runs page: the registry over HTTP.

Reads are open like the rest of the API. Writes change a team's history, so when the server
listens beyond loopback every write needs ``Authorization: Bearer <TRAINBILL_API_TOKEN>``, and
with no token configured the registry is read-only there (403 saying how to allow writes).
On loopback (the default bind) writes need no token. The numbers come from
``trainbill.runs.api`` (one call each); the page only formats them, its chart is
``report.charts.error_over_time_svg``.
"""

from __future__ import annotations

import hmac
import os
from html import escape
from typing import Annotated, Any

from fastapi import APIRouter, Header
from fastapi.responses import HTMLResponse, JSONResponse

__all__ = ["TOKEN_ENV", "runs_routes"]

TOKEN_ENV = "TRAINBILL_API_TOKEN"
_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def _refusal(status: int, detail: str) -> JSONResponse:
    from trainbill.web.errors import refusal

    return refusal(detail, None, status)


def _write_refused(listen_host: str, authorization: str | None) -> JSONResponse | None:
    """None when a write may go ahead; else the 401/403 answer."""
    if listen_host in _LOOPBACK:
        return None
    token = os.environ.get(TOKEN_ENV)
    if not token:
        return _refusal(
            403,
            f"the run registry is read-only on a server listening on {listen_host}: set "
            f"{TOKEN_ENV} on the server and send it as a bearer token to allow writes",
        )
    given = (authorization or "").removeprefix("Bearer ").strip()
    if (
        not authorization
        or not authorization.startswith("Bearer ")
        or not hmac.compare_digest(given.encode(), token.encode())
    ):
        answer = _refusal(401, f"a write needs 'Authorization: Bearer <{TOKEN_ENV}>'")
        answer.headers["WWW-Authenticate"] = "Bearer"
        return answer
    return None


def _not_found(exc: Exception) -> JSONResponse:
    return _refusal(404, str(exc))


def _page(runs: list[dict[str, Any]], details: list[dict[str, Any]]) -> str:
    from trainbill.report.charts import error_over_time_svg

    closed = [r for r in runs if r["error"] is not None]
    chart = error_over_time_svg([r["id"] for r in closed], [100 * r["error"] for r in closed])
    style = (
        "body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}"
        "table{border-collapse:collapse;margin-bottom:1.5rem}td,th{padding:.2rem .6rem;"
        "border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child"
        "{text-align:left}"
    )
    head = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>trainbill runs"
        f"</title><style>{style}</style></head><body><h1>Runs</h1>"
    )
    parts = [
        head,
        "<h2>The team's forecast error over time</h2>",
        chart,
    ]
    for d in details:
        status = "closed" if d["actual"] is not None else "open (no bill yet)"
        parts.append(f"<h2>{escape(d['id'])}: {escape(d['name'])}, {status}</h2>")
        parts.append(
            "<table><tr><th>category</th><th>forecast</th><th>actual</th><th>variance</th></tr>"
        )
        for cat, v in d["by_category"].items():
            parts.append(
                f"<tr><td>{escape(cat)}</td><td>{v['forecast_usd']:,.2f}</td>"
                f"<td>{v['actual_usd']:,.2f}</td><td>{v['variance_usd']:+,.2f}</td></tr>"
            )
        actual = d["actual_total_usd"]
        parts.append(
            f"<tr><th>total</th><th>{d['forecast_total_usd']:,.2f}</th>"
            f"<th>{'' if actual is None else f'{actual:,.2f}'}</th><th></th></tr></table>"
        )
    if not details:
        parts.append("<p>No run recorded yet: <code>trainbill runs record PLAN</code>.</p>")
    parts.append("</body></html>")
    return "".join(parts)


def runs_routes(*, db: str | None, listen_host: str) -> APIRouter:
    """The registry's routes on the database ``db`` (None: ``TRAINBILL_DATABASE_URL`` or the
    default file), writes guarded as ``listen_host`` requires."""
    from trainbill.errors import RunNotFoundError

    r = APIRouter(tags=["runs"])

    @r.get("/v1/runs")
    def get_runs() -> list[dict[str, Any]]:
        from trainbill.usecases import runs as api

        return api.list_runs(db=db)

    @r.get("/v1/runs/{run_id}", response_model=None)
    def get_run(run_id: str) -> dict[str, Any] | JSONResponse:
        from trainbill.usecases import runs as api

        try:
            return api.show(run_id, db=db)
        except RunNotFoundError as exc:
            return _not_found(exc)

    @r.delete("/v1/runs/{run_id}", response_model=None)
    def delete_run(
        run_id: str, authorization: Annotated[str | None, Header()] = None
    ) -> dict[str, Any] | JSONResponse:
        refused = _write_refused(listen_host, authorization)
        if refused is not None:
            return refused
        from trainbill.usecases import runs as api

        try:
            return {"deleted": api.delete(run_id, db=db)}
        except RunNotFoundError as exc:
            return _not_found(exc)

    @r.get("/runs", response_class=HTMLResponse)
    def runs_page() -> HTMLResponse:
        from trainbill.usecases import runs as api

        runs = api.list_runs(db=db)
        return HTMLResponse(_page(runs, [api.show(x["id"], db=db) for x in runs]))

    return r
