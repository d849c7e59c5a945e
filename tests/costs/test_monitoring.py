"""Monitoring driver on a tiny catalog: custom metrics prorated by the hour, logs per GB ingested.

Every plan is ``conftest.zero_hidden_plan`` (4 × p5.48xlarge for exactly 10 h, every hidden
cost off, so the wall-clock is exactly the 10 h the plan states) with monitoring switched on.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import monitoring
from trainbill.costs._pricing import UNPRICED
from trainbill.errors import PriceNotFoundError
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import usage_for

NODE_HOUR = price("p5.48xlarge", "on_demand", "instance-hour", 10.0)
METRIC = price("cloudwatch.metric", "on_demand", "metric-month", 0.5)
LOGS = price("cloudwatch.logs_ingest", "on_demand", "GB", 1.0)


def _lines(base: Catalog, *prices: Any, **monitoring_: Any) -> list[Charge]:
    """The monitoring charges of the 4-node, 10 h plan on a tiny catalog of ``prices``."""
    plan = zero_hidden_plan()
    plan["monitoring"] = {**plan["monitoring"], **monitoring_}
    tiny = tiny_catalog(base, *prices)
    u = usage_for(plan_from_dict(plan), tiny, today=TODAY)
    assert u.wall_hours == 10.0  # nothing stalls: hand arithmetic below uses 10 h
    return list(monitoring.price(u, tiny))


def test_custom_metrics_are_prorated_by_the_hour(catalog: Catalog) -> None:
    """73 metrics on each of 4 nodes for 10 h is 4 metric-months, not 292."""
    (line,) = _lines(catalog, NODE_HOUR, METRIC, custom_metrics_per_node=73)
    # 4 nodes × 73 metrics × 10 h / 730 h = 4 metric-months × $0.5 = $2
    assert line.item == "CloudWatch custom metrics"
    assert line.unit == "metric-month"
    assert line.quantity == pytest.approx(4.0)
    assert line.unit_price_usd == 0.5
    assert line.cost_usd == pytest.approx(2.0)


def test_logs_are_billed_per_gb_ingested(catalog: Catalog) -> None:
    """0.25 GB per node-hour from 4 nodes for 10 h is 10 GB of ingest."""
    (line,) = _lines(catalog, NODE_HOUR, LOGS, logs_gb_per_node_hour=0.25)
    # 4 nodes × 10 h × 0.25 GB = 10 GB × $1 = $10
    assert line.item == "CloudWatch Logs ingest"
    assert line.quantity == pytest.approx(10.0)
    assert line.cost_usd == pytest.approx(10.0)


def test_no_monitoring_gives_no_lines(catalog: Catalog) -> None:
    """Zero metrics and zero logs: nothing is looked up or billed (no price needed)."""
    assert _lines(catalog, NODE_HOUR) == []


def test_missing_aws_metric_price_is_an_error(catalog: Catalog) -> None:
    """An AWS metric price absent from the catalog raises, naming the item, instead of $0."""
    with pytest.raises(PriceNotFoundError, match=r"cloudwatch\.metric"):
        _lines(catalog, NODE_HOUR, LOGS, custom_metrics_per_node=73)


def test_gcp_metrics_without_a_price_are_not_priced(catalog: Catalog) -> None:
    """GCP metrics with no GCP price point: a $0 NOT PRICED line, not CloudWatch's $0.5."""
    plan = zero_hidden_plan()
    plan["cluster"] = {"provider": "gcp", "instance": "a3-highgpu-8g", "nodes": 4}
    plan["monitoring"] = {"custom_metrics_per_node": 73, "logs_gb_per_node_hour": 0}
    node = price(
        "a3-highgpu-8g", "on_demand", "instance-hour", 10.0, provider="gcp", region="us-central1"
    )
    tiny = tiny_catalog(catalog, node, METRIC, LOGS)
    (line,) = monitoring.price(usage_for(plan_from_dict(plan), tiny, today=TODAY), tiny)
    assert line.quantity == pytest.approx(4.0)  # 4 × 73 × 10 / 730, as on AWS
    assert line.unit_price_usd == 0.0
    assert line.source.startswith(UNPRICED)


def test_custom_metrics_are_billed_in_their_volume_tiers(catalog: Catalog) -> None:
    """Was: every metric at the first tier's price. A tiny catalog with tiers at 100 and 300
    metrics ($0.5, $0.2, $0.1): 4 nodes × 100 metrics = 400 metrics, 100 at $0.5, 200 at $0.2
    and 100 at $0.1, each prorated over 10 h / 730 h."""
    tiers = (
        price("cloudwatch.metric.above_100", "on_demand", "metric-month", 0.2),
        price("cloudwatch.metric.above_300", "on_demand", "metric-month", 0.1),
    )
    lines = _lines(catalog, NODE_HOUR, METRIC, *tiers, custom_metrics_per_node=100)
    months = 10 / 730
    assert [(ln.item, ln.unit_price_usd) for ln in lines] == [
        ("CloudWatch custom metrics (0-100 metrics tier)", 0.5),
        ("CloudWatch custom metrics (100-300 metrics tier)", 0.2),
        ("CloudWatch custom metrics (300+ metrics tier)", 0.1),
    ]
    assert [ln.quantity for ln in lines] == pytest.approx(
        [100 * months, 200 * months, 100 * months]
    )
    assert sum(ln.cost_usd for ln in lines) == pytest.approx((50 + 40 + 10) * months)
    # 4 × 20 = 80 metrics stay in the first tier: one line under the product's plain name.
    (one,) = _lines(catalog, NODE_HOUR, METRIC, *tiers, custom_metrics_per_node=20)
    assert (one.item, one.quantity) == ("CloudWatch custom metrics", pytest.approx(80 * months))
