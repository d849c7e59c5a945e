"""``estimate_sweep``: one question over an array of node counts, answered as arrays, against
``estimate_time`` asked node count by node count.

Why: the planner keeps a node sweep's answer as arrays (no record per node count); each node
count's numbers must still be the ones a forecast of that cluster gets, and the node counts
no layout fits must be the ones the scalar call raises at, with its error. Expected values
are the scalar calls', made here per node count.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

from trainbill.catalog import Catalog, load_catalog
from trainbill.timemodel import TimeEstimate, default_global_batches, estimate_sweep, estimate_time

#: 1..64 nodes of 8 × A100-40GB: a 70B model's 1.1 TB of state fits from a few nodes on.
NODES = np.arange(1, 65)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The packaged catalog (both paths read the same one)."""
    return load_catalog()


def _shared(catalog: Catalog, instance: str, **model: Any) -> dict[str, Any]:
    """``estimate_time``'s keywords but the node-dependent ones."""
    inst = catalog.instance(instance)
    return {
        "catalog": catalog, "accelerator": catalog.accelerator(inst.accelerator),
        "instance": inst, "precision": "bf16", "params": 70e9, "active_params": None,
        "seq_len": 4096, "straggler_cv": 0.02, **model,
    }  # fmt: skip


def _leaf(x: Any, k: int) -> Any:
    """Node count k's value of a swept number (an (M,) array), or the shared value."""
    return x[k].item() if isinstance(x, np.ndarray) else x


@pytest.mark.parametrize(
    ("instance", "model", "tokens_follow_batch"),
    [
        ("p4d.24xlarge", {"layers": 80, "d_model": 8192}, False),
        ("p5.48xlarge", {"params": 671e9, "active_params": 37e9}, True),
        ("p5.48xlarge", {}, True),
    ],
)
def test_each_node_count_is_the_scalar_answer(
    catalog: Catalog, instance: str, model: dict[str, Any], *, tokens_follow_batch: bool
) -> None:
    """Every number of every node count (hours, stall, MFU, layout, memory) to 1e-12
    relative, the arrays (M,) over the fitted node counts, and the failed node counts the
    scalar call's, with its message."""
    shared = _shared(catalog, instance, **model)
    gpn = shared["instance"].accelerator_count
    batch = default_global_batches(
        catalog, gpus=NODES * gpn, params=shared["params"],
        active_params=shared["active_params"], seq_len=4096,
    )  # fmt: skip
    tokens = batch if tokens_follow_batch else 2e11
    got = estimate_sweep(
        **shared, nodes=NODES, global_batch_tokens=batch, tokens=tokens, hours=None
    )
    fitted = got.fitted.tolist()
    assert sorted([*fitted, *got.failed]) == list(range(NODES.size))
    assert fitted  # some node counts hold the model
    est = got.estimate
    assert est is not None
    assert not est.factors  # numbers only
    hours_k: Any = est.compute_hours  # typed float: an array over the fitted node counts here
    assert isinstance(hours_k, np.ndarray)
    assert hours_k.shape == (len(fitted),)
    for k, i in enumerate(fitted):
        want = estimate_time(
            **shared, nodes=int(NODES[i]), global_batch_tokens=float(batch[i]),
            tokens=float(batch[i]) if tokens_follow_batch else tokens, hours=None,
        )  # fmt: skip
        _same(est, want, k)
    for i in got.failed:
        err = got.error(i)
        with pytest.raises(type(err), match=f"^{re.escape(str(err))}$"):
            estimate_time(
                **shared, nodes=int(NODES[i]), global_batch_tokens=float(batch[i]),
                tokens=float(batch[i]) if tokens_follow_batch else tokens, hours=None,
            )  # fmt: skip


def _same(est: TimeEstimate, want: TimeEstimate, k: int) -> None:
    """Node count k of the swept answer against the scalar one, field by field."""
    for name in ("compute_hours", "comm_stall_fraction", "straggler_fraction", "base_mfu"):
        assert math.isclose(_leaf(getattr(est, name), k), getattr(want, name), rel_tol=1e-12)
    assert _leaf(est.flops, k) == pytest.approx(want.flops, rel=1e-12)
    assert est.peak_tflops_per_gpu == want.peak_tflops_per_gpu
    lay, wl = est.layout, want.layout
    assert lay is not None
    assert wl is not None
    for name in ("tp", "pp", "cp", "ep"):
        assert _leaf(getattr(lay, name), k) == getattr(wl, name), name
    for name in ("dp", "compute_s", "bubble_s", "tp_s", "dp_sync_s", "dp_exposed_s", "a2a_s"):
        assert math.isclose(_leaf(getattr(lay, name), k), getattr(wl, name), rel_tol=1e-12)
    for name in ("state_gb", "buffer_gb", "activations_gb", "recompute", "offload"):
        assert _leaf(getattr(lay.memory, name), k) == getattr(wl.memory, name), name


def test_stated_hours_over_the_sweep_are_each_node_counts_own(catalog: Catalog) -> None:
    """Stated hours that scale with the node count (100 h at 8 nodes: 800 / n) come back as
    each node count's compute hours, and its answer says they were given."""
    shared = _shared(catalog, "p5.48xlarge")
    nodes = np.array([8, 16, 32])
    hours = 800.0 / nodes  # 100, 50, 25
    got = estimate_sweep(
        **shared, nodes=nodes, global_batch_tokens=4194304.0, tokens=2e11, hours=hours
    )
    assert got.estimate is not None
    swept: Any = got.estimate.compute_hours  # typed float: an array over the node counts here
    assert swept.tolist() == [100.0, 50.0, 25.0]
    assert got.estimate.hours_given is True


def test_values_shared_by_every_node_count_are_plain(catalog: Catalog) -> None:
    """A number that agrees at every node count is one plain value, not an array: the peak,
    and a 70B model's FLOPs (6 · 70e9 · 2e11 = 8.4e22, plus attention) at a fixed token count."""
    shared = _shared(catalog, "p5.48xlarge")
    got = estimate_sweep(
        **shared, nodes=np.arange(4, 9), global_batch_tokens=4194304.0, tokens=2e11, hours=None
    )
    assert got.estimate is not None
    assert isinstance(got.estimate.flops, float)
    assert got.estimate.flops > 6 * 70e9 * 2e11
    differs: Any = got.estimate.compute_hours
    assert isinstance(differs, np.ndarray)  # (the GPUs differ)
