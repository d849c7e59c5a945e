"""Memory feasibility (``trainbill.memory``): per-GPU bytes by hand, and the order in which a
layout is made to fit (no recompute, then full recompute, then optimizer offload).

Every expected figure is worked out below from the module's published formulas: 16 bytes of
mixed-precision Adam state per parameter (ZeRO), 34 · seq · d_model / tp activation bytes per
layer (Korthikanti et al. 2022), 2 · seq · d_model / tp kept per layer under full recompute,
and a gather buffer of 4 · params / (tp · layers) bytes when the state is sharded (dp > 1).
"""

from __future__ import annotations

from typing import Any

import pytest

from trainbill.memory import MemoryEstimate, memory_per_gpu, min_gpus_to_fit

#: A 7B dense model (Llama-2-7B shape) at 4K tokens, 16 bytes of state per parameter.
SEVEN_B: dict[str, Any] = {
    "params": 7e9,
    "layers": 32,
    "d_model": 4096,
    "seq_len": 4096,
    "state_bytes_per_param": 16.0,
}


def test_seven_b_over_eight_ranks_fits_without_recompute() -> None:
    est = memory_per_gpu(**SEVEN_B, hbm_gb=80, usable_fraction=0.9, dp=8)
    # state: 16 B × 7e9 / 8 ranks = 14e9 B = 14 GB
    # gather buffer: 4 B × 7e9 / (tp 1 × 32 layers) = 875e6 B = 0.875 GB
    # activations: 32 layers × 34 × 4096 × 4096 = 1088 × 16,777,216 = 18,253,611,008 B
    # total 14 + 0.875 + 18.253611008 = 33.128611008 GB of 80 × 0.9 = 72 GB usable
    assert est.state_gb == pytest.approx(14.0)
    assert est.buffer_gb == pytest.approx(0.875)
    assert est.activations_gb == pytest.approx(18.253611008)
    assert est.total_gb == pytest.approx(33.128611008)
    assert est.usable_gb == pytest.approx(72.0)
    assert est.fits
    assert not est.recompute
    assert not est.offload


def test_recompute_is_chosen_only_when_activations_do_not_fit() -> None:
    est = memory_per_gpu(**SEVEN_B, hbm_gb=40, usable_fraction=0.8, dp=8)
    # usable 40 × 0.8 = 32 GB < 33.128611008 GB without recompute (previous test), so recompute:
    # activations (32 layers × 2 + 34) × 4096 × 4096 = 98 × 16,777,216 = 1,644,167,168 B
    # total 14 + 0.875 + 1.644167168 = 16.519167168 GB <= 32 GB
    assert est.recompute
    assert not est.offload
    assert est.activations_gb == pytest.approx(1.644167168)
    assert est.total_gb == pytest.approx(16.519167168)
    assert est.fits


def test_single_rank_has_no_gather_buffer() -> None:
    est = memory_per_gpu(**SEVEN_B, hbm_gb=1000, usable_fraction=1.0, dp=1)
    # dp 1: nothing is sharded, so nothing is gathered; state 16 B × 7e9 = 112 GB
    assert est.buffer_gb == 0.0
    assert est.state_gb == pytest.approx(112.0)


def test_tensor_and_pipeline_parallelism_divide_state_and_activations() -> None:
    est = memory_per_gpu(**SEVEN_B, hbm_gb=80, usable_fraction=0.9, tp=2, pp=2, dp=2)
    # state: 16 × 7e9 / (2 · 2 · 2) = 14e9 B = 14 GB
    # buffer: 4 × 7e9 / (tp 2 × 32) = 437.5e6 B = 0.4375 GB
    # activations: 32 × 34 × 4096 × 4096 / tp 2 = 9,126,805,504 B (pp does not divide them:
    # the first 1F1B stage keeps about L layers in flight)
    assert est.state_gb == pytest.approx(14.0)
    assert est.buffer_gb == pytest.approx(0.4375)
    assert est.activations_gb == pytest.approx(9.126805504)
    assert not est.recompute


def test_seventy_b_on_eight_gpus_fits_only_with_offload_and_recompute() -> None:
    est = memory_per_gpu(
        params=70e9,
        layers=80,
        d_model=8192,
        seq_len=4096,
        hbm_gb=80,
        usable_fraction=0.9,
        state_bytes_per_param=16.0,
        dp=8,
    )
    # without offload the state alone is 16 × 70e9 / 8 = 140 GB > 72 GB usable;
    # offloading the 12 B/param fp32 optimizer state leaves 4 × 70e9 / 8 = 35 GB;
    # buffer 4 × 70e9 / 80 layers = 3.5 GB;
    # activations without recompute 80 × 34 × 4096 × 8192 = 91,268,055,040 B (too much),
    # with recompute (80 × 2 + 34) × 33,554,432 = 6,509,559,808 B;
    # total 35 + 3.5 + 6.509559808 = 45.009559808 GB <= 72 GB
    assert est.offload
    assert est.recompute
    assert est.state_gb == pytest.approx(35.0)
    assert est.buffer_gb == pytest.approx(3.5)
    assert est.activations_gb == pytest.approx(6.509559808)
    assert est.total_gb == pytest.approx(45.009559808)
    assert est.fits


def test_nothing_fits_returns_the_last_try_marked_unfit() -> None:
    est = memory_per_gpu(**SEVEN_B, hbm_gb=1, usable_fraction=0.9, dp=1)
    # even offloaded, 4 B × 7e9 = 28 GB of weights and gradients exceed 0.9 GB
    assert not est.fits
    assert est.offload
    assert est.recompute
    assert est.state_gb == pytest.approx(28.0)


def test_forced_recompute_is_kept_even_when_not_needed() -> None:
    est = memory_per_gpu(**SEVEN_B, hbm_gb=80, usable_fraction=0.9, dp=8, recompute=True)
    # 14 + 0.875 + 1.644167168 GB (recompute activations, as above)
    assert est.recompute
    assert est.total_gb == pytest.approx(16.519167168)


def test_moe_experts_are_split_over_expert_ranks_and_kept_whole() -> None:
    est = memory_per_gpu(
        params=10e9,
        layers=20,
        d_model=4096,
        seq_len=1024,
        hbm_gb=1000,
        usable_fraction=1.0,
        state_bytes_per_param=16.0,
        dp=8,
        expert_params=8e9,
        ep=4,
    )
    # experts' bf16 weights + grads kept whole per expert rank: 4 × 8e9 = 32e9 B over ep 4
    # = 8e9 B; everything else sharded over 8 ranks: (16 × 10e9 − 32e9) / 8 = 16e9 B;
    # state 24 GB. Gather buffer holds only dense weights: 4 × (10e9 − 8e9) / 20 = 0.4 GB.
    assert est.state_gb == pytest.approx(24.0)
    assert est.buffer_gb == pytest.approx(0.4)


def test_describe_states_each_part_and_the_mode() -> None:
    est = MemoryEstimate(
        state_gb=14.0,
        buffer_gb=0.875,
        activations_gb=1.5,
        usable_gb=72.0,
        recompute=True,
        offload=True,
    )
    # 14 + 0.875 + 1.5 = 16.375, printed to one decimal as 16.4
    assert est.describe() == (
        "per GPU 14.0 GB model state + 0.9 GB gather buffer + 1.5 GB activations = 16.4 GB "
        "of 72.0 GB usable HBM (offloaded optimizer, full activation recompute)"
    )


def test_fits_is_inclusive_at_usable_hbm() -> None:
    # 10 + 1 + 1 = 12 GB need against exactly 12 GB usable
    at_limit = MemoryEstimate(
        state_gb=10.0,
        buffer_gb=1.0,
        activations_gb=1.0,
        usable_gb=12.0,
        recompute=False,
        offload=False,
    )
    assert at_limit.fits


def test_min_gpus_to_fit_seventy_b_on_h100_nodes() -> None:
    n = min_gpus_to_fit(
        params=70e9,
        layers=80,
        d_model=8192,
        seq_len=4096,
        hbm_gb=80,
        usable_fraction=0.9,
        state_bytes_per_param=16.0,
        gpus_per_node=8,
    )
    # tp 8: recomputed activations (80 × 2 + 34) × 4096 × 8192 / 8 = 194 × 4,194,304
    # = 813,694,976 B; buffer 4 × 70e9 / (8 × 80) = 437,500,000 B;
    # room = 72e9 − 813,694,976 − 437,500,000 = 70,748,805,024 B per GPU;
    # GPUs = ceil(16 × 70e9 / 70,748,805,024) = ceil(15.83) = 16
    assert n == 16


def test_min_gpus_to_fit_is_none_when_activations_alone_overflow() -> None:
    n = min_gpus_to_fit(
        params=7e9,
        layers=32,
        d_model=4096,
        seq_len=4096,
        hbm_gb=1,
        usable_fraction=0.9,
        state_bytes_per_param=16.0,
        gpus_per_node=1,
    )
    # recomputed activations 1,644,167,168 B (above) > 0.9e9 B usable: no sharding helps
    assert n is None
