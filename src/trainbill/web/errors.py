"""Every refusal as one JSON shape, ``{"detail": ..., "field": ...}``, never a traceback.

``install`` registers the handlers on an app; ``known_query`` is the app-wide dependency that
refuses unknown or repeated query parameters.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from trainbill.errors import SpecError, TrainbillError

__all__ = ["install", "known_query", "refusal"]


def refusal(detail: str, field: str | None, status_code: int = 422) -> JSONResponse:
    """The one error body every endpoint answers with."""
    return JSONResponse({"detail": detail, "field": field}, status_code=status_code)


async def _http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, StarletteHTTPException) and exc.status_code == 400:
        # FastAPI's "There was an error parsing the body": bytes that are not UTF-8 JSON.
        msg = "body: not parseable as JSON (send UTF-8 JSON with Content-Type: application/json)"
        return refusal(msg, "body", 400)
    return await http_exception_handler(request, exc)  # type: ignore[arg-type]


async def _overflow(_: Request, exc: Exception) -> JSONResponse:
    return refusal(f"a number in the request is too large to compute with ({exc})", None)


async def _trainbill_error(_: Request, exc: Exception) -> JSONResponse:
    """``SpecError`` and every other library error: the message and the field it names."""
    return refusal(str(exc), getattr(exc, "field", None))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    first = errors[0] if errors else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query")]
    field = "body" if first.get("type") == "json_invalid" else (".".join(loc) or "body")
    message = str(first.get("msg", "invalid request")).removeprefix("Value error, ")
    content_type = request.headers.get("content-type", "")
    if field == "body" and request.method == "POST" and "json" not in content_type:
        message += (
            " (the body must be JSON sent as Content-Type: application/json, not "
            f"{content_type or 'none'!r})"
        )
    return refusal(f"{field}: {message}", field)


def install(app: FastAPI) -> None:
    """Register the handlers (most specific first, as Starlette matches by class)."""
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(OverflowError, _overflow)
    app.add_exception_handler(SpecError, _trainbill_error)
    app.add_exception_handler(TrainbillError, _trainbill_error)
    app.add_exception_handler(RequestValidationError, _validation_error)


async def known_query(request: Request) -> None:
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
            raise SpecError(f"unknown query parameter; {took}", source="query", field=key)
        if len(request.query_params.getlist(key)) > 1:
            raise SpecError("given more than once; give it once", source="query", field=key)
