"""A node sweep's time-model question (``_time_sweep``) and its answers' use by the plan
(``_compute_of`` on a part's stacked answer) against the scalar path, node count by node count.

Why: a sweep builds what does not depend on the node count once and applies the plan's stated
hours and what-ifs once over arrays of node counts; each node count must still get the question
and the compute hours a forecast of that cluster gets. Expected values come from the scalar
calls made here: ``default_global_batch`` per GPU count, ``usage_for`` per node count.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from conftest import EXAMPLES, SEED, TODAY, stated_hours
from trainbill.catalog import Catalog, load_catalog
from trainbill.optimize import candidate_plan
from trainbill.spec import Plan, WhatIf, load_plan
from trainbill.timemodel import default_global_batch, default_global_batches
from trainbill.usage import resolve_job, usage_for, usage_over_nodes
from trainbill.usage._defaults import _Defaults
from trainbill.usage.compute import _TIME_CACHE, _time_question, _time_sweep

NODES = (1, 2, 3, 8, 31, 64, 200, 512)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The packaged catalog."""
    return load_catalog()


def _candidates(plan: Plan, catalog: Catalog, nodes: tuple[int, ...]) -> list[Plan]:
    """The planner's candidate plans of ``plan`` on p5.48xlarge (stated hours scaled)."""
    return [
        candidate_plan(
            plan, catalog, instance="p5.48xlarge", nodes=n, orchestrator="ec2",
            spot_fraction=0.0, savings_plan="none", savings_plan_coverage=0.0,
            checkpoint_interval_hours=1.0,
        )
        for n in nodes
    ]  # fmt: skip


def test_a_sweeps_questions_are_each_node_counts_own(catalog: Catalog) -> None:
    """Each node count's question of the sweep (``TimeSweep.question``) is the one
    ``_time_question`` asks for that node count alone (the same keywords, the same
    assumptions cited in the same order), its batch, held as one array over the sweep, the
    one ``default_global_batch`` gives for its GPUs (8 per p5 node)."""
    plans = _candidates(load_plan(SEED), catalog, NODES)
    job = resolve_job(plans[0], catalog, today=TODAY)
    sweep = _time_sweep(plans[0], catalog, job, np.array(NODES), None, None)
    m = plans[0].model
    assert m.params is not None
    assert m.global_batch_tokens is None  # the batch follows the GPUs
    assert isinstance(sweep.batch, np.ndarray)
    assert sweep.batch.shape == (len(NODES),)
    for i, (plan, n) in enumerate(zip(plans, NODES, strict=True)):
        alone = _Defaults(catalog)
        want, want_batch = _time_question(plan, catalog, alone, replace(job, nodes=n), None)
        question = sweep.question(i)
        assert question == want
        assert sweep.used(i) == alone.used
        seq_len = int(catalog.value("defaults.model.seq_len")) if m.seq_len is None else m.seq_len
        expected, note = default_global_batch(
            catalog, gpus=n * 8, params=m.params, active_params=m.active_params, seq_len=seq_len
        )
        assert sweep.batch_at(i) == want_batch == expected
        assert float(sweep.batch[i]) == expected
        assert question["nodes"] == n
        assert question["batch_note"] == note
        assert question["hours"] is None  # stated hours without tokens: one modelled step
        assert question["tokens"] == expected


def test_default_batches_over_an_array_are_the_scalar_rule(catalog: Catalog) -> None:
    """``default_global_batches`` over GPU counts 1..8192 (floor, growth, ceiling; dense and
    MoE) equals ``default_global_batch`` per GPU count. By hand at 512 GPUs, dense 70B:
    2,048 tokens × 512 = 1,048,576, below the 4M floor, so 4,194,304 (1,024 sequences of
    4,096); at 4,096 GPUs 8,388,608 (2,048 sequences)."""
    gpus = np.arange(1, 8193)
    for active in (None, 37e9):
        got = default_global_batches(
            catalog, gpus=gpus, params=671e9 if active else 70e9, active_params=active,
            seq_len=4096,
        )  # fmt: skip
        want = [
            default_global_batch(
                catalog, gpus=int(g), params=671e9 if active else 70e9, active_params=active,
                seq_len=4096,
            )[0]
            for g in gpus
        ]  # fmt: skip
        assert got.tolist() == want
    dense = default_global_batches(
        catalog, gpus=np.array([512, 4096]), params=70e9, active_params=None, seq_len=4096
    )
    assert dense.tolist() == [1024 * 4096.0, 2048 * 4096.0]


@pytest.mark.parametrize("example", ["seed-70b-finetune", "pretrain-512-h100"])
def test_a_what_if_over_a_sweep_is_each_node_counts_own(catalog: Catalog, example: str) -> None:
    """A what-if's cut hours and FLOPs, and stated hours (the seed's, scaled per node count),
    applied once over the stacked answers: each node count's compute and time-model answer as
    ``usage_for`` gives them for that cluster alone."""
    plan = load_plan(EXAMPLES / f"{example}.toml")
    whatif = WhatIf(time_saving=0.25, flops_saving=0.2, notes=("sparse attention",))
    plans = [p.with_whatif(whatif) for p in _candidates(plan, catalog, NODES)]
    job = resolve_job(plans[0], catalog, today=TODAY)
    _TIME_CACHE.clear()
    sweep = usage_over_nodes(plans[0], catalog, job=job, nodes=NODES, hours=stated_hours(plans))
    _TIME_CACHE.clear()  # the scalar calls below run their own time model
    seen = set(sweep.errors)
    for indices, usage in sweep.groups:
        for k, i in enumerate(indices):
            want = usage_for(plans[i], catalog, job=replace(job, nodes=NODES[i]))
            pairs: list[tuple[object, float]] = [
                (usage.compute.hours, want.compute.hours),
                (usage.compute.sync_stall_hours, want.compute.sync_stall_hours),
                (usage.time.compute_hours, want.time.compute_hours),
                (usage.time.comm_stall_fraction, want.time.comm_stall_fraction),
            ]
            flops = want.time.flops
            if flops is not None:
                pairs.append((usage.time.flops, flops))
            for got, expected in pairs:
                value = np.asarray(got).reshape(-1)
                at = value[k] if value.size > 1 else value[0]
                assert math.isclose(float(at), expected, rel_tol=1e-9)
            assert usage.time.hours_given == want.time.hours_given
            seen.add(i)
    assert seen == set(range(len(NODES)))
