"""accelerator_peaks.csv: per-precision peaks, their rules, and refusals of bad rows."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from trainbill.catalog import Accelerator, load_catalog
from trainbill.errors import CatalogSchemaError, SpecError

HEADER = "accelerator,precision,peak_tflops,source,as_of\n"


def _part(peaks: tuple[tuple[str, float, str], ...] = (), fp8: float | None = None) -> Accelerator:
    return Accelerator(
        id="x1", name="X1", vendor="v", peak_bf16_tflops=100.0, peak_fp8_tflops=fp8,
        hbm_gb=16.0, hbm_tbps=1.0, intra_node_gbytes_per_s=100.0, launched=None, source="s",
        as_of=date(2024, 1, 1), peaks=peaks,
    )  # fmt: skip


def test_rules_of_each_precision() -> None:
    """fp16 falls back to the BF16 rate, fp8 without units to BF16, tf32 without units to the
    FP32 rate; a listed figure wins."""
    part = _part((("fp32", 10.0, "sheet"),))
    assert part.peak_tflops("bf16") == 100.0
    assert part.peak_tflops("fp8") == 100.0
    assert part.peak_tflops("fp16") == 100.0
    assert part.peak_tflops("fp32") == 10.0
    assert part.peak_tflops("tf32") == 10.0
    listed = _part((("fp16", 80.0, "sheet"), ("tf32", 50.0, "sheet"), ("fp32", 10.0, "s")), 200)
    assert (listed.peak_tflops("fp16"), listed.peak_tflops("tf32")) == (80.0, 50.0)
    assert listed.peak_tflops("fp8") == 200.0


def test_no_fp32_figure_is_refused_not_guessed() -> None:
    """No FP32 row: fp32 and tf32 are refused, naming the field and what the part has."""
    part = _part()
    assert part.precisions() == ("fp16", "bf16", "fp8")
    with pytest.raises(SpecError, match=r"model.precision: 'fp32' .* allowed on x1: fp16, bf16"):
        part.peak_tflops("fp32")


def test_packaged_figures_are_the_datasheets() -> None:
    """V100 SXM2 datasheet: 125 TFLOP/s tensor, 15.7 FP32; MI250X: 383.0 FP16/BF16, 95.7
    FP32 matrix; H100 SXM: TF32 989 with sparsity, 494.5 dense."""
    c = load_catalog()
    v100, mi250x, h100 = (c.accelerator(a) for a in ("v100", "mi250x", "h100"))
    assert (v100.peak_tflops("fp16"), v100.peak_tflops("fp32")) == (125.0, 15.7)
    assert (mi250x.peak_tflops("bf16"), mi250x.peak_tflops("fp32")) == (383.0, 95.7)
    assert h100.peak_tflops("tf32") == 989 / 2
    for acc in c.accelerators.values():
        for _, tflops, source in acc.peaks:
            assert tflops > 0
            assert "datasheet" in source.lower()


def _overlay(tmp: Path, text: str) -> Path:
    (tmp / "accelerator_peaks.csv").write_text(HEADER + text, encoding="utf-8")
    return tmp


def test_overlay_adds_a_peak(tmp_path: Path) -> None:
    """A user's overlay may give a part's FP32 peak (their own measurement or datasheet)."""
    c = load_catalog([_overlay(tmp_path, "tpu-v4,fp32,60,my datasheet,2024-01-01\n")])
    assert c.accelerator("tpu-v4").peak_tflops("fp32") == 60.0
    assert c.accelerator("tpu-v4").peak_tflops("bf16") == 275.0


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ("nope,fp32,60,s,2024-01-01\n", "'nope' is not in accelerators.csv"),
        ("h100,int4,60,s,2024-01-01\n", "precision: 'int4' not one of fp16, tf32, fp32"),
        ("h100,fp32,-1,s,2024-01-01\n", "peak_tflops"),
        ("h100,fp32,60,s,2024-01-01\nh100,fp32,61,s,2024-01-01\n", "duplicate row"),
    ],
)
def test_bad_rows_are_refused_naming_file_and_field(tmp_path: Path, row: str, needle: str) -> None:
    """Unknown part, unknown precision, a non-positive peak, a duplicate: one line each."""
    with pytest.raises(CatalogSchemaError, match=needle) as err:
        load_catalog([_overlay(tmp_path, row)])
    assert "accelerator_peaks.csv" in str(err.value)
