"""Answers to forecasts already made, served before the app (``POST /v1/forecast``).

A forecast's answer depends only on the plan, the catalog and the day, and working it out
(the outlook: a budget simulation and the ranked actions) takes tens of milliseconds, where
the server can send a kept answer in well under one. Issue #44 measured 22 requests/s at 16
clients (p99 989 ms) with every answer recomputed.

The answers are kept here, in an ASGI layer in front of FastAPI, rather than in the route:
a repeat is then answered without FastAPI's routing, dependency solving, body validation and
two hops through its thread pool, which were most of a repeat's cost once the outlook was
kept (``benchmarks/results/web-load.md``). Only what is certain to be the same answer is
served from here:

* the same request: ``POST /v1/forecast``, no query string, the same ``Content-Type``, and a
  JSON object body equal to one answered before, compared in canonical form (keys sorted,
  no spaces), so a reformatted body is the same plan;
* the same app (one catalog per app) and the same calendar day (pinned in tests);
* an answer that was a complete ``200``: a refusal is never kept, so every error still comes
  from the route with its own message.

Anything else passes through untouched. The store is a bounded LRU of encoded bytes (status,
headers and body as sent), so a hit encodes nothing.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, MutableMapping
from datetime import date
from typing import Any

__all__ = ["FORECAST_PATH", "AnswerCache", "ForecastAnswers", "answer_key"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The one path whose answers are kept.
FORECAST_PATH = "/v1/forecast"

#: A kept answer: the response's start message (status and headers) and its body.
Kept = tuple[list[tuple[bytes, bytes]], bytes]


class AnswerCache:
    """A bounded, thread-safe LRU (the value is whatever the caller keeps)."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._kept[key] = value
            self._kept.move_to_end(key)
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)


def _header(scope: Scope, name: bytes) -> bytes:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value)
    return b""


def answer_key(scope: Scope, body: bytes, day: date) -> Hashable | None:
    """What decides the answer, or None when the request is not one this layer may answer.

    None for anything but ``POST /v1/forecast`` without a query string, and for a body that
    is not a JSON object or is nested too deep for ``json`` (the route refuses it with its own
    message)."""
    if (
        scope.get("type") != "http"
        or scope.get("method") != "POST"
        or scope.get("path") != FORECAST_PATH
        or scope.get("query_string", b"")
    ):
        return None
    try:
        plan = json.loads(body)
        if not isinstance(plan, dict):
            return None
        canonical = json.dumps(plan, sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested too deep to parse:
        return None  # the route refuses it with its own message
    return (canonical, _header(scope, b"content-type"), day.isoformat())


async def _read_all(receive: Receive) -> tuple[bytes, bool]:
    """The whole request body, and whether the client left while sending it."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks), True
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), False


class ForecastAnswers:
    """The ASGI layer (see the module docstring); ``today`` pins the day (tests)."""

    def __init__(self, app: ASGIApp, *, entries: int, today: date | None = None) -> None:
        self.app = app
        self.today = today
        self.answers = AnswerCache(entries)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("path") != FORECAST_PATH or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, gone = await _read_all(receive)
        key = None if gone else answer_key(scope, body, self.today or date.today())  # noqa: DTZ011 - the server's calendar day
        kept: Kept | None = self.answers.get(key) if key is not None else None
        if kept is not None:
            headers, payload = kept
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": payload, "more_body": False})
            return
        await self.app(scope, _replay(body, gone, receive), self._keeping(key, send))

    def _keeping(self, key: Hashable | None, send: Send) -> Send:
        """``send``, noting a complete 200 answer under ``key`` on the way."""
        if key is None:
            return send
        start: list[Message] = []
        parts: list[bytes] = []

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.append(message)
            elif message["type"] == "http.response.body" and start:
                parts.append(bytes(message.get("body", b"")))
                if not message.get("more_body", False) and start[0]["status"] == 200:
                    headers = [(bytes(k), bytes(v)) for k, v in start[0].get("headers", [])]
                    self.answers.put(key, (headers, b"".join(parts)))
            await send(message)

        return noting


def _replay(body: bytes, gone: bool, receive: Receive) -> Receive:
    """The body read above, given to the app as one message; later calls pass through."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            if gone:
                return {"type": "http.disconnect"}
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
