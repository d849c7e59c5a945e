"""Sync stall: modelled from the parameter count when a plan gives hours but no tokens, one
ledger line per cause, each hand-computed from the time model's published formulas."""

from __future__ import annotations

import math
from datetime import date
from typing import Any

import pytest

from conftest import EXAMPLES, TODAY, seed_step_seconds
from trainbill.catalog import Catalog
from trainbill.forecast import forecast
from trainbill.spec import load_plan, plan_from_dict

#: A10G (g5) launched 2020-05-14 (catalog); to 2025-05-01: 5 years of 365/366 days
#: (2020-05-14 → 2025-05-14 = 1826 days, leap day 2024-02-29) minus 13 days = 1813 days.
_G5_AGE_YEARS = 1813 / 365.25


def _fit(catalog: Catalog, key: str) -> float:
    return float(catalog.value(key))


def _maturity(catalog: Catalog, age: float) -> float:
    """1 − immaturity · exp(−age / τ), the time model's documented software-maturity factor."""
    return 1.0 - _fit(catalog, "time.fit.immaturity") * math.exp(
        -age / _fit(catalog, "time.maturity_tau_years")
    )


def _lines(fc: Any) -> dict[str, float]:
    return {ln.item: ln.quantity for ln in fc.ledger.in_category("sync_stall")}


def test_seed_example_models_sync_from_params_alone(catalog: Catalog) -> None:
    """params = 70e9, hours = 72, no tokens: the stall is modelled, not "size unknown"; the
    tensor-parallel line = 72 h × TP seconds / step seconds, both computed by hand."""
    fc = forecast(load_plan(EXAMPLES / "seed-70b-finetune.toml"), catalog, today=TODAY)
    factors = dict(fc.usage.time.factors)
    assert "not modelled" not in factors["communication"]
    lay = fc.usage.time.layout
    assert lay is not None
    assert (lay.tp, lay.pp, lay.cp, lay.dp) == (8, 1, 1, 32.0)  # the layout the time model chose
    # Shape: d = (70e9 × 128 / 12)^(1/3) = 9072.4 → 9072; L = round(9072.4 / 128) = 71.
    layers, d = 71, 9072
    # TP bytes per token: 16 · L · d · (tp − 1)/tp; tokens per GPU = 4e6 / dp 32 = 125,000;
    # NVLink 900 GB/s × network efficiency 0.70 = 630e9 B/s.
    tp_s = 16 * layers * d * 7 / 8 * 125_000 / (900e9 * 0.70)  # = 1.7892 s
    compute_s, host_s = seed_step_seconds(catalog)  # ≈ 10.93 s + 0.10 s, by hand (conftest)
    busy_s = compute_s + host_s
    lines = _lines(fc)
    assert lines["tensor-parallel activation all-reduce"] == pytest.approx(
        72 * tp_s / busy_s, rel=1e-9
    )  # ≈ 11.68 h
    assert lines["stragglers (slowest GPU sets the step)"] == pytest.approx(
        72 * 0.012 * math.sqrt(2 * math.log(256))
    )
    # DP sync: weights + grads unsharded fit (v = 2): 2 · 2 B · 70e9 / 8 · 31/32 over the group's
    # NIC share 3200 Gbps / 8 bits × 0.70 × (8 / tp 8) / 8 GPUs = 35e9 B/s = 0.969 s, below the
    # overlap 0.4719 × 10.93 s = 5.2 s of compute that hides it: no exposed data-parallel line.
    dp_sync_s = 2 * 2 * 70e9 / 8 * 31 / 32 / (3200e9 / 8 * 0.70 / 8)
    assert lay.dp_sync_s == pytest.approx(dp_sync_s, rel=1e-9)
    assert dp_sync_s < _fit(catalog, "time.fit.overlap") * compute_s
    assert "data-parallel gradient sync not hidden by compute" not in lines
    # Hours, not tokens, stay the run's length; FLOPs/MFU stay unknown rather than invented.
    assert fc.usage.compute_hours == 72
    assert fc.usage.flops is None


def test_each_stall_cause_has_its_own_line(catalog: Catalog) -> None:
    """8 × g5.48xlarge (100 Gbps), 7e9 params (32 × 4096), 262,144-token batch, 10 h: exposed
    data-parallel sync and a pipeline bubble each get a labelled line, computed by hand."""
    plan = plan_from_dict({
        "run": {"hours": 10},
        "cluster": {"instance": "g5.48xlarge", "nodes": 8},
        "model": {"params": 7e9, "layers": 32, "d_model": 4096, "global_batch_tokens": 262_144},
        "prices": {"as_of": date(2025, 5, 1)},
    })  # fmt: skip
    fc = forecast(plan, catalog, today=TODAY)
    lay = fc.usage.time.layout
    assert lay is not None
    assert (lay.tp, lay.pp, lay.cp, lay.dp) == (1, 2, 1, 32.0)  # the layout the time model chose
    # Compute per step: (6 · 7e9 + 12 · 32 · 4096 · 4096) × 262,144 / 64 GPUs at A10G 70 TFLOP/s,
    # m = k_mem · (70 / 0.6) / 4096; no recompute.
    m = _fit(catalog, "time.fit.k_mem") * (70 / 0.6) / 4096
    sec_per_flop = (1 + m) / (
        70e12 * _fit(catalog, "time.fit.e_max") * _maturity(catalog, _G5_AGE_YEARS)
    )
    compute_s = (6 * 7e9 + 12 * 32 * 4096 * 4096) * 262_144 / 64 * sec_per_flop  # ≈ 4.09 s
    busy_s = compute_s + _fit(catalog, "time.fit.step_overhead_s")
    # DP: ZeRO-3 volume (v = 3: 14 GB of unsharded bf16 weights + activations exceed 21.6 GB usable)
    # 3 · 2 B · 7e9 / pp 2 · 31/32 over 100 Gbps / 8 × 0.70 = 8.75e9 B/s (tp 1: the whole node's NICs).
    sync_s = 3 * 2 * 7e9 / 2 * 31 / 32 / (100e9 / 8 * 0.70)  # = 2.325 s
    exposed_s = sync_s - _fit(catalog, "time.fit.overlap") * compute_s  # ≈ 0.40 s
    # Bubble: (pp − 1) / (micro-batches 262,144 / 4096 / 32 = 2 × virtual stages 32 / (2 · 2) = 8).
    bubble_s = 1 / (2 * 8) * compute_s
    lines = _lines(fc)
    assert lines["data-parallel gradient sync not hidden by compute"] == pytest.approx(
        10 * exposed_s / busy_s, rel=1e-9
    )
    assert lines["pipeline bubble"] == pytest.approx(10 * bubble_s / busy_s, rel=1e-9)
    assert lines["stragglers (slowest GPU sets the step)"] == pytest.approx(
        10 * 0.012 * math.sqrt(2 * math.log(64))
    )
    assert "tensor-parallel activation all-reduce" not in lines  # tp = 1
    assert sum(lines.values()) == pytest.approx(fc.usage.sync_stall_hours, rel=1e-12)


def test_hours_only_plan_without_params_has_only_stragglers(catalog: Catalog) -> None:
    """No model size: nothing sets the bytes per step, so the only modelled stall is stragglers
    (4 × p5 = 32 GPUs: 10 h × 0.012 × sqrt(2 ln 32) = 0.3155 h)."""
    plan = plan_from_dict({"run": {"hours": 10}, "cluster": {"instance": "p5.48xlarge", "nodes": 4},
                           "prices": {"as_of": date(2025, 5, 1)}})  # fmt: skip
    fc = forecast(plan, catalog, today=TODAY)
    assert _lines(fc) == {
        "stragglers (slowest GPU sets the step)": pytest.approx(
            10 * 0.012 * math.sqrt(2 * math.log(32))
        )
    }
    assert "not modelled" in dict(fc.usage.time.factors)["communication"]
