"""ASGI guard in front of the API: who may ask, how much they may send, how much may run at once.

A calculator on a shared host is a public endpoint in all but name, and its heavy endpoints
(Monte Carlo, the planner, the sizing sweep) are CPU-bound for a second or more each. Measured
before this guard: 60 concurrent ``POST /v1/optimize`` filled FastAPI's 40-thread pool, so
``/healthz`` took 24.5 s and forecasts 17 s at the median; 300 clients that opened a body and
never finished it were all held open; an oversized *chunked* body (no Content-Length) was a
400 (FastAPI turns any error while reading the body into "error parsing the body").

One middleware, in this order:

1. **Host allow-list** (DNS rebinding): a page on ``evil.example`` that re-resolves its name to
   127.0.0.1 reaches a localhost server with ``Host: evil.example``; only the names in
   ``allowed_hosts`` are served (localhost by default, ``serve --allowed-host`` adds).
2. **The body is read here, whole, before the app sees it**: over ``max_body_bytes`` → 413 by
   Content-Length or by counted chunks; a body that stalls (no bytes for ``body_timeout_s``,
   or not finished within it overall) → 408 and the connection's slot is freed; a body that is
   not UTF-8 → 400 (``json.loads`` would accept UTF-16/32 and the README promises UTF-8).
3. **Admission by class**, each with its own running slots and a bounded queue: ``heavy``
   (simulate, optimize, sizing) and ``light`` (everything else under ``/v1``). A request that
   finds its class's slots and queue full gets 503 with ``Retry-After`` at once, instead of
   waiting behind work it cannot see. ``/healthz`` and the page bypass admission, so liveness
   answers while the heavy queue is full.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from trainbill._record import record
from trainbill.errors import RequestRefusedError

__all__ = ["Admission", "Guard", "GuardConfig"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Paths whose work is CPU-bound for a second or more per request.
HEAVY_PATHS = frozenset({"/v1/simulate", "/v1/optimize", "/v1/sizing", "/v1/report"})
#: Paths that never wait for admission (liveness must answer under load).
FREE_PATHS = frozenset({"/healthz"})
#: Names a browser on this machine uses for a server on this machine.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def _as_get(scope: Scope, send: Send) -> tuple[Scope, Send]:
    """A HEAD request answered as its GET would be, headers only: FastAPI routes a GET
    endpoint for GET alone, so ``HEAD /healthz`` was a 405."""

    async def headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    return {**scope, "method": "GET"}, headers_only


@record
class GuardConfig:
    """Limits of the guard; ``trainbill.web.Limits`` carries the values the app uses."""

    max_body_bytes: int
    body_timeout_s: float
    heavy_workers: int
    heavy_queue: int
    light_workers: int
    light_queue: int
    retry_after_s: int
    #: None: any Host (tests of the bare app); otherwise lower-case names without port.
    allowed_hosts: tuple[str, ...] | None


class Admission:
    """Running slots plus a bounded queue for one class of request."""

    def __init__(self, workers: int, queue: int) -> None:
        self.limit = workers + queue
        self.inside = 0
        self._slots = asyncio.Semaphore(workers)

    def try_enter(self) -> bool:
        """Take a place (running or queued) if one is free; never waits."""
        if self.inside >= self.limit:
            return False
        self.inside += 1
        return True

    async def run(self, work: Callable[[], Awaitable[None]]) -> None:
        """Wait for a running slot (the queue), do the work, give both places back."""
        try:
            async with self._slots:
                await work()
        finally:
            self.inside -= 1


_Refused = RequestRefusedError  # issue #21: every exception class lives in trainbill.errors


def _host_of(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == b"host":
            text = str(value.decode("latin-1")).strip().lower()
            if text.startswith("["):  # [::1]:8000
                return text[1 : text.find("]")] if "]" in text else text
            return text.rsplit(":", 1)[0] if text.count(":") == 1 else text
    return ""


class Guard:
    """The middleware (see the module docstring)."""

    def __init__(self, app: ASGIApp, config: GuardConfig) -> None:
        self.app = app
        self.config = config
        self.heavy = Admission(config.heavy_workers, config.heavy_queue)
        self.light = Admission(config.light_workers, config.light_queue)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "HEAD":  # HEAD wherever GET is allowed (RFC 9110 §9.3.2)
            scope, send = _as_get(scope, send)
        try:
            self._check_host(scope)
            body = await self._read_body(scope, receive)
        except _Refused as exc:
            await _answer(send, exc)
            return
        replay = _replayer(body, receive)
        path = str(scope.get("path", ""))
        if path in FREE_PATHS or not path.startswith("/v1/"):
            await self.app(scope, replay, send)
            return
        gate = self.heavy if path in HEAVY_PATHS else self.light
        if not gate.try_enter():
            what = "heavy (simulate/optimize/sizing/report)" if gate is self.heavy else "API"
            detail = (
                f"server busy: every {what} slot and its queue are taken; retry in "
                f"{self.config.retry_after_s} s"
            )
            await _answer(
                send, _Refused(503, detail, {"retry-after": str(self.config.retry_after_s)})
            )
            return
        await gate.run(lambda: self.app(scope, replay, send))

    def _check_host(self, scope: Scope) -> None:
        allowed = self.config.allowed_hosts
        if allowed is None:
            return
        host = _host_of(scope)
        if host not in allowed:
            shown = host or "(none)"
            detail = (
                f"Host {shown!r} is not served here (allowed: {', '.join(allowed)}; add one with "
                "--allowed-host)"
            )
            raise _Refused(421, detail)

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes:
        cap = self.config.max_body_bytes
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    raise _Refused(400, "Content-Length is not a number") from None
                if declared > cap:
                    raise _Refused(413, f"request body exceeds {cap:,} bytes")
        chunks: list[bytes] = []
        seen = 0
        deadline = time.monotonic() + self.config.body_timeout_s
        while True:
            left = deadline - time.monotonic()
            try:
                message = await asyncio.wait_for(receive(), timeout=max(left, 0.0))
            except TimeoutError:
                raise _Refused(
                    408, f"request body not received within {self.config.body_timeout_s:g} s"
                ) from None
            if message["type"] == "http.disconnect":
                raise _Refused(400, "client disconnected while sending the body")
            part = message.get("body", b"")
            seen += len(part)
            if seen > cap:
                raise _Refused(413, f"request body exceeds {cap:,} bytes")
            chunks.append(part)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body:
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as exc:
                msg = (
                    f"body: not UTF-8 (byte {body[exc.start : exc.start + 1]!r} at offset "
                    f"{exc.start}); send UTF-8 JSON with Content-Type: application/json"
                )
                raise _Refused(400, msg) from None
        return body


def _replayer(body: bytes, receive: Receive) -> Receive:
    """The body the guard read, given to the app as one message; later calls pass through
    (Starlette listens for ``http.disconnect`` while streaming a response)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _answer(send: Send, refused: _Refused) -> None:
    payload = json.dumps(
        {"detail": refused.detail, "field": "body" if refused.status in {400, 408, 413} else None}
    )
    raw = payload.encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in refused.headers.items()]
    if refused.status in {408, 413}:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": refused.status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})
