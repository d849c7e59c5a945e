"""One in-process HTTP client for the web API tests: a request straight into the ASGI app."""

from __future__ import annotations

import asyncio
import json
import tomllib
from typing import Any

import httpx

from conftest import SEED


def call(app: Any, method: str, url: str, **kw: Any) -> httpx.Response:
    """``method url`` against ``app`` through httpx's ASGI transport (no socket, no server)."""

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            return await client.request(method, url, **kw)

    return asyncio.run(go())


def seed_json() -> dict[str, Any]:
    """The seed plan file as the JSON body the page posts (dates as ISO text)."""
    out: dict[str, Any] = json.loads(
        json.dumps(tomllib.loads(SEED.read_text(encoding="utf-8")), default=str)
    )
    return out
