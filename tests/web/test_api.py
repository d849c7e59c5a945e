"""HTTP API: forecast contract, validation (422 with field), limits (413, caps), catalog endpoints."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import tomllib
from typing import Any

import pytest

from conftest import EXAMPLES, TODAY, zero_hidden_plan

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from trainbill.catalog import Catalog
from trainbill.cli import main
from trainbill.web import Limits, create_app

SEED = EXAMPLES / "seed-70b-finetune.toml"


def _seed_json() -> dict[str, Any]:
    plan = tomllib.loads(SEED.read_text(encoding="utf-8"))
    out: dict[str, Any] = json.loads(json.dumps(plan, default=str))  # dates → "YYYY-MM-DD"
    return out


def _call(method: str, url: str, *, app: Any = None, **kw: Any) -> Any:
    async def go() -> Any:
        transport = httpx.ASGITransport(app=app or _APP)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.request(method, url, **kw)

    return asyncio.run(go())


_APP = create_app(today=TODAY)


def test_healthz(catalog: Catalog) -> None:
    """Liveness answers ok with the catalog version."""
    r = _call("GET", "/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok", "version": "0.1.0", "catalog": catalog.version}


def test_forecast_is_the_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    """POST /v1/forecast answers exactly what `trainbill forecast --json` prints for the same plan."""
    with pytest.raises(SystemExit) as exc:
        main(["forecast", str(SEED), "--json"])
    assert exc.value.code in (0, None)
    cli = json.loads(capsys.readouterr().out)
    r = _call("POST", "/v1/forecast", app=create_app(), json=_seed_json())
    assert r.status_code == 200
    assert r.json() == cli
    assert r.json()["quote_usd"] == pytest.approx(32 * 98.32 * 72)  # $226,529.28


def test_zero_hidden_plan_bill_equals_quote() -> None:
    """With every hidden rate at zero the bill is the quote: 4 × $98.32 × 10 h = $3,932.80."""
    r = _call("POST", "/v1/forecast", json=zero_hidden_plan())
    assert r.status_code == 200
    assert r.json()["total_usd"] == pytest.approx(4 * 98.32 * 10)
    assert r.json()["quote_usd"] == pytest.approx(4 * 98.32 * 10)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"cluster": {"instance": "p5.48xlarge", "nodes": 0}, "run": {"hours": 1}}, "cluster.nodes"),
        ({"cluster": {"instance": "p5.48xlarge", "nodez": 2}, "run": {"hours": 1}}, "cluster.nodez"),
        ({"cluster": {"instance": "p5.48xlarge", "nodes": 2}, "run": {"hours": 1},
          "purchase": {"savings_plan": "5yr"}}, "purchase.savings_plan"),
        ({"cluster": {"instance": "p5.48xlarge", "nodes": 2}}, "plan"),
    ],
)  # fmt: skip
def test_invalid_plan_is_422_with_field(body: dict[str, Any], field: str) -> None:
    """Invalid plans answer 422 {detail, field} with the field path."""
    r = _call("POST", "/v1/forecast", json=body)
    assert r.status_code == 422
    assert r.json()["field"] == field
    assert field in r.json()["detail"] or field == "plan"


def test_unknown_instance_is_422() -> None:
    """A catalog miss (TrainbillError) is the client's problem: 422 with a message, not a 500."""
    r = _call("POST", "/v1/forecast", json={"cluster": {"instance": "p9.huge", "nodes": 1}, "run": {"hours": 1}})
    assert r.status_code == 422
    assert "p9.huge" in r.json()["detail"]


def test_malformed_json_and_wrong_type_are_422() -> None:
    """Broken JSON and a non-object body are 422 naming the body."""
    r = _call("POST", "/v1/forecast", content=b"{oops", headers={"content-type": "application/json"})
    assert (r.status_code, r.json()["field"]) == (422, "body")
    r = _call("POST", "/v1/forecast", json=[1, 2])
    assert (r.status_code, r.json()["field"]) == (422, "body")


def test_body_size_limit_is_413() -> None:
    """A body over the limit is refused before parsing (64 KiB default; 200 bytes here)."""
    app = create_app(today=TODAY, limits=Limits(max_body_bytes=200))
    r = _call("POST", "/v1/forecast", app=app, json={"run": {"name": "x" * 300}})
    assert r.status_code == 413
    r = _call("POST", "/v1/forecast", content=b"x" * (64 * 1024 + 1), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_simulate_trials_are_capped() -> None:
    """trials above the cap (20,000) is 422 naming `trials`, before any work."""
    body = {"plan": zero_hidden_plan(), "trials": 20_001}
    r = _call("POST", "/v1/simulate", json=body)
    assert (r.status_code, r.json()["field"]) == (422, "trials")


def test_simulate_plan_errors_name_the_nested_field() -> None:
    """Plan errors inside the simulate body carry the `plan.` prefix."""
    plan = zero_hidden_plan(nodes=0)
    r = _call("POST", "/v1/simulate", json={"plan": plan, "trials": 10})
    assert (r.status_code, r.json()["field"]) == (422, "plan.cluster.nodes")


def test_simulate_answers_or_says_unavailable() -> None:
    """With trainbill.simulate: P50 ≤ P90; without it: 501 'not available in this build'."""
    r = _call("POST", "/v1/simulate", json={"plan": _seed_json(), "trials": 200, "seed": 1})
    if importlib.util.find_spec("trainbill.simulate") is None:
        assert r.status_code == 501
        assert "not available in this build" in r.json()["detail"]
    else:
        assert r.status_code == 200
        assert r.json()["trials"] == 200
        assert r.json()["p50_usd"] <= r.json()["p90_usd"]


def test_optimize_caps_and_availability() -> None:
    """max_candidates above 512 is 422; otherwise the planner binding answers 501 in this build."""
    r = _call("POST", "/v1/optimize", json={"plan": zero_hidden_plan(), "max_candidates": 10_000})
    assert (r.status_code, r.json()["field"]) == (422, "max_candidates")
    r = _call("POST", "/v1/optimize", json={"plan": zero_hidden_plan()})
    assert r.status_code == 501
    assert "not available in this build" in r.json()["detail"]


def test_prices_filter_and_cap(catalog: Catalog) -> None:
    """Filtering by item returns only that item's points; limit over 1,000 and a bad provider are 422."""
    r = _call("GET", "/v1/prices", params={"item": "p5.48xlarge", "option": "on_demand", "region": "us-east-1"})
    assert r.status_code == 200
    rows = r.json()["prices"]
    assert rows
    assert {(p["item"], p["option"]) for p in rows} == {("p5.48xlarge", "on_demand")}
    assert 98.32 in {p["usd"] for p in rows}  # the pre-June-2025 list price (examples/seed-70b-finetune.toml)
    assert _call("GET", "/v1/prices", params={"limit": 1001}).status_code == 422
    r = _call("GET", "/v1/prices", params={"provider": "oracle"})
    assert (r.status_code, r.json()["field"]) == (422, "provider")


def test_waterfall_chart_is_svg() -> None:
    """The page's chart endpoint returns the report's SVG; unknown categories are 422."""
    r = _call("POST", "/v1/charts/waterfall", json={"quote_usd": 100, "by_category": {"compute": 80, "storage": 30}})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.startswith("<svg")
    assert "+$30" in r.text  # storage adds $30
    r = _call("POST", "/v1/charts/waterfall", json={"quote_usd": 1, "by_category": {"pizza": 1}})
    assert (r.status_code, r.json()["field"]) == (422, "by_category")


def test_sizing_marks_the_plan_and_front() -> None:
    """The sizing sweep includes the plan's own 32 nodes and at least one Pareto point."""
    r = _call("POST", "/v1/sizing", json=_seed_json())
    assert r.status_code == 200
    pts = r.json()["points"]
    assert [p["nodes"] for p in pts if p["current"]] == [32]
    assert any(p["pareto"] for p in pts)


def test_page_and_openapi() -> None:
    """GET / serves the calculator (no external scripts); the OpenAPI document lists the endpoints."""
    r = _call("GET", "/")
    assert r.status_code == 200
    assert 'id="nodes"' in r.text
    assert "https://" not in r.text
    assert "http://" not in r.text
    paths = _call("GET", "/openapi.json").json()["paths"]
    for p in ("/v1/forecast", "/v1/simulate", "/v1/optimize", "/v1/prices", "/healthz"):
        assert p in paths
