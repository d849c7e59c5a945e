"""The layout search's inputs built once over a node sweep's arrays (``_swept_space``) against
``_search_space`` asked per node count, field by field.

Why: a sweep no longer builds one search-input record per node count; the layout grid must
still get, for every node count, exactly the inputs the scalar search gets (value and type where
a field agrees over the sweep, the per-node-count values where it does not). Expected values
are ``_search_space``'s, called here per node count and stacked as the grid reads them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from trainbill.catalog import Catalog, load_catalog
from trainbill.timemodel import default_global_batch
from trainbill.timemodel.estimate import NODE_KEYWORDS, _query, _work_and_kernels
from trainbill.timemodel.layout import _search_space, _Space, _swept_space

#: A per-chip TPU sweep starts on one chip (no expert parallelism), so an MoE's flags differ
#: across it; p5 (8 GPUs a node), a per-chip TPU (tensor parallel up to 16 chips), FP8, an MoE,
#: no token count (one modelled step: the tokens follow the batch), and tokens-given models.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("p5.48xlarge", {"params": 70e9, "tokens": 2e11}),
    ("p5.48xlarge", {"params": 671e9, "active_params": 37e9, "layers": 61, "d_model": 7168}),
    ("tpu-v5p", {"params": 47e9, "active_params": 13e9, "tokens": 1e9}),
    ("tpu-v5p", {"params": 70e9, "tokens": 2e11}),
    ("p5.48xlarge", {"params": 70e9, "precision": "fp8", "tokens": 2e11}),
]

NODES = (1, 2, 3, 5, 8, 16, 31, 64, 100, 256, 512)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The packaged catalog."""
    return load_catalog()


def _questions(catalog: Catalog, instance: str, model: dict[str, Any]) -> list[dict[str, Any]]:
    """``estimate_time``'s keywords per node count, the batch growing with the GPUs (and, with
    no token count, one step of it: the tokens follow the batch)."""
    inst = catalog.instance(instance)
    m = dict(model)
    precision = str(m.pop("precision", "bf16"))
    out = []
    for n in NODES:
        batch, note = default_global_batch(
            catalog, gpus=n * inst.accelerator_count, params=m["params"],
            active_params=m.get("active_params"), seq_len=4096,
        )  # fmt: skip
        out.append({
            "catalog": catalog, "accelerator": catalog.accelerator(inst.accelerator),
            "instance": inst, "nodes": n, "precision": precision, "hours": None,
            "active_params": None, "tokens": batch, "global_batch_tokens": batch,
            "batch_note": note, "seq_len": 4096, "straggler_cv": 0.02, **m,
        })  # fmt: skip
    return out


@pytest.mark.parametrize(("instance", "model"), CASES)
def test_the_swept_inputs_are_each_node_counts_own(
    catalog: Catalog, instance: str, model: dict[str, Any]
) -> None:
    questions = _questions(catalog, instance, model)
    swept = _swept_space(*_swept_work(questions))
    each = []
    for question in questions:  # the scalar search's inputs, node count by node count
        q = _query(**question)
        wk = _work_and_kernels(q)
        assert wk is not None
        each.append(_search_space(q, wk[0], wk[2]))
    for f in dataclasses.fields(_Space):
        got = getattr(swept, f.name)
        want = [getattr(s, f.name) for s in each]
        if isinstance(got, np.ndarray):
            assert got.shape == (len(NODES), 1), f.name
            assert len(set(want)) > 1, f.name  # an array only where the node counts differ
            assert got.reshape(-1).tolist() == want, f.name
            assert got.dtype == np.array(want).dtype, f.name
        else:
            assert all(w == got for w in want), f.name
            assert type(got) is type(want[0]), f.name


def test_one_node_count_is_the_scalar_search_space(catalog: Catalog) -> None:
    """A sweep of one node count is the scalar call itself."""
    questions = _questions(catalog, "p5.48xlarge", {"params": 7e9})[:1]
    q = _query(**questions[0])
    wk = _work_and_kernels(q)
    assert wk is not None
    assert _swept_space(*_swept_work(questions)) == _search_space(q, wk[0], wk[2])


def _swept_work(questions: list[dict[str, Any]]) -> tuple[Any, Any, Any]:
    """The sweep's one question (its node keywords as (N, 1) arrays, as ``estimate_sweep``
    builds it), and its work and kernel worked out over them."""
    shared = {k: v for k, v in questions[0].items() if k not in NODE_KEYWORDS}
    column = {
        k: np.array([q[k] for q in questions]).reshape(-1, 1)
        for k in ("nodes", "global_batch_tokens", "tokens")
    }
    q = _query(**shared, **column, hours=None)
    wk = _work_and_kernels(q)
    assert wk is not None
    return q, wk[0], wk[2]
