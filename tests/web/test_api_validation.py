"""HTTP API input validation: booleans, non-finite and absurd numbers, stray query parameters
and non-JSON bodies get a 4xx naming the field, never a 500 or a 200 with nulls."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from trainbill.web import create_app
from web.asgi_client import call

_APP = create_app(today=TODAY)
_JSON = {"content-type": "application/json"}


def _call(method: str, url: str, **kw: Any) -> Any:
    return call(_APP, method, url, **kw)


def _raw(url: str, body: str) -> Any:
    return _call("POST", url, content=body.encode(), headers=_JSON)


def _refused(r: Any, field: str | None, status: int = 422) -> dict[str, Any]:
    assert r.status_code == status, r.text
    out: dict[str, Any] = r.json()
    assert out["field"] == field
    assert "Traceback" not in out["detail"]
    return out


_PLAN = '{"run": {"hours": %s}, "cluster": {"instance": "p5.48xlarge", "nodes": 4}}'


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/v1/forecast", _PLAN % "Infinity", "run.hours"),  # Python's json reads the literal
        ("/v1/forecast", _PLAN % "1e400", "run.hours"),  # overflows to inf while parsing
        ("/v1/forecast", _PLAN % '"inf"', "run.hours"),
        ("/v1/sizing", _PLAN % '"inf"', "run.hours"),
        # was 500
        ("/v1/simulate", '{"trials": 10, "plan": %s}' % (_PLAN % '"inf"'), "plan.run.hours"),
        ("/v1/optimize", '{"plan": %s}' % (_PLAN % '"inf"'), "plan.run.hours"),  # was 500
        (
            "/v1/forecast",
            (
                '{"model": {"params": 7e10, "tokens": "inf"},'
                ' "cluster": {"instance": "p5.48xlarge", "nodes": 4}}'
            ),
            "model.tokens",
        ),
        (
            "/v1/forecast",
            (
                '{"run": {"hours": 10, "deadline_hours": "Infinity"}, "cluster": {"instance": '
                '"p5.48xlarge", "nodes": 4}}'
            ),
            "run.deadline_hours",
        ),
        (
            "/v1/forecast",
            (
                '{"run": {"hours": 10}, "checkpoint": {"interval_hours": Infinity}, "cluster": '
                '{"instance": "p5.48xlarge", "nodes": 4}}'
            ),
            "checkpoint.interval_hours",
        ),
    ],
)
def test_non_finite_plan_numbers_are_refused(url: str, body: str, field: str) -> None:
    """An infinite hour count used to price as `$inf` (200 with null costs) or crash (500)."""
    out = _refused(_raw(url, body), field)
    assert "finite" in out["detail"]


@pytest.mark.parametrize(
    ("url", "wrap", "field"),
    [
        ("/v1/forecast", False, "run.hours"),
        ("/v1/sizing", False, "run.hours"),
        ("/v1/simulate", True, "plan.run.hours"),
        ("/v1/optimize", True, "plan.run.hours"),
    ],
)
def test_absurd_hours_are_refused_not_nulled(url: str, wrap: bool, field: str) -> None:
    """run.hours = 1e308 answered 200 with quote_usd null (forecast) or 500 (simulate, optimize)."""
    plan = zero_hidden_plan()
    plan["run"]["hours"] = 1e308
    body: dict[str, Any] = {"plan": plan, "trials": 10} if url == "/v1/simulate" else {"plan": plan}
    out = _refused(_call("POST", url, json=body if wrap else plan), field)
    assert "1,000,000" in out["detail"]


def test_the_hour_cap_is_inclusive() -> None:
    """1,000,000 h is still answered: 4 × $98.32 × 1e6 h = $393,280,000 with no hidden costs."""
    plan = zero_hidden_plan()
    plan["run"]["hours"] = 1e6
    r = _call("POST", "/v1/forecast", json=plan)
    assert r.status_code == 200, r.text
    assert r.json()["total_usd"] == pytest.approx(393_280_000)


def test_absurd_tokens_name_the_tokens() -> None:
    """1e308 tokens derive infinite hours: refused on model.tokens, not a 200 with nulls."""
    body = {
        "model": {"params": 7e10, "tokens": 1e308},
        "cluster": {"instance": "p5.48xlarge", "nodes": 4},
    }
    _refused(_call("POST", "/v1/forecast", json=body), "model.tokens")


def test_overflowing_hidden_cost_is_refused() -> None:
    """A 1e308 GB EBS volume made the storage line inf and the bill null with status 200; the
    plan schema's cap (a petabyte per node) now refuses it on the field itself."""
    plan = zero_hidden_plan()
    plan["storage"]["ebs_gb_per_node"] = 1e308
    out = _refused(_call("POST", "/v1/forecast", json=plan), "storage.ebs_gb_per_node")
    assert "at most 1,000,000" in out["detail"]


def test_overflowing_model_size_is_not_a_500() -> None:
    """params = 1e308 raised OverflowError in the time model (500)."""
    body = {
        "model": {"params": 1e308, "tokens": 1e12},
        "cluster": {"instance": "p5.48xlarge", "nodes": 4},
    }
    for url, payload in [
        ("/v1/forecast", body),
        ("/v1/sizing", body),
        ("/v1/simulate", {"plan": body, "trials": 10}),
    ]:
        r = _call("POST", url, json=payload)
        assert r.status_code == 422, (url, r.text)
        assert "too large" in r.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            '{"run": {"hours": 1}, "cluster": {"instance": "p5.48xlarge", "nodes": 1000000000}}',
            "cluster.nodes",
        ),
        (
            '{"run": {"hours": 1}, "cluster": {"instance": "p5.48xlarge", "nodes": 1%s}}'
            % ("0" * 400),
            "cluster.nodes",
        ),
        (
            '{"run": {"hours": 1}, "cluster": {"gpu": "h100", "gpus": 1%s}}' % ("0" * 400),
            "cluster.gpus",
        ),
        (
            (
                '{"run": {"hours": 1}, "cluster": {"instance": "p5.48xlarge", "nodes": 1, '
                '"extra_groups": [{"instance": "p5.48xlarge", "count": 1000000000000}]}}'
            ),
            "cluster.extra_groups.0.count",
        ),
    ],
)
def test_node_counts_are_capped(body: str, field: str) -> None:
    """10**9 nodes priced a $3.5e17 bill; 10**400 GPUs overflowed (500)."""
    out = _refused(_raw("/v1/forecast", body), field)
    assert "at most" in out["detail"]


def test_the_node_cap_is_inclusive() -> None:
    """100,000 nodes are still priced: 100,000 × $98.32 × 10 h = $98,320,000."""
    r = _call("POST", "/v1/forecast", json=zero_hidden_plan(nodes=100_000))
    assert r.status_code == 200, r.text
    assert r.json()["quote_usd"] == pytest.approx(98_320_000)


_OPT_PLAN = {
    "run": {"hours": 10, "deadline_hours": 100},
    "cluster": {"instance": "p5.48xlarge", "nodes": 4},
}
_SPACE = {"instances": ["p5.48xlarge"], "nodes": [1, 2]}


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/v1/simulate", {"plan": zero_hidden_plan(), "trials": True}, "trials"),  # ran 1 trial
        # seed 1
        ("/v1/simulate", {"plan": zero_hidden_plan(), "trials": 10, "seed": True}, "seed"),
        (
            "/v1/optimize",
            {"plan": _OPT_PLAN, "deadline_hours": True, "space": _SPACE},
            "deadline_hours",
        ),
        ("/v1/optimize", {"plan": _OPT_PLAN, "budget_usd": True, "space": _SPACE}, "budget_usd"),
        (
            "/v1/optimize",
            {"plan": _OPT_PLAN, "space": {**_SPACE, "nodes": [True]}},
            "space.nodes.0",
        ),
        (
            "/v1/optimize",
            {"plan": _OPT_PLAN, "space": {**_SPACE, "spot_fractions": [True]}},
            "space.spot_fractions.0",
        ),
        ("/v1/charts/waterfall", {"quote_usd": True, "by_category": {}}, "quote_usd"),
        (
            "/v1/charts/waterfall",
            {"quote_usd": 1, "by_category": {"compute": True}},
            "by_category.compute",
        ),
    ],
)
def test_booleans_are_not_numbers(url: str, body: dict[str, Any], field: str) -> None:
    """`true` was read as 1: one trial, seed 1, a 1-hour deadline, a $1 budget, one node."""
    out = _refused(_call("POST", url, json=body), field)
    assert "boolean" in out["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"plan": _OPT_PLAN, "deadline_hours": "inf", "space": _SPACE}, "deadline_hours"),
        ({"plan": _OPT_PLAN, "budget_usd": "nan", "space": _SPACE}, "budget_usd"),
        ({"plan": _OPT_PLAN, "space": {**_SPACE, "checkpoint_intervals_hours": ["inf"]}},
         "space.checkpoint_intervals_hours.0"),  # was accepted
        ({"plan": _OPT_PLAN, "space": {**_SPACE, "checkpoint_intervals_hours": ["nan"]}},
         "space.checkpoint_intervals_hours.0"),  # was blamed on checkpoint.interval_hours
    ],
)  # fmt: skip
def test_optimize_non_finite_inputs_name_the_field(body: dict[str, Any], field: str) -> None:
    """Non-finite planner inputs are refused on the request's own field."""
    _refused(_call("POST", "/v1/optimize", json=body), field)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"quote_usd": "inf", "by_category": {}}, "quote_usd"),
        # drew y="nan"
        ({"quote_usd": 1, "by_category": {"compute": "nan"}}, "by_category.compute"),
        ({"quote_usd": 1, "by_category": {"storage": "-inf"}}, "by_category.storage"),
        (
            {"quote_usd": 100, "by_category": {"compute": 100, "storage": -500}},
            "by_category.storage",
        ),
        (
            {"quote_usd": 100, "by_category": {"compute": 100, "discount": 50}},
            "by_category.discount",
        ),
        ({"quote_usd": 1e308, "by_category": {"compute": 1e308, "storage": 1e308}}, "by_category"),
    ],
)
def test_waterfall_refuses_impossible_amounts(body: dict[str, Any], field: str) -> None:
    """NaN, infinite, negative (except discount) and overflowing amounts drew a broken SVG (200)."""
    _refused(_call("POST", "/v1/charts/waterfall", json=body), field)


def test_waterfall_still_draws_a_negative_discount() -> None:
    """A Savings Plan discount is negative by nature: $100 quote, -$30 discount draws (real bill
    $70)."""
    r = _call(
        "POST",
        "/v1/charts/waterfall",
        json={"quote_usd": 100, "by_category": {"compute": 100, "discount": -30}},
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert "discount" in r.text
    assert "$70" in r.text
    assert "nan" not in r.text


def test_unknown_query_parameter_is_refused() -> None:
    """`?provder=gcp` (a typo) answered every provider's prices with 200."""
    out = _refused(_call("GET", "/v1/prices?provder=gcp"), "provder")
    assert "provider" in out["detail"]  # the allowed names are listed
    _refused(_call("POST", "/v1/forecast?hours=5", json=zero_hidden_plan()), "hours")


def test_repeated_query_parameter_is_refused() -> None:
    """`?provider=aws&provider=gcp` silently answered gcp only."""
    _refused(_call("GET", "/v1/prices?provider=aws&provider=gcp"), "provider")


def test_known_query_parameters_and_the_page_still_work() -> None:
    """The guard leaves valid queries and the page (which may carry tracking parameters) alone."""
    r = _call("GET", "/v1/prices?provider=gcp&limit=1")
    assert r.status_code == 200
    assert [p["provider"] for p in r.json()["prices"]] == ["gcp"]
    assert _call("GET", "/?utm_source=mail").status_code == 200


def test_body_that_is_not_utf8_json_names_the_body() -> None:
    """Bytes that are not UTF-8 answered {"detail": "There was an error parsing the body"} with no
    field."""
    r = _call("POST", "/v1/forecast", content=b'{"run": "\xff"}', headers=_JSON)
    out = _refused(r, "body", status=400)
    assert "JSON" in out["detail"]


def test_non_json_content_type_says_so() -> None:
    """A TOML or text/plain body was told only "Input should be a valid dictionary"."""
    r = _call(
        "POST",
        "/v1/forecast",
        content=b"[run]\nhours = 1\n",
        headers={"content-type": "application/toml"},
    )
    out = _refused(r, "body")
    assert "application/json" in out["detail"]
    assert "application/toml" in out["detail"]


def test_a_price_date_before_the_instance_launched_names_prices_as_of() -> None:
    """p5.48xlarge launched on 2023-07-26 (catalog instances.csv, AWS's launch post): a plan
    priced on 2020-01-01 is refused with the field that fixes it, as the CLI's message says."""
    body = (
        '{"run": {"hours": 10}, "cluster": {"instance": "p5.48xlarge", "nodes": 4}, '
        '"prices": {"as_of": "2020-01-01"}}'
    )
    out = _refused(_raw("/v1/forecast", body), "prices.as_of")
    assert "launched on 2023-07-26" in out["detail"]
