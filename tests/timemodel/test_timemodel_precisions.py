"""Precisions in the time model (fp32, tf32, fp16 beside bf16 and fp8), by hand.

Peaks are the datasheet figures cited in ``accelerator_peaks.csv`` (V100 SXM2: 125 TFLOP/s
FP16 tensor, 15.7 FP32; A100: 156 TF32 dense); the arithmetic is written out in each test.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from trainbill.catalog import Catalog, load_catalog
from trainbill.cli import main
from trainbill.timemodel import FitParams, estimate_time

FIT = FitParams(e_max=0.5, k_mem=1.0, eta_fp8=1.0, overlap=0.0, step_overhead_s=0.0, k_attn=0.0)
L, D, SEQ, TOKENS = 16, 2048, 1024, 1e10


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """The packaged catalog."""
    return load_catalog()


def _est(catalog: Catalog, instance: str, precision: str):  # type: ignore[no-untyped-def]
    inst = catalog.instance(instance)
    return estimate_time(
        catalog=catalog, accelerator=catalog.accelerator(inst.accelerator), instance=inst,
        nodes=1, precision=precision, hours=None, params=5e8, active_params=None,
        tokens=TOKENS, global_batch_tokens=2**21, seq_len=SEQ, layers=L, d_model=D,
        straggler_cv=0.0, recompute=False, fit=FIT,
    )  # fmt: skip


def _timed_per_token() -> float:
    """6 · 5e8 + half (causal, fused) of 12 · 16 · 2048 · 1024."""
    return 6 * 5e8 + 0.5 * 12 * L * D * SEQ


def test_fp16_on_v100_runs_at_its_tensor_rate(catalog: Catalog) -> None:
    """V100 fp16: g = 125 / 125 = 1, m = 1.0 · (125e12 / 0.9e12) / 2048, 8 GPUs at 125 · 0.5."""
    est = _est(catalog, "p3dn.24xlarge", "fp16")
    m = 125e12 / 0.9e12 / D
    assert est.peak_tflops_per_gpu == 125
    assert est.compute_hours == pytest.approx(
        _timed_per_token() * TOKENS * (1 + m) / (8 * 125e12 * 0.5) / 3600
    )


def test_fp32_on_v100_is_eight_times_slower_matmuls_and_double_bytes(catalog: Catalog) -> None:
    """V100 fp32: g = 125 / 15.7 = 7.96 (matmuls at the FP32 rate), m doubled (4-byte
    activations), still over the BF16-reference speed 125e12 · e_max."""
    est = _est(catalog, "p3dn.24xlarge", "fp32")
    g = 125 / 15.7
    m = 2 * 125e12 / 0.9e12 / D
    assert est.peak_tflops_per_gpu == 15.7
    assert est.compute_hours == pytest.approx(
        _timed_per_token() * TOKENS * (g + m) / (8 * 125e12 * 0.5) / 3600
    )


def test_tf32_on_a100_is_half_the_bf16_rate(catalog: Catalog) -> None:
    """A100 tf32: g = 312 / 156 = 2, m doubled (FP32 tensors); fp16 = bf16 on the A100."""
    tf32 = _est(catalog, "p4d.24xlarge", "tf32")
    m = 312e12 / 1.555e12 / D
    assert tf32.compute_hours == pytest.approx(
        _timed_per_token() * TOKENS * (2 + 2 * m) / (8 * 312e12 * 0.5) / 3600
    )
    fp16 = _est(catalog, "p4d.24xlarge", "fp16")
    bf16 = _est(catalog, "p4d.24xlarge", "bf16")
    assert fp16.compute_hours == pytest.approx(bf16.compute_hours)


def test_tf32_without_tf32_units_is_fp32(catalog: Catalog) -> None:
    """Volta has no TF32 units: tf32 on a V100 is FP32 arithmetic, at 15.7 TFLOP/s."""
    assert _est(catalog, "p3dn.24xlarge", "tf32").compute_hours == pytest.approx(
        _est(catalog, "p3dn.24xlarge", "fp32").compute_hours
    )


def _forecast(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(["forecast", *args, "--json", "--as-of", "2026-12-01"])
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out or out.err


@pytest.mark.parametrize(
    "args",
    [
        ["--gpu", "v100", "--gpus", "256", "--precision", "fp16"],
        ["--gpu", "mi250x", "--gpus", "16", "--precision", "bf16"],
        ["--gpu", "t4", "--gpus", "64", "--precision", "fp16"],
        ["--gpu", "a100", "--gpus", "64", "--precision", "fp32"],
    ],
)
def test_issue_examples_forecast(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Issues #38 and #43: 1.3B on 440B tokens on V100 fp16 and MI250X bf16 succeed."""
    code, text = _forecast(["--params", "1.3e9", "--tokens", "4.4e11", *args], capsys)
    assert code == 0, text
    t: dict[str, Any] = json.loads(text)["time"]
    assert t["gpu_hours"] > 0
    assert 0 < t["mfu"] < 1


def test_no_published_peak_is_one_line_naming_the_allowed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Google publishes no FP32 rate for TPU v4: refused, naming what the part does run."""
    code, text = _forecast(["--params", "1e9", "--tokens", "1e10", "--gpu", "tpu-v4",
                            "--gpus", "8", "--precision", "fp32"], capsys)  # fmt: skip
    assert code == 1
    assert "model.precision" in text
    assert "allowed on tpu-v4: fp16, bf16, fp8" in text
    assert "\n" not in text.strip()


def test_optimizer_leaves_out_parts_without_the_precision(catalog: Catalog) -> None:
    """An fp32 plan searched over every cloud: TPUs (no published FP32 rate) are left out with a
    note saying what they run, instead of failing the whole search."""
    from trainbill.optimize.space import SearchSpace, search_instances
    from trainbill.spec import plan_from_dict

    plan = plan_from_dict({"model": {"params": 1e9, "tokens": 2e10, "precision": "fp32"},
                           "cluster": {"gpu": "a100", "gpus": 16}})  # fmt: skip
    out, notes = search_instances(plan, catalog, SearchSpace(), ("aws", "gcp", "azure"),
                                  allow_stand_ins=False, today=None)  # fmt: skip
    assert out
    for inst in out:
        assert catalog.accelerator(inst.accelerator).precision_peak("fp32") is not None
    tpu = [n for n in notes if n.startswith("tpu-v4")]
    assert tpu, notes
    assert "no published fp32 peak" in tpu[0]


def test_bf16_on_a_part_without_bf16_units_warns(catalog: Catalog) -> None:
    """The V100 lists an FP16 figure (it has no BF16 units): a bf16 forecast on it warns and
    names fp16; fp16 on it, and bf16 on an A100 (BF16 units), do not."""
    assert not catalog.accelerator("v100").bf16_units
    assert catalog.accelerator("a100-40gb").bf16_units
    bf16 = _est(catalog, "p3dn.24xlarge", "bf16")
    assert any("no BF16 units" in w and "--precision fp16" in w for w in bf16.warnings)
    assert not any("BF16 units" in w for w in _est(catalog, "p3dn.24xlarge", "fp16").warnings)
    assert not any("BF16 units" in w for w in _est(catalog, "p4d.24xlarge", "bf16").warnings)


def test_runs_dated_before_flashattention_are_timed_unfused(catalog: Catalog) -> None:
    """time.fused_attention_since is FlashAttention's release (arXiv 2205.14135 v1, 2022-05-27):
    a run dated the day before is timed with unfused attention (slower, and --explain says
    why), the day itself with fused attention."""
    from datetime import date

    from trainbill.spec import plan_from_dict
    from trainbill.usage import fused_attention_on, usage_for

    assert catalog.value("time.fused_attention_since") == "2022-05-27"
    assert not fused_attention_on(catalog, date(2022, 5, 26))
    assert fused_attention_on(catalog, date(2022, 5, 27))

    def hours(day: str) -> tuple[float, dict[str, str]]:
        plan = plan_from_dict(
            {
                "model": {"params": 7e9, "tokens": 1e11},
                "cluster": {"instance": "p4d.24xlarge", "nodes": 8},
                "run": {"date": day},
                "prices": {"as_of": "2023-03-15"},
            }
        )
        u = usage_for(plan, catalog, today=date(2026, 12, 5))
        return u.compute.hours, dict(u.time.factors)

    before, notes = hours("2022-05-26")
    after, fused_notes = hours("2022-05-27")
    assert before > after
    assert "before FlashAttention" in notes["attention"]
    assert "attention" not in fused_notes
