"""Failure sampling at scale (``trainbill.simulate``): a 100,000-GPU run draws thousands of
failures per trial, so sums of uniforms are drawn in bulk, bounded and unbiased, and the
``simulate`` command on such a cluster finishes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import run_argv
from trainbill.simulate.sampling import _uniform_sums


def test_uniform_sums_stay_bounded_and_unbiased() -> None:
    """Sum of k U(0,1): mean k/2, sd sqrt(k/12). k = 3 is drawn exactly (mean 1.5, sd 0.5);
    k = 50,000 by the normal approximation (mean 25,000, sd 64.55) without 2e8 draws."""
    g = np.random.default_rng(7)
    exact = _uniform_sums(g, np.full(40_000, 3, dtype=np.int64))
    assert exact.min() >= 0.0
    assert exact.max() <= 3.0
    assert abs(exact.mean() - 1.5) < 0.02  # 4 × 0.5 / sqrt(40,000) = 0.01
    big = _uniform_sums(g, np.full(4000, 50_000, dtype=np.int64))
    assert abs(big.mean() - 25_000) < 5  # 4 × 64.55 / sqrt(4000) = 4.1
    assert 60 < big.std() < 69
    mixed = _uniform_sums(g, np.array([0, 2, 5000], dtype=np.int64))
    assert mixed[0] == 0.0
    assert 0.0 <= mixed[1] <= 2.0
    assert 0.0 <= mixed[2] <= 5000.0


def test_cli_simulate_of_a_huge_cluster_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """100,000 GPUs for 1,000 h: ~2,000 failures per trial, which used to be 2,000 draws each."""
    f = tmp_path / "big.toml"
    f.write_text(
        '[run]\nhours = 1000\n[cluster]\ninstance = "p5.48xlarge"\nnodes = 12500\n',
        encoding="utf-8",
    )
    code, stdout, _err = run_argv(["simulate", str(f), "--trials", "500", "--json"], capsys)
    out = json.loads(stdout)
    assert code == 0
    assert out["trials"] == 500
    # 4.74e-4 × 100,000 GPUs × ≥ 1,000 exposed h / 24 ≥ 1,975 failures per run on average.
    assert out["mean_events"]["failures"] > 1975
