"""Shared fixtures for the price tests: recorded responses served by httpx.MockTransport."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

try:
    import httpx
except ImportError:  # the prices extra is absent: tests needing httpx skip themselves
    httpx = None

DATA = Path(__file__).resolve().parents[1] / "data" / "prices"

Handler = Callable[["httpx.Request"], "httpx.Response"]


class Recorder:
    """Route URLs (path, without query) to canned responses and record every request."""

    def __init__(self) -> None:
        self.routes: dict[str, list[Handler]] = {}
        self.requests: list[httpx.Request] = []
        self.sleeps: list[float] = []

    def add(self, url: str, *responses: Handler) -> None:
        """Queue handlers for a URL; the last one repeats once the queue is drained."""
        self.routes.setdefault(url, []).extend(responses)

    def file(self, url: str, name: str, **headers: str) -> None:
        """Serve a fixture file's bytes for a URL."""
        body = (DATA / name).read_bytes()
        self.add(url, lambda _r: httpx.Response(200, content=body, headers=headers))

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        key = str(request.url.copy_with(query=None))
        queue = self.routes.get(key)
        if not queue:
            return httpx.Response(404, text=f"no route for {key}")
        handler = queue.pop(0) if len(queue) > 1 else queue[0]
        return handler(request)

    def http(self, attempts: int = 5) -> object:
        """An ``Http`` over this recorder, with sleeps recorded instead of slept."""
        from trainbill.prices._http import Http

        client = httpx.Client(transport=httpx.MockTransport(self.handle))
        return Http(client, attempts=attempts, sleep=self.sleeps.append)


@pytest.fixture
def rec() -> Recorder:
    """A fresh URL router for one test."""
    pytest.importorskip("httpx")
    return Recorder()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated price cache directory (TRAINBILL_CACHE_DIR), no user overlays."""
    path = tmp_path / "cache"
    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(path))
    monkeypatch.delenv("TRAINBILL_CATALOG", raising=False)
    monkeypatch.delenv("TRAINBILL_GCP_API_KEY", raising=False)
    return path
