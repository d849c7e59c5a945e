"""The API's guard (trainbill.web._guard): allowed hosts, body limits and timeouts, admission."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from conftest import TODAY
from trainbill.web import Limits, create_app
from trainbill.web._guard import Admission

_SMALL_FORECAST = {
    "run": {"hours": 10},
    "model": {"params": 7e9},
    "cluster": {"instance": "p5.48xlarge", "nodes": 2},
    "prices": {"as_of": "2025-05-01"},
}


async def _request(
    app: Any, method: str, url: str, *, host: str = "localhost", **kw: Any
) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as client:
        return await client.request(method, url, **kw)


def _call(app: Any, method: str, url: str, **kw: Any) -> httpx.Response:
    return asyncio.run(_request(app, method, url, **kw))


def test_a_foreign_host_is_refused() -> None:
    """DNS rebinding: Host evil.example reaching a localhost server gets a 4xx, localhost is
    served."""
    app = create_app(today=TODAY)
    bad = _call(app, "GET", "/healthz", host="evil.example")
    assert 400 <= bad.status_code < 500
    assert "evil.example" in bad.json()["detail"]
    assert _call(app, "GET", "/healthz", host="localhost:8000").status_code == 200
    assert _call(app, "GET", "/healthz", host="[::1]:8000").status_code == 200


def test_an_added_host_is_served() -> None:
    """serve --allowed-host calc.internal adds that name."""
    app = create_app(today=TODAY, allowed_hosts=("localhost", "calc.internal"))
    assert _call(app, "GET", "/healthz", host="calc.internal").status_code == 200


def test_an_oversized_chunked_body_is_413() -> None:
    """No Content-Length, chunks adding past the cap: 413 (FastAPI made it 400, 'error parsing the
    body')."""
    app = create_app(today=TODAY, limits=Limits(max_body_bytes=100))

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(5):
            yield b"x" * 40  # 200 bytes in all > 100

    r = _call(
        app, "POST", "/v1/forecast", content=chunks(), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413
    assert "exceeds 100 bytes" in r.json()["detail"]


def test_a_stalled_body_is_408() -> None:
    """A client that opens a body and never finishes it is answered 408 after the body timeout."""
    app = create_app(today=TODAY, limits=Limits(body_timeout_s=0.2))

    async def stall() -> AsyncIterator[bytes]:
        yield b'{"run": '
        await asyncio.sleep(5)
        yield b"{}}"

    async def go() -> httpx.Response:
        return await asyncio.wait_for(
            _request(
                app,
                "POST",
                "/v1/forecast",
                content=stall(),
                headers={"content-type": "application/json"},
            ),
            timeout=3,
        )

    r = asyncio.run(go())
    assert r.status_code == 408


def test_utf16_json_is_refused() -> None:
    """json.loads accepts UTF-16; the API promises UTF-8 only."""
    app = create_app(today=TODAY)
    body = json.dumps(_SMALL_FORECAST).encode("utf-16")
    r = _call(
        app, "POST", "/v1/forecast", content=body, headers={"content-type": "application/json"}
    )
    assert r.status_code == 400
    assert "not UTF-8" in r.json()["detail"]


def test_a_full_heavy_queue_answers_503_with_retry_after() -> None:
    """With 1 heavy slot and no queue, a second concurrent simulate is refused at once, not
    queued."""
    app = create_app(today=TODAY, limits=Limits(heavy_workers=1, heavy_queue=0, retry_after_s=7))
    body = {"plan": _SMALL_FORECAST, "trials": 20_000, "seed": 0}

    async def go() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            return list(
                await asyncio.gather(*(client.post("/v1/simulate", json=body) for _ in range(3)))
            )

    answers = asyncio.run(go())
    codes = sorted(r.status_code for r in answers)
    assert codes[0] in {200, 501}  # one ran (501 only in a build without simulation)
    busy = [r for r in answers if r.status_code == 503]
    assert len(busy) == 2
    assert busy[0].headers["retry-after"] == "7"
    assert "server busy" in busy[0].json()["detail"]


def test_admission_counts_running_and_queued() -> None:
    """2 workers + 1 queued = 3 places; the 4th is refused; leaving frees a place."""

    async def go() -> list[bool]:
        gate = Admission(workers=2, queue=1)
        entered = [gate.try_enter() for _ in range(4)]
        done = asyncio.Event()

        async def work() -> None:
            await done.wait()

        tasks = [asyncio.create_task(gate.run(work)) for ok in entered if ok]
        await asyncio.sleep(0)
        done.set()
        await asyncio.gather(*tasks)
        return [*entered, gate.try_enter()]

    assert asyncio.run(go()) == [True, True, True, False, True]


@pytest.mark.parametrize("path", ["/healthz"])
def test_liveness_bypasses_a_full_queue(path: str) -> None:
    """/healthz answers even when no API place is free."""
    app = create_app(today=TODAY, limits=Limits(light_workers=0, light_queue=0))
    assert _call(app, "GET", path).status_code == 200
    assert _call(app, "POST", "/v1/forecast", json=_SMALL_FORECAST).status_code == 503
