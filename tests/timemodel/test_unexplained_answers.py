"""``estimate_times(..., explain=False)``: a node sweep's answers without their rendered text.

Why: the planner prices hundreds of node counts and shows a few; the explanation was most of
the time per node count. Every number must still be the scalar ``estimate_time``'s (called here
per node count, the reference), and the text must be absent rather than another node count's.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from trainbill.catalog import Catalog
from trainbill.errors import TrainbillError
from trainbill.timemodel import TimeEstimate, default_global_batch, estimate_time, estimate_times

#: Node counts with a layout change and a one-node warning (the one-node host-overhead note).
NODES = (1, 2, 3, 8, 32, 100, 256)

#: A dense model, an MoE one and a plan stating its hours.
MODELS: list[dict[str, Any]] = [
    {"params": 70e9, "layers": 80, "d_model": 8192},
    {"params": 671e9, "active_params": 37e9, "layers": 61, "d_model": 7168},
    {"params": 8e9, "hours": 50.0},
    # small enough that one node's per-step host overhead draws a warning
    {"params": 125e6},
]


def _question(catalog: Catalog, nodes: int, model: dict[str, Any]) -> dict[str, Any]:
    """``estimate_time``'s keywords on p5.48xlarge with the batch a team picks for the GPUs."""
    inst = catalog.instance("p5.48xlarge")
    m = dict(model)
    batch, note = default_global_batch(
        catalog, gpus=nodes * inst.accelerator_count, params=m["params"],
        active_params=m.get("active_params"), seq_len=4096,
    )  # fmt: skip
    return {
        "catalog": catalog, "accelerator": catalog.accelerator(inst.accelerator),
        "instance": inst, "nodes": nodes, "precision": "bf16", "hours": m.pop("hours", None),
        "active_params": m.pop("active_params", None), "tokens": 2e11,
        "global_batch_tokens": batch, "batch_note": note, "seq_len": 4096,
        "straggler_cv": 0.02, **m,
    }  # fmt: skip


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


@pytest.mark.parametrize("model", MODELS, ids=["dense-70b", "moe-671b", "stated-hours", "125m"])
def test_unexplained_answers_are_the_scalar_numbers_without_text(
    catalog: Catalog, model: dict[str, Any]
) -> None:
    questions = [_question(catalog, n, model) for n in NODES]
    bare = estimate_times(questions, explain=False)
    told = estimate_times(questions)
    answered = 0
    for q, got, full in zip(questions, bare, told, strict=True):
        if isinstance(got, TrainbillError):  # no layout fits: the scalar call raises the same
            assert type(full) is type(got)
            with pytest.raises(type(got), match=f"^{re.escape(str(got))}$"):
                estimate_time(**q)
            continue
        answered += 1
        want = estimate_time(**q)
        assert isinstance(got, TimeEstimate)
        assert isinstance(full, TimeEstimate)
        assert got.factors == ()
        assert got.warnings == ()
        assert full.factors == want.factors  # the default still explains
        assert full.warnings == want.warnings
        for name in (
            "compute_hours", "comm_stall_fraction", "straggler_fraction", "flops", "base_mfu",
            "peak_tflops_per_gpu",
        ):  # fmt: skip
            assert _close(getattr(got, name), getattr(want, name)), (q["nodes"], name)
        assert got.hours_given == want.hours_given
        assert got.layout == want.layout  # every figure of the chosen layout, and its memory
    assert answered >= 3


def test_the_scalar_answer_has_the_one_node_warning(catalog: Catalog) -> None:
    """The check above would pass on empty text everywhere: the one-node answer's scalar
    explanation does carry a warning (the per-step host overhead on one node), which the
    unexplained answer leaves out."""
    q = _question(catalog, 1, MODELS[3])
    want = estimate_time(**q)
    assert any(w.startswith("one node:") for w in want.warnings)
    assert want.factors
    (got,) = estimate_times([q], explain=False)
    assert isinstance(got, TimeEstimate)
    assert got.warnings == ()


def test_text_asked_per_question(catalog: Catalog) -> None:
    """A flag per question: the first (a sweep's first node count) gets the scalar answer's
    text, the others none; the numbers of all are the scalar ones."""
    questions = [_question(catalog, n, MODELS[3]) for n in (1, 2, 4)]
    answers = estimate_times(questions, explain=[True, False, False])
    wants = [estimate_time(**q) for q in questions]
    for got, want in zip(answers, wants, strict=True):
        assert isinstance(got, TimeEstimate)
        assert _close(got.compute_hours, want.compute_hours)
        assert got.layout == want.layout
    first, *rest = answers
    assert isinstance(first, TimeEstimate)
    assert first.factors == wants[0].factors
    assert first.warnings == wants[0].warnings
    assert first.warnings  # (the one-node warning: text that is really there)
    assert all(isinstance(a, TimeEstimate) and a.factors == () for a in rest)
