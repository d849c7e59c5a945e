"""Output consistency: every output adds up, and outputs that show the same plan agree.

The invariant tests run deliberately varied plans (providers, TPUs billed per chip, MoE, fp8,
spot and Savings Plan mixes, S3/FSx/EBS checkpoints, cross-AZ/region data, extra groups, long
context, hostile run names) through the forecast, the HTML report and the what-ifs
(``compare-orchestrators``, ``sparse-attention``, ``rule-of-thumb``) and check the arithmetic
every output must obey. The planner's own regressions are in ``test_optimize.py``.
"""

from __future__ import annotations

import html
import math
import re
from datetime import date
from typing import Any

import pytest

from conftest import LONG_CONTEXT_PLAN, TODAY
from trainbill.catalog import Catalog
from trainbill.costs._pricing import instance_rate
from trainbill.forecasting import HIDDEN_LABELS, forecast
from trainbill.ledger import CATEGORIES
from trainbill.report import build_report, render_html
from trainbill.report.format import hours, money, money_change
from trainbill.spec import plan_from_dict
from trainbill.whatif import (
    compare_orchestrators,
    rule_of_thumb,
    sparse_attention,
    with_orchestrator,
)

VARIED_PLANS: dict[str, dict[str, Any]] = {
    "aws-seed-like": {
        "run": {"hours": 72},
        "model": {"params": 70e9},
        "cluster": {"instance": "p5.48xlarge", "nodes": 32},
        "purchase": {"spot_fraction": 0.5, "savings_plan": "1yr", "savings_plan_coverage": 0.5},
        "prices": {"as_of": date(2025, 5, 1)},
        "storage": {
            "ebs_gb_per_node": 2000,
            "ebs_iops": 10000,
            "ebs_throughput_mibps": 500,
            "fsx_capacity_gb": 24000,
            "fsx_tier": "persistent_250",
        },
        "data": {"dataset_gb": 2000, "location": "cross_az", "epochs": 3},
        "checkpoint": {"interval_hours": 2, "target": "fsx"},
        "network": {"nat_gateways": 1, "s3_via_nat": True, "public_ips_per_node": 1},
    },
    "aws-moe-fp8-hyperpod": {
        "model": {"params": 100e9, "active_params": 20e9, "tokens": 1e11, "precision": "fp8"},
        "cluster": {
            "instance": "p5.48xlarge",
            "nodes": 16,
            "orchestrator": "hyperpod",
            "extra_groups": [{"name": "head", "instance": "c5.large", "count": 1}],
        },
        "purchase": {"spot_fraction": 1.0},
        "prices": {"as_of": date(2025, 7, 1)},
        "checkpoint": {"target": "s3", "asynchronous": True},
        "data": {"location": "cross_region"},
    },
    "aws-eks-a100-ebs": {
        "model": {"params": 7e9, "tokens": 1e11, "layers": 32, "d_model": 4096},
        "cluster": {"instance": "p4d.24xlarge", "nodes": 4, "orchestrator": "eks"},
        "purchase": {"savings_plan": "3yr"},
        "prices": {"as_of": date(2026, 1, 1)},
        "checkpoint": {"target": "ebs"},
        "evaluation": {"interval_steps": 0},
    },
    "gcp-tpu-chip-billed": {
        "run": {"hours": 24},
        "cluster": {"provider": "gcp", "gpu": "tpu-v6e", "gpus": 64},
        "purchase": {"spot_fraction": 0.25, "savings_plan": "1yr"},
        "prices": {"as_of": date(2025, 7, 1)},
    },
    "azure-one-node": {
        "run": {"hours": 0.5},
        "cluster": {"provider": "azure", "instance": "Standard_ND96asr_v4", "nodes": 1},
        "purchase": {"spot_fraction": 0.5, "savings_plan": "3yr", "savings_plan_coverage": 1.0},
        "prices": {"as_of": date(2025, 7, 1)},
        "monitoring": {"custom_metrics_per_node": 50, "logs_gb_per_node_hour": 0.1},
    },
}


@pytest.mark.parametrize("name", sorted(VARIED_PLANS))
def test_forecast_json_adds_up(name: str, commitment_catalog: Catalog) -> None:
    """Lines multiply out and sum to the total; categories, percentages and hours agree."""
    catalog = commitment_catalog  # the plans' Savings Plans need rates (illustrative, conftest)
    fc = forecast(plan_from_dict(VARIED_PLANS[name]), catalog, today=TODAY)
    d = fc.as_dict()
    lines = d["lines"]
    assert lines
    for line in lines:
        assert all(math.isfinite(line[k]) for k in ("quantity", "unit_price_usd", "cost_usd"))
        assert _close(line["quantity"] * line["unit_price_usd"], line["cost_usd"])
        if line["category"] == "discount" and line["unit"] != "hour":
            assert line["cost_usd"] < 0
        else:
            assert line["quantity"] > 0
            assert line["unit_price_usd"] >= 0
    assert _close(sum(line["cost_usd"] for line in lines), d["total_usd"])
    assert list(d["by_category"]) == list(CATEGORIES)
    assert _close(sum(d["by_category"].values()), d["total_usd"])
    assert math.isclose(sum(d["percent_by_category"].values()), 100.0, rel_tol=1e-9)
    t = d["time"]
    parts = ("compute_hours", "sync_stall_hours", "eval_hours", "checkpoint_stall_hours",
             "failure_lost_hours", "reclaim_lost_hours")  # fmt: skip
    assert _close(sum(t[k] for k in parts), t["wall_hours"])
    assert _close(t["gpu_hours"], t["wall_hours"] * d["cluster"]["gpus"])
    assert t["mfu"] is None or 0 < t["mfu"] < 1
    # Pure-training compute lines hold nodes × compute hours; the quote is their on-demand price.
    nodes = d["cluster"]["nodes"]
    gpu_lines = [ln for ln in lines if ln["category"] == "compute" and "group" not in ln["item"]]
    assert _close(sum(ln["quantity"] for ln in gpu_lines), nodes * t["compute_hours"])
    od = catalog.price(d["cluster"]["instance"], "on_demand", provider=d["cluster"]["provider"],
                       region=d["cluster"]["region"], as_of=fc.usage.as_of).usd  # fmt: skip
    assert _close(d["quote_usd"], nodes * od * t["compute_hours"])
    # Every cluster-hour overhead line is billed at one blended cluster rate.
    rates = {
        ln["unit_price_usd"]
        for ln in lines
        if ln["unit"] == "cluster-hour" and ln["category"] != "orchestration"
    }
    assert len(rates) <= 1
    # The discount is in the compute lines' unit and covers no more than the on-demand node-hours.
    units = {ln["unit"] for ln in gpu_lines}
    for ln in lines:
        if ln["category"] == "discount" and ln["unit"] != "hour":  # not the unused-commitment line
            assert ln["unit"] in units
            assert ln["quantity"] <= nodes * (1 - d["cluster"]["spot_fraction"]) * t[
                "wall_hours"
            ] * (1 + 1e-12)


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-6)


REPORT_AND_WHATIF_PLANS: dict[str, dict[str, Any]] = {
    "long-context-eks": LONG_CONTEXT_PLAN,
    "hours-only-hyperpod-spot-sp": {
        "run": {"name": "<script>alert(1)</script>", "hours": 72, "deadline_hours": 80},
        "model": {"params": 70e9},
        "cluster": {
            "instance": "p5.48xlarge",
            "nodes": 32,
            "orchestrator": "hyperpod",
            "extra_groups": [{"name": "head", "instance": "m5.2xlarge", "count": 1}],
        },
        "purchase": {"spot_fraction": 0.5, "savings_plan": "1yr", "savings_plan_coverage": 0.5},
        "prices": {"as_of": date(2025, 5, 1)},
        "checkpoint": {"target": "s3", "interval_hours": 2},
    },
    "moe-fp8-ec2-ebs": {
        "model": {
            "params": 26e9,
            "active_params": 3.25e9,
            "tokens": 1e11,
            "layers": 32,
            "d_model": 4096,
            "seq_len": 8192,
            "precision": "fp8",
        },
        "cluster": {"instance": "p5.48xlarge", "nodes": 4, "orchestrator": "ec2"},
        "purchase": {"spot_fraction": 1.0},
        "prices": {"as_of": date(2025, 7, 1)},
        "checkpoint": {"target": "ebs"},
        "evaluation": {"interval_steps": 0},
        "data": {"location": "cross_az", "epochs": 3},
    },
}


@pytest.mark.parametrize("name", sorted(REPORT_AND_WHATIF_PLANS))
def test_report_html_matches_forecast(name: str, commitment_catalog: Catalog) -> None:
    """The report shows the forecast's own numbers: total, quote, categories, lines, hours,
    waterfall."""
    catalog = (
        commitment_catalog  # HyperPod SageMaker SP rates and ml.* price: illustrative (conftest)
    )
    plan = plan_from_dict(REPORT_AND_WHATIF_PLANS[name])
    data = build_report(plan, catalog, today=TODAY, simulate=False, search=False)
    fc = forecast(plan, catalog, today=TODAY)
    page = render_html(data)
    text = re.sub(r"<[^>]+>", " ", page)
    assert not re.search(r"\b(nan|NaN|inf|None|n/a)\b", text)
    assert not re.search(r"https?://", page)
    assert "<script" not in page
    assert "<ctx>" not in page
    assert html.escape(fc.usage.name) in page
    assert money(fc.total_usd) in page
    assert money(fc.quote_usd) in page
    for line in fc.ledger.lines:
        assert html.escape(line.item) in page
        assert money(line.cost_usd) in page
    u = fc.usage
    for h in (
        u.compute.hours,
        u.compute.sync_stall_hours,
        u.evaluation.hours,
        u.checkpoint.stall_hours,
        u.wall_hours,
    ):
        assert hours(h) in page
    # The report's waterfall is the headline's (issue #20): quote → planned → hidden costs → real
    # bill.
    bars = {
        html.unescape(k): html.unescape(v)
        for k, v in re.findall(r"<rect [^>]*><title>([^<:]*): ([^<]*)</title></rect>", page)
    }
    assert bars["quote (on-demand list)"] == money(fc.quote_usd)
    assert bars["planned (at the plan's purchase mix)"] == money(fc.planned_usd)
    assert bars["real bill (forecast)"] == money(fc.total_usd)
    for cat, amount in fc.hidden_by_category().items():
        if amount != 0:
            assert bars[HIDDEN_LABELS[cat]] == money_change(amount)


@pytest.mark.parametrize("name", sorted(REPORT_AND_WHATIF_PLANS))
def test_whatifs_add_up(name: str, commitment_catalog: Catalog) -> None:
    """Orchestrator rows are forecasts; the rule's gap sums; sparse savings are share × sparsity."""
    catalog = commitment_catalog
    plan = plan_from_dict(REPORT_AND_WHATIF_PLANS[name])
    fc = forecast(plan, catalog, today=TODAY)
    restart = {
        "ec2": 1.0,
        "hyperpod": 0.25,
        "eks": 0.5,
    }  # reliability.restart_hours_* in the catalog
    for row in compare_orchestrators(plan, catalog, today=TODAY):
        again = forecast(with_orchestrator(plan, row.orchestrator), catalog, today=TODAY)
        assert _close(row.total_usd, again.total_usd)
        assert row.restart_hours == restart[row.orchestrator]
        cats = again.ledger.by_category()
        assert _close(row.disruption_usd, cats["failures"] + cats["spot_reclaim"])
        if row.orchestrator == "ec2":
            assert row.orchestration_usd == 0
    rule = rule_of_thumb(fc, catalog)
    base = (
        fc.usage.nodes * instance_rate(catalog, fc.usage, "on_demand").usd * fc.usage.compute.hours
    )
    risk = 1.1 if fc.usage.purchase.spot_fraction > 0 else 1.0
    assert _close(rule.base_usd, base)
    assert _close(rule.base_usd, fc.quote_usd)
    assert _close(rule.low_usd, base * 1.3 * risk)
    assert _close(rule.high_usd, base * 1.5 * risk)
    assert _close(sum(b for _c, _a, b in rule.by_category), fc.total_usd - base)
    if plan.model.layers is not None:
        previous = None
        for sparsity in (0.0, 0.5, 1.0):
            rep = sparse_attention(plan, catalog, sparsity=sparsity, today=TODAY)
            shares = [r.attention_share for r in rep.rows]
            assert shares == sorted(shares)
            assert all(_close(r.flops_saving, r.attention_share * sparsity) for r in rep.rows)
            assert _close(rep.hours_after, rep.hours_before * (1 - rep.plan_saving))
            if sparsity == 0.0:
                assert _close(rep.usd_after, fc.total_usd)
            if previous is not None:
                assert rep.usd_after <= previous
            previous = rep.usd_after
