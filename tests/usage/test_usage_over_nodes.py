"""``usage_over_nodes`` (one build over arrays of node counts) against ``usage_for`` per node
count: every number of every node count's usage, and its price.

Why: the planner prices a node sweep from the array build; each node count must get the usage
(and so the bill) a forecast of that cluster gets. Expected values are the scalar calls', made
here per node count with the time model's cache emptied first, so the scalar path runs its own
time model.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from conftest import EXAMPLES, TODAY, stated_hours
from trainbill.catalog import Accelerator, Catalog, Instance, load_catalog
from trainbill.costs import price_arrays
from trainbill.errors import MixedBranchError
from trainbill.optimize import candidate_plan
from trainbill.spec import Plan, load_plan
from trainbill.timemodel._elementwise import first, least, most, uniform
from trainbill.usage import Usage, resolve_job, usage_for, usage_over_nodes
from trainbill.usage.compute import _TIME_CACHE
from trainbill.usage.sweep import _UNPRICED

NODES = tuple(range(1, 513))

#: (example plan, instance, orchestrator): the seed fine-tune, the 512-H100 pre-training on
#: HyperPod, the p4d spot experiment, a HyperPod fine-tune, and the seed on GCP and Azure, on a
#: TPU slice and on Trainium.
CASES = [
    ("seed-70b-finetune", "p5.48xlarge", "ec2"),
    ("pretrain-512-h100", "p5.48xlarge", "hyperpod"),
    ("p4d-spot-experiment", "p4d.24xlarge", "ec2"),
    ("hyperpod-finetune", "p5.48xlarge", "hyperpod"),
    ("seed-70b-finetune", "a3-highgpu-8g", "vm"),
    ("seed-70b-finetune", "Standard_ND96asr_v4", "vm"),
    # per-chip billing (nodes count chips, 4 per VM host) and Trainium's 16 chips per node
    ("seed-70b-finetune", "tpu-v5p", "vm"),
    ("seed-70b-finetune", "trn2.48xlarge", "ec2"),
]
#: Instances the catalog sells on demand only (no spot price): their candidates buy no spot.
ON_DEMAND_ONLY = {"trn2.48xlarge"}

#: Rendered text only: a stacked usage carries its first node count's (module doc).
_RENDERED = {"factors", "warnings", "assumed", "whatif_notes", "interval_basis"}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The packaged catalog."""
    return load_catalog()


def _at(value: Any, k: int) -> Any:
    """Element k of a leaf stacked over node counts (axis 0), or the leaf itself."""
    if isinstance(value, np.ndarray):
        return value[k if value.shape[0] > 1 else 0].reshape(-1)[0].item()
    return value


def _compare(got: Any, want: Any, k: int, path: str) -> None:
    """Every leaf of ``got`` at node k equals ``want``'s (numbers to 1e-9 relative)."""
    if dataclasses.is_dataclass(want) and not isinstance(want, (Instance, Accelerator)):
        for f in dataclasses.fields(want):
            if f.name not in _RENDERED:
                _compare(getattr(got, f.name), getattr(want, f.name), k, f"{path}.{f.name}")
        return
    g = _at(got, k)
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        both_nan = math.isnan(g) and math.isnan(want)
        assert both_nan or math.isclose(g, want, rel_tol=1e-9), path
    else:
        assert g == want, path


@pytest.mark.parametrize(("example", "instance", "orchestrator"), CASES)
def test_every_node_count_gets_the_scalar_usage_and_price(
    catalog: Catalog, example: str, instance: str, orchestrator: str
) -> None:
    plan = load_plan(EXAMPLES / f"{example}.toml")
    plans = [
        candidate_plan(
            plan, catalog, instance=instance, nodes=n, orchestrator=orchestrator,
            spot_fraction=0.0 if instance in ON_DEMAND_ONLY else 1.0,
            savings_plan="none", savings_plan_coverage=0.0,
            checkpoint_interval_hours=1.0,
        )
        for n in NODES
    ]  # fmt: skip
    _check_sweep(catalog, plans)


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_young_daly_interval_over_a_sweep(catalog: Catalog, *, asynchronous: bool) -> None:
    """The plan's own interval left to the model: Young/Daly per node count (its cluster MTBF
    shrinks with the nodes), floored by a step or, asynchronous, by persisting a snapshot."""
    plan = load_plan(EXAMPLES / "seed-70b-finetune.toml")
    ck = plan.checkpoint.model_copy(update={"interval_hours": None, "asynchronous": asynchronous})
    plan = plan.model_copy(update={"checkpoint": ck})
    plans = [
        plan.model_copy(update={"cluster": plan.cluster.model_copy(update={"nodes": n})})
        for n in NODES
    ]
    _check_sweep(catalog, plans)


def _check_sweep(catalog: Catalog, plans: list[Plan]) -> None:
    """Each node count of the sweep of ``plans`` against its own ``usage_for`` and price."""
    job = resolve_job(plans[0], catalog, today=TODAY)
    sweep = usage_over_nodes(plans[0], catalog, job=job, nodes=NODES, hours=stated_hours(plans))
    _TIME_CACHE.clear()  # the scalar calls below run their own time model
    seen: list[int] = []
    for indices, usage in sweep.groups:
        assert list(indices) == sorted(indices)
        _one_sign_each(usage)
        total, _ = price_arrays(usage, catalog)
        totals = np.broadcast_to(total, (len(indices), *np.shape(total)[1:])).reshape(
            len(indices), -1
        )
        for k, i in enumerate(indices):
            want: Usage = usage_for(plans[i], catalog, job=replace(job, nodes=NODES[i]))
            _compare(usage, want, k, "usage")
            want_total, _ = price_arrays(want, catalog)
            assert math.isclose(float(totals[k, 0]), float(want_total), rel_tol=1e-9)
            seen.append(i)
    for i, err in sweep.errors.items():
        with pytest.raises(type(err)):
            usage_for(plans[i], catalog, job=replace(job, nodes=NODES[i]))
        seen.append(i)
    assert sorted(seen) == list(range(len(NODES)))  # every node count answered once


def _one_sign_each(usage: Any, path: tuple[str, ...] = ()) -> None:
    """Within a group every stacked number keeps one sign (the drivers' branches need it),
    but those no step or driver reads (``usage.sweep._UNPRICED``: explanation only)."""
    if any(path[: len(p)] == p for p in _UNPRICED):
        return
    if isinstance(usage, np.ndarray):
        signs = np.unique(np.where(np.isnan(usage), 2.0, np.sign(usage.astype(float))))
        assert signs.size == 1, path
        return
    if dataclasses.is_dataclass(usage) and not isinstance(usage, (Instance, Accelerator, type)):
        for f in dataclasses.fields(usage):
            if f.name not in _RENDERED:
                _one_sign_each(getattr(usage, f.name), (*path, f.name))


def test_elementwise_steps_are_the_scalar_operations_for_one_plan() -> None:
    """For one plan the helpers are Python's own (same value and type); over arrays elementwise."""
    assert type(least(2.0, 3.0)) is float
    assert least(2.0, 3.0) == 2.0
    assert type(most(2, 3)) is int
    assert most(2, 3) == 3
    assert least(np.array([1.0, 5.0]), 3.0).tolist() == [1.0, 3.0]
    assert most(np.array([1.0, 5.0]), 3.0).tolist() == [3.0, 5.0]
    assert first(np.array([[[7]], [[9]]])) == 7
    assert first(4.5) == 4.5
    assert uniform(np.array([True, True]))
    assert not uniform(np.array([False, False]))
    assert uniform(True)
    assert not uniform(False)
    with pytest.raises(MixedBranchError):
        uniform(np.array([True, False]))
