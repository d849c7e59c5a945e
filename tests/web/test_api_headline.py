"""HTTP API: the headline in /v1/forecast and the quote-to-budget waterfall chart."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from trainbill.web import create_app
from web.asgi_client import call, seed_json

_APP = create_app(today=TODAY)


def _call(method: str, url: str, **kw: Any) -> Any:
    return call(_APP, method, url, **kw)


def test_forecast_carries_planned_hidden_and_budget() -> None:
    """Planned 32 × 72 h × (50% × $98.32 + 50% × $25.66) = $142,824.96 < quote; budget ≥ real
    bill."""
    r = _call("POST", "/v1/forecast", json=seed_json())
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["planned_usd"] == pytest.approx(32 * 72 * (0.5 * 98.32 + 0.5 * 25.66), abs=0.005)
    assert d["planned_usd"] < d["quote_usd"]
    assert d["hidden_multiplier"] > 1
    assert d["budget_usd"] >= d["total_usd"]
    assert d["actions"]
    assert [s["label"] for s in d["waterfall"] if s["total"]] == [
        "quote (on-demand list)",
        "planned (at the plan's purchase mix)",
        "real bill (forecast)",
        "budget (P90 of simulated runs)",
    ]


def test_waterfall_chart_draws_a_forecasts_steps() -> None:
    """The forecast's own steps come back as one SVG row each, amounts in signed whole dollars."""
    steps = _call("POST", "/v1/forecast", json=seed_json()).json()["waterfall"]
    r = _call("POST", "/v1/charts/waterfall", json={"steps": steps})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.count("<rect") == len(steps)
    assert "-$83,704" in r.text  # 16 spot nodes × 72 h × ($98.32 − $25.66) = $83,704.32 saved
    assert "budget (P90 of simulated runs)" in r.text


def test_waterfall_steps_are_escaped_and_checked() -> None:
    """A label is text, never markup; no steps and no quote is a 422 naming the field."""
    r = _call(
        "POST",
        "/v1/charts/waterfall",
        json={
            "steps": [{"label": "<script>alert(1)</script>", "start": 0, "end": 1, "total": True}]
        },
    )
    assert r.status_code == 200
    assert "<script>" not in r.text
    assert "&lt;script&gt;" in r.text
    r = _call("POST", "/v1/charts/waterfall", json={})
    assert (r.status_code, r.json()["field"]) == (422, "steps")
    r = _call("POST", "/v1/charts/waterfall", json={"steps": []})
    assert r.status_code == 422
    r = _call(
        "POST", "/v1/charts/waterfall", json={"steps": [{"label": "x", "start": "nan", "end": 1}]}
    )
    assert r.status_code == 422
