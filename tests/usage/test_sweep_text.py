"""The text of a node sweep (``usage_over_nodes``): each group's usage carries its first node
count's explanation, and the sweep leaves no answer without text where a forecast reads it.

Why: the sweep asks the time model for numbers only (``estimate_times(explain=False)``) and
asks the scalar ``estimate_time`` for the text of the node counts whose usage is read; a
forecast of any swept cluster must still get its full explanation from the time-model cache.
Expected values are the scalar calls' (``usage_for`` and ``estimate_time``), made here.
"""

from __future__ import annotations

from dataclasses import replace

from conftest import EXAMPLES, SEED, TODAY, stated_hours
from trainbill.catalog import Catalog
from trainbill.optimize import candidate_plan
from trainbill.spec import load_plan
from trainbill.timemodel import estimate_time
from trainbill.usage import resolve_job, usage_for, usage_over_nodes
from trainbill.usage._defaults import _Defaults
from trainbill.usage.compute import _TIME_CACHE, _estimate_time, _time_question

NODES = tuple(range(1, 97))
#: Node counts on both sides of a sign change of the pre-training example's usage.
SPLIT_NODES = (*range(1, 17), *range(120, 141))


def test_each_group_carries_a_swept_node_counts_full_text(catalog: Catalog) -> None:
    """The groups are cut from parts built together, each carrying the text of its part's
    first node count (the sweep's own first for the first group): a full scalar explanation
    of a node count of the sweep, never an empty or a partial one."""
    # (the 512-GPU pre-training on HyperPod: its usage changes sign past 128 nodes, so the
    # sweep has several groups)
    plan = load_plan(EXAMPLES / "pretrain-512-h100.toml")
    plans = [
        candidate_plan(
            plan, catalog, instance="p5.48xlarge", nodes=n, orchestrator="hyperpod",
            spot_fraction=1.0, savings_plan="none", savings_plan_coverage=0.0,
            checkpoint_interval_hours=1.0,
        )
        for n in SPLIT_NODES
    ]  # fmt: skip
    job = resolve_job(plans[0], catalog, today=TODAY)
    _TIME_CACHE.clear()
    sweep = usage_over_nodes(
        plans[0], catalog, job=job, nodes=SPLIT_NODES, hours=stated_hours(plans)
    )
    assert len(sweep.groups) > 1
    _TIME_CACHE.clear()  # the scalar calls below run their own time model
    scalar = [
        usage_for(p, catalog, job=replace(job, nodes=n))
        for p, n in zip(plans, SPLIT_NODES, strict=True)
    ]
    texts = {(u.time.factors, u.time.warnings, u.warnings) for u in scalar}
    (first, _), *_ = sweep.groups
    assert first[0] == 0
    head = sweep.groups[0][1]
    assert head.time.factors == scalar[0].time.factors
    assert head.time.warnings == scalar[0].time.warnings
    for _, usage in sweep.groups:
        assert usage.time.factors  # a real explanation
        assert (usage.time.factors, usage.time.warnings, usage.warnings) in texts


def test_a_forecast_after_a_sweep_gets_the_full_explanation(catalog: Catalog) -> None:
    """Every node count of the sweep, asked again as a forecast asks (``_estimate_time``),
    gets the scalar ``estimate_time``'s factors and warnings, not the sweep's bare answer."""
    plan = load_plan(SEED)
    plans = [
        plan.model_copy(update={"cluster": plan.cluster.model_copy(update={"nodes": n})})
        for n in NODES
    ]
    job = resolve_job(plans[0], catalog, today=TODAY)
    _TIME_CACHE.clear()
    usage_over_nodes(plans[0], catalog, job=job, nodes=NODES, hours=stated_hours(plans))
    for p, n in zip(plans, NODES, strict=True):
        question, _ = _time_question(p, catalog, _Defaults(catalog), replace(job, nodes=n), None)
        got = _estimate_time(**question)
        want = estimate_time(**question)
        assert want.factors
        assert got.factors == want.factors
        assert got.warnings == want.warnings
