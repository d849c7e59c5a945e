"""Architectures in the time model: state-space (Mamba) and hybrid models, by hand.

Every expected value is worked out here from the formulas in ``trainbill.timemodel`` and the
catalog's cited constants (``time.ssm_*``), never read back from the code's output.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from trainbill.catalog import Catalog, load_catalog
from trainbill.cli import main
from trainbill.errors import SpecError
from trainbill.spec import plan_from_dict
from trainbill.timemodel import FitParams, estimate_time

# A fit with every factor but the ceiling and the memory-bound share switched off.
FIT = FitParams(e_max=0.5, k_mem=1.0, eta_fp8=1.0, overlap=0.0, step_overhead_s=0.0, k_attn=0.0)
H100_BALANCE = 989e12 / 3.35e12  # FLOP per HBM byte, 295.22
L, D, SEQ, TOKENS = 16, 4096, 2048, 1e11


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The packaged catalog (its ``time.ssm_*`` constants are the cited ones below)."""
    return load_catalog()


def _est(catalog: Catalog, **kw: Any):  # type: ignore[no-untyped-def]
    """1e9 parameters, 16 × 4096, seq 2048 on one p5.48xlarge (8 H100), no recompute."""
    inst = catalog.instance("p5.48xlarge")
    return estimate_time(
        catalog=catalog, accelerator=catalog.accelerator("h100"), instance=inst, nodes=1,
        precision="bf16", hours=None, params=1e9, active_params=None, tokens=TOKENS,
        global_batch_tokens=4e6, seq_len=SEQ, layers=L, d_model=D, straggler_cv=0.0,
        recompute=False, fit=FIT, **kw,
    )  # fmt: skip


def test_catalog_constants_are_the_papers() -> None:
    """E = 2 and N = 16 (Gu & Dao 2023), 9 scan FLOPs per channel-state (mamba's counter),
    1:7 attention in a hybrid (Jamba)."""
    c = load_catalog()
    assert c.value("time.ssm_expand") == 2
    assert c.value("time.ssm_state_size") == 16
    assert c.value("time.ssm_scan_flops") == 9
    assert c.value("time.hybrid_attention_share") == pytest.approx(1 / 8)


def test_state_space_by_hand(catalog: Catalog) -> None:
    """No attention; 2 Mamba blocks per 12·d² layer: 32 blocks. Scan FLOPs per token
    3 · 9 · E 2 · d 4096 · N 16 per block = 3,538,944, × 32 = 113,246,208. Memory-bound:
    m = 1.0 · 295.22 / 4096 plus m_ssm = 32 blocks · 2 · 4096 channels · b bytes · 295.22 /
    (6e9 + 113,246,208) FLOPs per token."""
    b = float(catalog.value("time.ssm_bytes_per_channel"))
    est = _est(catalog, architecture="state-space")
    scan = 32 * 3 * 9 * 2 * 4096 * 16
    per_token = 6 * 1e9 + scan
    m = H100_BALANCE / 4096
    m_ssm = 32 * 2 * 4096 * b * H100_BALANCE / per_token
    assert est.flops == pytest.approx(per_token * TOKENS)
    assert est.compute_hours == pytest.approx(
        per_token * TOKENS * (1 + m + m_ssm) / (8 * 989e12 * 0.5) / 3600
    )
    names = dict(est.factors)
    assert "selective_scan" in names
    assert "state-space" in names["architecture"]


def test_hybrid_by_hand(catalog: Catalog) -> None:
    """A quarter attention: attention FLOPs 0.25 · 12 · 16 · 4096 · 2048 counted (half of them
    executed, causal), 0.75 · 32 = 24 Mamba blocks."""
    b = float(catalog.value("time.ssm_bytes_per_channel"))
    est = _est(catalog, architecture="hybrid", attention_share=0.25)
    attn = 0.25 * 12 * L * D * SEQ
    scan = 24 * 3 * 9 * 2 * D * 16
    counted = 6e9 + attn + scan
    timed = 6e9 + 0.5 * attn + scan
    m = H100_BALANCE / D + 24 * 2 * D * b * H100_BALANCE / counted
    assert est.flops == pytest.approx(counted * TOKENS)
    assert est.compute_hours == pytest.approx(timed * TOKENS * (1 + m) / (8 * 989e12 * 0.5) / 3600)


def test_hybrid_default_share_is_the_catalogs(catalog: Catalog) -> None:
    """Left out, a hybrid's attention share is time.hybrid_attention_share (1/8)."""
    given = _est(catalog, architecture="hybrid", attention_share=0.125)
    default = _est(catalog, architecture="hybrid")
    assert default.compute_hours == pytest.approx(given.compute_hours)


def test_transformer_unchanged_by_the_new_terms(catalog: Catalog) -> None:
    """A transformer has no scan term: 6e9 + 12·L·d·seq per token, as before."""
    est = _est(catalog)
    assert est.flops == pytest.approx((6e9 + 12 * L * D * SEQ) * TOKENS)
    assert "architecture" not in dict(est.factors)


def test_attention_share_needs_a_hybrid() -> None:
    """A share on a state-space model is refused naming the field."""
    with pytest.raises(SpecError, match="attention_share"):
        plan_from_dict({"model": {"params": 1e9, "tokens": 1e9, "architecture": "state-space",
                                  "attention_share": 0.5}})  # fmt: skip


def _forecast(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    with pytest.raises(SystemExit) as exc:
        main(["forecast", *args, "--json", "--as-of", "2026-12-01"])
    assert exc.value.code in (0, None)
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_cli_architectures_differ(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's example: 7B on 5.5T tokens on 256 H100, each architecture forecasts, and the
    state-space and hybrid estimates differ from the transformer's (fewer attention FLOPs, but
    the Mamba blocks' memory-bound work)."""
    base = ["--params", "7e9", "--tokens", "5.5e12", "--gpu", "h100", "--gpus", "256"]
    hours = {
        a: _forecast([*base, "--architecture", a], capsys)["time"]["gpu_hours"]
        for a in ("transformer", "state-space", "hybrid")
    }
    assert hours["state-space"] != pytest.approx(hours["transformer"], rel=0.01)
    assert hours["hybrid"] != pytest.approx(hours["transformer"], rel=0.01)
    assert hours["hybrid"] != pytest.approx(hours["state-space"], rel=0.001)
