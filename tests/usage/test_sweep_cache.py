"""The node sweeps' cache of time-model answers (``usage.compute._estimate_sweep``).

Why: the planner asks each instance's sweep once per orchestrator (restart time and fees
differ, the run's hours do not), so the second orchestrator must be answered from the first's
sweep; a tool that swapped in its own time function must never be; and a sweep's answer (arrays
over every node count) must be held apart from the scalar answers, in a room of its own.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from conftest import SEED, TODAY
from trainbill import usage as usage_mod
from trainbill.catalog import Catalog, load_catalog
from trainbill.optimize import candidate_plan
from trainbill.spec import Plan, load_plan
from trainbill.timemodel import estimate_sweep, estimate_time
from trainbill.usage import NodeSweep, resolve_job, usage_over_nodes
from trainbill.usage import compute as compute_mod

NODES = np.array([1, 2, 4, 8, 16, 64])


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The packaged catalog."""
    return load_catalog()


@pytest.fixture(autouse=True)
def _empty_caches() -> None:
    """Each test starts with no remembered answer."""
    compute_mod.forget_answers()


def _plan(catalog: Catalog, orchestrator: str) -> Plan:
    """The seed fine-tune on p5.48xlarge at 8 nodes under ``orchestrator``, its hours left to
    the time model (a model size and 20e9 tokens, no stated hours)."""
    seed = load_plan(SEED)
    seed = seed.model_copy(
        update={
            "run": seed.run.model_copy(update={"hours": None}),
            "model": seed.model.model_copy(update={"tokens": 20e9}),
        }
    )
    return candidate_plan(
        seed, catalog, instance="p5.48xlarge", nodes=8, orchestrator=orchestrator,
        spot_fraction=0.0, savings_plan="none", savings_plan_coverage=0.0,
        checkpoint_interval_hours=1.0,
    )  # fmt: skip


def _sweep(plan: Plan, catalog: Catalog, nodes: Any = NODES) -> NodeSweep:
    job = resolve_job(plan, catalog, today=TODAY)
    return usage_over_nodes(plan, catalog, job=job, nodes=nodes, explain=False)


def _hours(sweep: NodeSweep) -> dict[int, float]:
    """Compute hours per sweep index, read from the sweep's groups."""
    out: dict[int, float] = {}
    for indices, usage in sweep.groups:
        hours = np.broadcast_to(np.asarray(usage.compute.hours).reshape(-1), (len(indices),))
        out.update({int(i): float(h) for i, h in zip(indices, hours, strict=True)})
    return out


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the time model's sweeps actually run (one entry per ``estimate_sweep`` call)."""
    calls: list[int] = []
    real = estimate_sweep

    def counted(**kw: Any) -> Any:
        calls.append(1)
        return real(**kw)

    monkeypatch.setattr(compute_mod, "estimate_sweep", counted)
    return calls


def test_the_second_orchestrator_is_answered_from_the_first_ones_sweep(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EC2 then HyperPod on the same instance and node counts: one time-model sweep, and the
    HyperPod usage's hours are those a fresh sweep (caches emptied) gives it."""
    calls = _counting(monkeypatch)
    ec2 = _hours(_sweep(_plan(catalog, "ec2"), catalog))
    hyperpod = _hours(_sweep(_plan(catalog, "hyperpod"), catalog))
    assert len(calls) == 1
    assert set(hyperpod) == set(range(NODES.size))  # every node count holds the 70B model
    compute_mod._SWEEP_CACHE.clear()
    fresh = _hours(_sweep(_plan(catalog, "hyperpod"), catalog))
    assert len(calls) == 2
    assert hyperpod == fresh
    # the same run's hours whoever orchestrates it (the time model does not read the fees)
    assert ec2 == fresh


def test_other_node_counts_or_another_catalog_are_asked_again(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key holds the node counts by value and the catalog by identity."""
    calls = _counting(monkeypatch)
    plan = _plan(catalog, "ec2")
    _sweep(plan, catalog)
    _sweep(plan, catalog, NODES[:-1])
    assert len(calls) == 2
    _sweep(plan, catalog, NODES.copy())  # equal values, another array: answered
    assert len(calls) == 2
    other = copy.copy(catalog)  # an equal catalog, but another object
    _sweep(plan, other)
    assert len(calls) == 3


def test_a_swapped_in_time_function_is_asked_per_node_count_never_from_the_cache(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the time model made twice as slow (``estimate_time`` swapped in the usage package,
    as the fit tool does), each node count's hours are 2 × the shipped sweep's, asked once per
    node count, even right after the shipped sweep was cached."""
    plan = _plan(catalog, "ec2")
    shipped = _hours(_sweep(plan, catalog))
    asked: list[int] = []

    def twice_as_slow(**kw: Any) -> Any:
        asked.append(kw["nodes"])
        est = estimate_time(**kw)
        return replace(est, compute_hours=est.compute_hours * 2)

    monkeypatch.setattr(usage_mod, "estimate_time", twice_as_slow)
    slowed = _hours(_sweep(plan, catalog))
    assert sorted(asked) == NODES.tolist()  # one question per node count
    assert set(slowed) == set(shipped)
    for i, hours in shipped.items():
        assert slowed[i] == pytest.approx(2 * hours, rel=1e-12)


def test_sweeps_are_kept_apart_from_scalar_answers_in_a_room_of_their_own(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three sweeps with room for two: the oldest is dropped, the newest two kept, and the
    scalar answers' cache holds none of them."""
    monkeypatch.setattr(compute_mod, "_SWEEP_CACHE_SIZE", 2)
    calls = _counting(monkeypatch)
    plan = _plan(catalog, "ec2")
    for nodes in (NODES[:2], NODES[:3], NODES[:4]):
        _sweep(plan, catalog, nodes)
    assert len(compute_mod._SWEEP_CACHE) == 2
    assert len(compute_mod._TIME_CACHE) == 0
    _sweep(plan, catalog, NODES[:4])  # kept
    _sweep(plan, catalog, NODES[:3])  # kept
    assert len(calls) == 3
    _sweep(plan, catalog, NODES[:2])  # dropped: asked again
    assert len(calls) == 4
