"""The layout search over an array of node counts (``estimate_times``) against the search for
one node count (``estimate_time``), node count by node count.

Why: the planner asks one array search for a whole node sweep; every node count's answer must
be the one a forecast of that cluster gets (layout, step seconds, hours, explanation, and the
same error where nothing fits). Expected values are the scalar calls', made here per node count.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from trainbill.catalog import Catalog, load_catalog
from trainbill.errors import TrainbillError
from trainbill.timemodel import TimeEstimate, default_global_batch, estimate_time, estimate_times

#: Node counts 1..512 (the planner's issue #40 sweep).
NODES = tuple(range(1, 513))

#: (instance, model keywords): dense 7B and 70B, an MoE, a long sequence (context parallel),
#: FP8, FP32, a tiny model, a model that fits only on many GPUs, forced recompute, a measured
#: MFU, stated hours, a per-chip TPU and a 16-accelerator Trainium node.
SHAPES: list[tuple[str, dict[str, Any]]] = [
    ("p5.48xlarge", {"params": 7e9}),
    ("p5.48xlarge", {"params": 70e9, "layers": 80, "d_model": 8192}),
    ("p5.48xlarge", {"params": 671e9, "active_params": 37e9, "layers": 61, "d_model": 7168}),
    ("p5.48xlarge", {"params": 8e9, "seq_len": 131072}),
    ("p5.48xlarge", {"params": 70e9, "precision": "fp8"}),
    ("p4d.24xlarge", {"params": 13e9, "precision": "fp32"}),
    ("p5.48xlarge", {"params": 125e6}),
    ("p4d.24xlarge", {"params": 405e9, "layers": 126, "d_model": 16384}),
    ("p5.48xlarge", {"params": 70e9, "recompute": True}),
    ("p5.48xlarge", {"params": 70e9, "measured_mfu": 0.41}),
    ("p5.48xlarge", {"params": 70e9, "hours": 100.0}),
    ("tpu-v5p", {"params": 70e9}),
    ("trn1.32xlarge", {"params": 13e9}),
]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The packaged catalog (both paths read the same one)."""
    return load_catalog()


def _question(catalog: Catalog, instance: str, nodes: int, model: dict[str, Any]) -> dict[str, Any]:
    """``estimate_time``'s keywords for one node count: the batch grows with the GPUs as the
    planner's plans do (``default_global_batch``), so the node-dependent inputs vary too."""
    inst = catalog.instance(instance)
    m = dict(model)
    seq_len = int(m.pop("seq_len", 4096))
    precision = str(m.pop("precision", "bf16"))
    batch, note = default_global_batch(
        catalog, gpus=nodes * inst.accelerator_count, params=m["params"],
        active_params=m.get("active_params"), seq_len=seq_len,
    )  # fmt: skip
    return {
        "catalog": catalog,
        "accelerator": catalog.accelerator(inst.accelerator),
        "instance": inst,
        "nodes": nodes,
        "precision": precision,
        "hours": m.pop("hours", None),
        "active_params": m.pop("active_params", None),
        "tokens": 2e11,
        "global_batch_tokens": batch,
        "batch_note": note,
        "seq_len": seq_len,
        "straggler_cv": 0.02,
        **m,
    }


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def _same(array: TimeEstimate, scalar: TimeEstimate) -> None:
    """Every number of the two answers equal to 1e-9 relative, every text equal."""
    assert _close(array.compute_hours, scalar.compute_hours)
    assert _close(array.comm_stall_fraction, scalar.comm_stall_fraction)
    assert _close(array.straggler_fraction, scalar.straggler_fraction)
    assert _close(array.base_mfu, scalar.base_mfu)
    assert array.factors == scalar.factors
    assert array.warnings == scalar.warnings
    a, s = array.layout, scalar.layout
    assert (a is None) == (s is None)
    if a is None or s is None:
        return
    assert (a.tp, a.pp, a.cp, a.ep) == (s.tp, s.pp, s.cp, s.ep)
    assert _close(a.step_s, s.step_s)
    for name in ("dp", "compute_s", "bubble_s", "tp_s", "dp_sync_s", "dp_exposed_s", "a2a_s"):
        assert _close(getattr(a, name), getattr(s, name)), name
    assert a.memory == s.memory


@pytest.mark.parametrize(("instance", "model"), SHAPES, ids=[f"{i}-{m}" for i, m in SHAPES])
def test_array_search_is_the_scalar_search_per_node_count(
    catalog: Catalog, instance: str, model: dict[str, Any]
) -> None:
    questions = [_question(catalog, instance, n, model) for n in NODES]
    answers = estimate_times(questions)
    assert len(answers) == len(NODES)
    fitted = 0
    for q, got in zip(questions, answers, strict=True):
        if isinstance(got, TrainbillError):  # no layout fits: the scalar call raises the same
            with pytest.raises(type(got), match=f"^{re.escape(str(got))}$"):
                estimate_time(**q)
            continue
        assert isinstance(got, TimeEstimate), (q["nodes"], got)
        _same(got, estimate_time(**q))
        fitted += 1
    assert fitted > 0  # every shape fits at some node count of the sweep


def test_a_model_too_big_for_small_clusters_is_masked_not_raised(catalog: Catalog) -> None:
    """A 405B model (16 bytes/param of state: 6.5 TB) cannot fit on one 8 × A100-40GB node
    (320 GB), which the array search reports in that node count's place; 64 nodes (20 TB of
    HBM) hold it."""
    model = {"params": 405e9, "layers": 126, "d_model": 16384}
    questions = [_question(catalog, "p4d.24xlarge", n, model) for n in (1, 64)]
    small, large = estimate_times(questions)
    assert isinstance(small, TrainbillError)
    with pytest.raises(type(small), match=re.escape(str(small))):
        estimate_time(**questions[0])
    assert isinstance(large, TimeEstimate)


def test_questions_that_differ_beyond_the_node_count_are_searched_apart(catalog: Catalog) -> None:
    """Two models in one call: each answer is its own question's (grouped, not stacked)."""
    qs = [
        _question(catalog, "p5.48xlarge", 4, {"params": 7e9}),
        _question(catalog, "p5.48xlarge", 4, {"params": 70e9}),
        _question(catalog, "p5.48xlarge", 8, {"params": 7e9}),
    ]
    for q, got in zip(qs, estimate_times(qs), strict=True):
        assert isinstance(got, TimeEstimate)
        _same(got, estimate_time(**q))


def test_one_node_count_twice_with_another_batch(catalog: Catalog) -> None:
    """Questions alike but for the batch at one node count: searched together (the node count
    the same for both), each answered as alone."""
    q = _question(catalog, "p5.48xlarge", 8, {"params": 7e9})
    qs = [q, {**q, "global_batch_tokens": 2.0**23}, q]  # (and one asked twice)
    answers = estimate_times(qs)
    for question, got in zip(qs, answers, strict=True):
        assert isinstance(got, TimeEstimate)
        _same(got, estimate_time(**question))
