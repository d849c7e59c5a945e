"""HTTP API: forecast contract, validation (422 with field), limits (413, caps), catalog
endpoints."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from conftest import SEED, TODAY, run_cli, zero_hidden_plan

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from trainbill.catalog import Catalog
from trainbill.web import Limits, create_app
from web.asgi_client import call, seed_json


def _call(method: str, url: str, *, app: Any = None, **kw: Any) -> Any:
    return call(app or _APP, method, url, **kw)


_APP = create_app(today=TODAY)


def test_healthz(catalog: Catalog) -> None:
    """Liveness answers ok with the catalog version."""
    r = _call("GET", "/healthz")
    assert r.status_code == 200
    assert r.json() == {"status": "ok", "version": "0.1.0", "catalog": catalog.version}


def test_forecast_is_the_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    """POST /v1/forecast answers exactly what `trainbill forecast --json` prints for the same
    plan."""
    code, out, _err = run_cli(capsys, "forecast", str(SEED), "--json")
    assert code == 0
    cli = json.loads(out)
    r = _call("POST", "/v1/forecast", app=create_app(), json=seed_json())
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
        (
            {"cluster": {"instance": "p5.48xlarge", "nodes": 0}, "run": {"hours": 1}},
            "cluster.nodes",
        ),
        (
            {"cluster": {"instance": "p5.48xlarge", "nodez": 2}, "run": {"hours": 1}},
            "cluster.nodez",
        ),
        (
            {
                "cluster": {"instance": "p5.48xlarge", "nodes": 2},
                "run": {"hours": 1},
                "purchase": {"savings_plan": "5yr"},
            },
            "purchase.savings_plan",
        ),
        ({"cluster": {"instance": "p5.48xlarge", "nodes": 2}}, "plan"),
    ],
)
def test_invalid_plan_is_422_with_field(body: dict[str, Any], field: str) -> None:
    """Invalid plans answer 422 {detail, field} with the field path."""
    r = _call("POST", "/v1/forecast", json=body)
    assert r.status_code == 422
    assert r.json()["field"] == field
    assert field in r.json()["detail"] or field == "plan"


def test_unknown_instance_is_422() -> None:
    """A catalog miss (TrainbillError) is the client's problem: 422 with a message, not a 500."""
    r = _call(
        "POST",
        "/v1/forecast",
        json={"cluster": {"instance": "p9.huge", "nodes": 1}, "run": {"hours": 1}},
    )
    assert r.status_code == 422
    assert "p9.huge" in r.json()["detail"]


def test_malformed_json_and_wrong_type_are_422() -> None:
    """Broken JSON and a non-object body are 422 naming the body."""
    r = _call(
        "POST", "/v1/forecast", content=b"{oops", headers={"content-type": "application/json"}
    )
    assert (r.status_code, r.json()["field"]) == (422, "body")
    r = _call("POST", "/v1/forecast", json=[1, 2])
    assert (r.status_code, r.json()["field"]) == (422, "body")


def test_body_size_limit_is_413() -> None:
    """A body over the limit is refused before parsing (64 KiB default; 200 bytes here)."""
    app = create_app(today=TODAY, limits=Limits(max_body_bytes=200))
    r = _call("POST", "/v1/forecast", app=app, json={"run": {"name": "x" * 300}})
    assert r.status_code == 413
    r = _call(
        "POST",
        "/v1/forecast",
        content=b"x" * (64 * 1024 + 1),
        headers={"content-type": "application/json"},
    )
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
    r = _call("POST", "/v1/simulate", json={"plan": seed_json(), "trials": 200, "seed": 1})
    if importlib.util.find_spec("trainbill.simulate") is None:
        assert r.status_code == 501
        assert "not available in this build" in r.json()["detail"]
    else:
        assert r.status_code == 200
        assert r.json()["trials"] == 200
        assert r.json()["p50_usd"] <= r.json()["p90_usd"]


#: A one-instance, one-mix search over 4 and 8 nodes: small enough to reason about by hand.
_SMALL_SPACE: dict[str, Any] = {
    "instances": ["p5.48xlarge"],
    "nodes": [4, 8],
    "spot_fractions": [0.0],
    "savings_plans": ["none"],
    "orchestrators": ["ec2"],
    "checkpoint_intervals_hours": [1.0],
}


def test_optimize_is_the_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    """POST /v1/optimize answers what `trainbill optimize --json` prints for the same inputs (bar
    the timer)."""
    args = [
        "optimize",
        str(SEED),
        "--json",
        "--clouds",
        "aws",
        "--instances",
        "p5.48xlarge,p4d.24xlarge",
        "--deadline-hours",
        "100",
    ]
    code, out, _err = run_cli(capsys, *args)
    assert code == 0
    cli = json.loads(out)
    body = {"plan": seed_json(), "deadline_hours": 100, "clouds": ["aws"],
            "space": {"instances": ["p5.48xlarge", "p4d.24xlarge"]}}  # fmt: skip
    r = _call("POST", "/v1/optimize", app=create_app(), json=body)
    assert r.status_code == 200, r.text
    api = r.json()
    for key in ("best", "pareto", "evaluated", "elapsed_s"):
        assert key in api
    for key in ("instance", "nodes", "spot_fraction", "savings_plan", "total_usd", "wall_hours"):
        assert key in api["best"]
    assert api["best"]["wall_hours"] <= 100
    api.pop("elapsed_s")
    cli.pop("elapsed_s")
    assert api == cli


def test_optimize_picks_the_cheapest_plan_in_time() -> None:
    """Zero hidden costs, run.hours 10 on 4 nodes: 8 nodes take 10 × 4/8 = 5 h for 8 × $98.32 × 5 =
    $3,932.80.

    Both sizes cost the same $3,932.80, but only 8 nodes meet a 6 h deadline.
    """
    plan = {
        **zero_hidden_plan(),
        "checkpoint": {"interval_hours": 1.0},
    }  # the one interval searched
    body = {"plan": plan, "deadline_hours": 6, "clouds": ["aws"], "space": _SMALL_SPACE}
    r = _call("POST", "/v1/optimize", json=body)
    assert r.status_code == 200, r.text
    best = r.json()["best"]
    assert (best["instance"], best["nodes"], best["spot_fraction"], best["savings_plan"]) == (
        "p5.48xlarge",
        8,
        0.0,
        "none",
    )
    assert best["wall_hours"] == pytest.approx(5.0)
    assert best["total_usd"] == pytest.approx(8 * 98.32 * 5)
    # 2 node counts × 1 orchestrator × 1 interval × 1 spot share × 1 SP option, plus the user's plan
    assert r.json()["evaluated"] == 2 + 1


def test_optimize_infeasible_names_the_binding_constraint() -> None:
    """A 1 h deadline when the fastest plan (8 nodes) takes 5 h: 422, binding deadline, 5 − 1 = 4 h
    short."""
    body = {
        "plan": zero_hidden_plan(),
        "deadline_hours": 1,
        "clouds": ["aws"],
        "space": _SMALL_SPACE,
    }
    r = _call("POST", "/v1/optimize", json=body)
    assert r.status_code == 422
    out = r.json()
    assert (out["binding"], out["field"]) == ("deadline", "deadline_hours")
    assert out["shortfall"] == pytest.approx(4.0)
    assert "deadline" in out["detail"]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"deadline_hours": 0}, "deadline_hours"),
        ({"deadline_hours": -5}, "deadline_hours"),
        ({"budget_usd": 0}, "budget_usd"),
        ({"clouds": ["oracle"]}, "clouds"),
        ({"clouds": []}, "clouds"),
        ({"space": {**_SMALL_SPACE, "nodes": []}}, "space.nodes"),
        ({"space": {**_SMALL_SPACE, "spot_fractions": []}}, "space.spot_fractions"),
        ({"space": {**_SMALL_SPACE, "spot_fractions": [1.5]}}, "space.spot_fractions"),
        ({"space": {**_SMALL_SPACE, "nodes": [0]}}, "space.nodes.0"),
        ({"space": {"instances": ["p5.48xlarge"], "nodez": [4]}}, "space.nodez"),
        ({"objective": "cheapest"}, "objective"),
    ],
)  # fmt: skip
def test_optimize_bad_input_is_422_with_field(extra: dict[str, Any], field: str) -> None:
    """Deadline ≤ 0, budget ≤ 0, unknown or no cloud, empty or out-of-range axes: 422 naming the
    field."""
    body = {"plan": zero_hidden_plan(), "clouds": ["aws"], "space": _SMALL_SPACE, **extra}
    r = _call("POST", "/v1/optimize", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field


def test_optimize_plan_errors_and_unknown_instance() -> None:
    """Plan errors carry the `plan.` prefix; an unknown instance type is 422 naming it."""
    r = _call("POST", "/v1/optimize", json={"plan": zero_hidden_plan(nodes=0)})
    assert (r.status_code, r.json()["field"]) == (422, "plan.cluster.nodes")
    body = {"plan": zero_hidden_plan(), "space": {**_SMALL_SPACE, "instances": ["p9.huge"]}}
    r = _call("POST", "/v1/optimize", json=body)
    assert r.status_code == 422
    assert "p9.huge" in r.json()["detail"]


def test_optimize_search_size_is_capped() -> None:
    """Instance types × node counts over the cap is 422 on `space` before any work.

    Cap 20 here, counted as the planner searches: exactly the instances named (the plan's own
    p5 is compared as written, not searched), so p4d and p4de = 2 instance types × nodes 1-11 =
    22 > 20. Named with the plan's own p5 (2 types) and nodes 1-10 (10 counts, which hold the
    plan's own 4) it is 20: within the cap. 65 node counts exceed the per-axis cap of 64.
    """
    app = create_app(today=TODAY, limits=Limits(max_search_cells=20))
    space = {"instances": ["p4d.24xlarge", "p4de.24xlarge"], "nodes": list(range(1, 12))}
    r = _call("POST", "/v1/optimize", app=app, json={"plan": zero_hidden_plan(), "space": space})
    assert (r.status_code, r.json()["field"]) == (422, "space")
    assert "2 instance types × 11 node counts = 22" in r.json()["detail"]
    fits = {"instances": ["p5.48xlarge", "p4d.24xlarge"], "nodes": list(range(1, 11))}
    r = _call("POST", "/v1/optimize", app=app, json={"plan": zero_hidden_plan(), "space": fits})
    assert r.status_code == 200
    r = _call(
        "POST",
        "/v1/optimize",
        json={"plan": zero_hidden_plan(), "space": {"nodes": list(range(1, 66))}},
    )
    assert (r.status_code, r.json()["field"]) == (422, "space.nodes")


def test_prices_filter_and_cap(catalog: Catalog) -> None:
    """Filtering by item returns only that item's points; limit over 1,000 and a bad provider are
    422."""
    r = _call(
        "GET",
        "/v1/prices",
        params={"item": "p5.48xlarge", "option": "on_demand", "region": "us-east-1"},
    )
    assert r.status_code == 200
    rows = r.json()["prices"]
    assert rows
    assert {(p["item"], p["option"]) for p in rows} == {("p5.48xlarge", "on_demand")}
    assert 98.32 in {
        p["usd"] for p in rows
    }  # the pre-June-2025 list price (examples/seed-70b-finetune.toml)
    assert _call("GET", "/v1/prices", params={"limit": 1001}).status_code == 422
    r = _call("GET", "/v1/prices", params={"provider": "oracle"})
    assert (r.status_code, r.json()["field"]) == (422, "provider")


def test_waterfall_chart_is_svg() -> None:
    """The page's chart endpoint returns the report's SVG; unknown categories are 422."""
    r = _call(
        "POST",
        "/v1/charts/waterfall",
        json={"quote_usd": 100, "by_category": {"compute": 80, "storage": 30}},
    )
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.startswith("<svg")
    assert "+$30" in r.text  # storage adds $30
    r = _call("POST", "/v1/charts/waterfall", json={"quote_usd": 1, "by_category": {"pizza": 1}})
    assert (r.status_code, r.json()["field"]) == (422, "by_category")


def test_sizing_marks_the_plan_and_front() -> None:
    """The sizing sweep includes the plan's own 32 nodes and at least one Pareto point."""
    r = _call("POST", "/v1/sizing", json=seed_json())
    assert r.status_code == 200
    pts = r.json()["points"]
    assert [p["nodes"] for p in pts if p["current"]] == [32]
    assert any(p["pareto"] for p in pts)


def test_page_and_openapi() -> None:
    """GET / serves the calculator (no external scripts); the OpenAPI document lists the
    endpoints."""
    r = _call("GET", "/")
    assert r.status_code == 200
    assert 'id="nodes"' in r.text
    assert "https://" not in r.text
    assert "http://" not in r.text
    paths = _call("GET", "/openapi.json").json()["paths"]
    for p in ("/v1/forecast", "/v1/simulate", "/v1/optimize", "/v1/prices", "/healthz"):
        assert p in paths


def test_a_whole_plan_error_in_a_body_names_the_plan_once() -> None:
    """An empty plan fails a check across sections (no instance or GPU): the field is the body's
    `plan`, not `plan.plan`."""
    r = _call("POST", "/v1/simulate", json={"plan": {}, "trials": 10})
    assert (r.status_code, r.json()["field"]) == (422, "plan")
    assert "cluster needs an instance" in r.json()["detail"]


@pytest.mark.parametrize(
    ("cluster", "field"),
    [
        ({"instance": "p9.huge", "nodes": 2}, "cluster.instance"),
        ({"gpu": "x100", "gpus": 8}, "cluster.gpu"),
    ],
)
def test_an_unknown_instance_or_gpu_names_its_field(cluster: dict[str, Any], field: str) -> None:
    """The catalog's miss (with its "did you mean") is a 422 naming the plan's field."""
    plan = {**zero_hidden_plan(), "cluster": cluster}
    r = _call("POST", "/v1/forecast", json=plan)
    assert (r.status_code, r.json()["field"]) == (422, field)


def test_a_switch_is_a_json_boolean_only() -> None:
    """Was: ``"allow_stand_ins": "yes"`` (or 1, "on") was read as true by pydantic's lax mode
    and searched catalog stand-ins; a switch takes true or false, else a 422 naming it."""
    for value in ("yes", 1, "on"):
        body = {"plan": zero_hidden_plan(), "allow_stand_ins": value}
        r = _call("POST", "/v1/optimize", json=body)
        assert r.status_code == 422, value
        assert "allow_stand_ins" in json.dumps(r.json()), value
