"""Forecast answers kept in front of the app (``web._answers``): a repeat is the same bytes
without the route running again; anything not certain to be the same answer reaches it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from datetime import date
from typing import Any

import pytest

from trainbill.web._answers import AnswerCache, ForecastAnswers
from web.asgi_client import call, seed_json

Message = MutableMapping[str, Any]
DAY = date(2026, 12, 5)


class CountingApp:
    """An ASGI app answering ``status`` with a body naming how many times it ran."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.calls = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.calls += 1
        message = await receive()
        body = json.dumps({"call": self.calls, "got": len(message["body"])}).encode()
        headers = [(b"content-type", b"application/json"), (b"x-run", b"%d" % self.calls)]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _post(
    layer: ForecastAnswers,
    body: bytes,
    *,
    path: str = "/v1/forecast",
    query: bytes = b"",
    content_type: bytes = b"application/json",
) -> tuple[int, dict[bytes, bytes], bytes]:
    """One request through ``layer``: the status, headers and body it sent."""
    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "query_string": query,
        "headers": [(b"host", b"localhost"), (b"content-type", content_type)],
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(layer(scope, receive, send))
    start, *parts = sent
    return start["status"], dict(start["headers"]), b"".join(p.get("body", b"") for p in parts)


def test_a_repeat_is_the_same_bytes_without_running_the_app() -> None:
    app = CountingApp()
    layer = ForecastAnswers(app, entries=4, today=DAY)
    first = _post(layer, b'{"run": {"hours": 72}}')
    again = _post(layer, b'{"run": {"hours": 72}}')
    assert app.calls == 1
    assert again == first
    assert first[1][b"x-run"] == b"1"


def test_the_same_plan_written_otherwise_is_a_repeat() -> None:
    """Key order and spaces do not change the plan, so they do not change the answer."""
    app = CountingApp()
    layer = ForecastAnswers(app, entries=4, today=DAY)
    _post(layer, b'{"run": {"hours": 72, "name": "a"}, "model": {"params": 7e9}}')
    _post(layer, b'{"model":{"params":7e9},"run":{"name":"a","hours":72}}')
    assert app.calls == 1


@pytest.mark.parametrize(
    ("second", "why"),
    [
        ({"body": b'{"run": {"hours": 73}}'}, "another plan"),
        ({"body": b'{"run": {"hours": 72}}', "query": b"x=1"}, "a query string (the route's 422)"),
        (
            {"body": b'{"run": {"hours": 72}}', "content_type": b"text/plain"},
            "another content type (the route reads it otherwise)",
        ),
    ],
)
def test_what_may_answer_otherwise_reaches_the_app(second: dict[str, Any], why: str) -> None:
    app = CountingApp()
    layer = ForecastAnswers(app, entries=4, today=DAY)
    _post(layer, b'{"run": {"hours": 72}}')
    _post(layer, **second)
    assert app.calls == 2, why


@pytest.mark.parametrize("body", [b"[1, 2]", b"not json", b'"text"', b""])
def test_a_body_that_is_not_a_json_object_is_never_kept(body: bytes) -> None:
    app = CountingApp()
    layer = ForecastAnswers(app, entries=4, today=DAY)
    _post(layer, body)
    _post(layer, body)
    assert app.calls == 2


def test_a_body_nested_too_deep_is_the_apps_400_as_before() -> None:
    """30,000 nested arrays (60 KB, under the body cap) are past ``json``'s recursion limit:
    the layer leaves them to the app, which refuses them as unparseable (a 500 otherwise)."""
    from trainbill.web import create_app

    app = create_app(today=DAY)
    for body in (b"[" * 30_000 + b"]" * 30_000, b'{"a":' * 10_000 + b"1" + b"}" * 10_000):
        r = call(app, "POST", "/v1/forecast", content=body,
                 headers={"content-type": "application/json"})  # fmt: skip
        assert r.status_code == 400, r.text
        assert r.json()["field"] == "body"


def test_a_refusal_is_never_kept() -> None:
    """A 422 is answered by the route each time, with its own message."""
    app = CountingApp(status=422)
    layer = ForecastAnswers(app, entries=4, today=DAY)
    assert _post(layer, b'{"run": {"hours": -1}}')[0] == 422
    assert _post(layer, b'{"run": {"hours": -1}}')[0] == 422
    assert app.calls == 2


def test_other_paths_pass_through() -> None:
    app = CountingApp()
    layer = ForecastAnswers(app, entries=4, today=DAY)
    _post(layer, b'{"run": {"hours": 72}}', path="/v1/sizing")
    _post(layer, b'{"run": {"hours": 72}}', path="/v1/sizing")
    assert app.calls == 2


def test_a_new_day_is_a_new_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unpinned, the key carries the server's calendar day (prices and maturity move with it)."""
    app = CountingApp()
    layer = ForecastAnswers(app, entries=4)  # not pinned: the server's calendar
    _post(layer, b'{"run": {"hours": 72}}')
    _post(layer, b'{"run": {"hours": 72}}')
    assert app.calls == 1
    monkeypatch.setattr(layer, "today", date(2099, 1, 1))
    _post(layer, b'{"run": {"hours": 72}}')
    assert app.calls == 2


def test_the_store_is_bounded() -> None:
    """Three plans through a store of two: the first is evicted, so it runs again."""
    app = CountingApp()
    layer = ForecastAnswers(app, entries=2, today=DAY)
    for hours in (1, 2, 3):
        _post(layer, b'{"run": {"hours": %d}}' % hours)
    assert len(layer.answers) == 2
    _post(layer, b'{"run": {"hours": 1}}')
    assert app.calls == 4


def test_the_answer_cache_is_a_bounded_lru() -> None:
    cache = AnswerCache(2)
    cache.put("a", b"1")
    cache.put("b", b"2")
    assert cache.get("a") == b"1"  # a is now the most recent
    cache.put("c", b"3")  # evicts b, the least recent
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (b"1", None, b"3")


def test_through_the_app_a_repeat_is_the_first_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real app: the second POST of the seed plan is the first one's bytes and headers,
    and the plan is not priced again (the route's one use-case call is counted)."""
    from trainbill.usecases.price import price_plan as real
    from trainbill.web import create_app

    runs: list[int] = []

    def counted(*args: Any, **kw: Any) -> Any:
        runs.append(1)
        return real(*args, **kw)

    monkeypatch.setattr("trainbill.web.routes.price_plan", counted)
    app = create_app(today=DAY)
    first = call(app, "POST", "/v1/forecast", json=seed_json())
    again = call(app, "POST", "/v1/forecast", json=seed_json())
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert again.headers == first.headers
    assert len(runs) == 1
    bad = {**seed_json(), "run": {"hours": -1}}
    assert call(app, "POST", "/v1/forecast", json=bad).status_code == 422
    assert call(app, "POST", "/v1/forecast", json=bad).status_code == 422
