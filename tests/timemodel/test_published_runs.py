"""The published-runs table as time-model cases: every row traceable to one source document."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import published_runs

from trainbill.catalog import Catalog


def test_every_case_names_its_source_document() -> None:
    """Each case carries the source_key of its CSV row; a sweep's rows share one key."""
    cases = list(published_runs.cases())
    assert all(c.source_key for c in cases)
    foundry = {c.source_key for c in cases if c.id.startswith("llmfoundry")}
    assert foundry == {"llm-foundry-benchmark-readme"}  # one README table, one source
    megatron = {c.source_key for c in cases if c.id.startswith("megatron-2021")}
    assert megatron == {"megatron-lm-paper-2104.04473"}


def test_every_whole_run_table_entry_is_a_case() -> None:
    """Each WHOLE_RUNS entry has a CSV row, a run date and a shape, and scores GPU-hours."""
    by_id = {c.id: c for c in published_runs.cases()}
    for rid in published_runs.WHOLE_RUNS:
        assert by_id[rid].kind == "whole_run"
        published_runs.run_date(rid)


def test_moe_whole_runs_pass_active_params() -> None:
    """DeepSeek-V3 (arXiv 2412.19437): 671B total, 37B active per token, given to the plan as
    such."""
    case = next(c for c in published_runs.cases() if c.id == "deepseek-v3")
    assert (case.params, case.active_params) == (671e9, 37e9)


def test_row_without_source_key_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row with an empty source_key fails with one line naming the file and the row."""
    lines = published_runs.CSV.read_text(encoding="utf-8").splitlines()
    header, first = lines[0], lines[1]
    assert header.endswith(",source_key")
    assert first.startswith("llama2-7b,")
    bad = tmp_path / "published_runs.csv"
    bad.write_text(header + "\n" + first.rsplit(",", 1)[0] + ",\n", encoding="utf-8")
    monkeypatch.setattr(published_runs, "CSV", bad)
    with pytest.raises(ValueError, match=r"published_runs\.csv: row 'llama2-7b' has no source_key"):
        list(published_runs.cases())


def test_whole_run_without_hours_cover_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole run whose gpu_hours_cover is not a known value fails naming file, row, field and
    values."""
    lines = published_runs.CSV.read_text(encoding="utf-8").splitlines()
    header, first = lines[0], lines[1]
    assert header.endswith(",gpu_hours_cover,source_key")
    assert first.endswith(",training_run,meta-llama2-card")
    bad = tmp_path / "published_runs.csv"
    bad.write_text(
        header + "\n" + first.replace(",training_run,", ",pretraining,") + "\n", encoding="utf-8"
    )
    monkeypatch.setattr(published_runs, "CSV", bad)
    with pytest.raises(
        ValueError,
        match=r"published_runs\.csv: row 'llama2-7b' gpu_hours_cover is 'pretraining'; a whole "
        r"run needs one of training_run, model_total, with_distillation, planned",
    ):
        list(published_runs.cases())


def test_hours_cover_marks_what_the_sources_say() -> None:
    """Llama 3.2 1B/3B (card: total GPU time incl. pruning and logit distillation), TinyLlama (a
    90-day
    plan), Llama 3.1 8B (card: total GPU time per model) and BLOOM (final training run only)."""
    by_id = {c.id: c for c in published_runs.cases()}
    assert by_id["llama32-1b"].hours_cover == "with_distillation"
    assert by_id["tinyllama-1.1b"].hours_cover == "planned"
    assert by_id["llama31-8b"].hours_cover == "model_total"
    assert by_id["bloom-176b"].hours_cover == "training_run"
    assert {c.hours_cover for c in by_id.values() if c.kind == "throughput"} == {""}


def test_derived_gpu_hours_are_gpus_times_wall_hours() -> None:
    """Rows whose notes say their GPU-hours are derived hold gpu_count x wall_hours, e.g. GLM-130B:
    96 DGX-A100 x 8 = 768 GPUs x 60 days x 24 = 1,105,920; SantaCoder 96 x 6.2 x 24 = 14,284.8."""
    rows = published_runs._rows()
    derived = {rid: r for rid, r in rows.items() if "gpu_hours derived" in r["notes"]}
    assert {"glm-130b", "santacoder-1.1b", "llmc-gpt2-1558m"} <= set(derived)
    for rid, r in derived.items():
        product = float(r["gpu_count"]) * float(r["wall_hours"])
        assert float(r["gpu_hours"]) == pytest.approx(product, rel=1e-9), rid
    assert float(rows["glm-130b"]["gpu_hours"]) == 768 * 60 * 24
    assert float(rows["santacoder-1.1b"]["gpu_hours"]) == pytest.approx(96 * 6.2 * 24)


def test_llm_c_run_reads_tokens_from_the_script() -> None:
    """karpathy/llm.c scripts/run_gpt2_1558M.sh: 32,000 steps x 1,048,576 tokens = 33.55B tokens
    (its comment rounds to 32B), on one 8x H100 node for 24 h = 192 GPU-hours."""
    case = next(c for c in published_runs.cases() if c.id == "llmc-gpt2-1558m")
    assert case.tokens == pytest.approx(32_000 * 1_048_576)
    assert case.published == 8 * 24


def test_jetmoe_is_an_moe_case() -> None:
    """JetMoE-8B (arXiv 2404.07413; research.myshell.ai/jetmoe): 8B total, 2.2B active per token."""
    case = next(c for c in published_runs.cases() if c.id == "jetmoe-8b")
    assert (case.params, case.active_params) == (8e9, 2.2e9)
    assert case.published == 30_000  # the paper's H100 GPU-hours, not 96 x 2 weeks


def test_h200_rows_are_the_recorded_measurements() -> None:
    """The six H200 rows agree with the raw output they cite (gpu_profile.py's
    benchmarks/results/h200-2026-12-04/profile_*.json, gpu_sweep.py's
    benchmarks/results/h200-2026-12-04-sweep/sweep.json), and each file with itself: the
    d_model 2048 run took 0.4159 s for 2.2564e14 counted FLOPs, 2.2564e14 / 0.4159 / 1e12 =
    542.6 TFLOP/s, and 542.6 / 989 (the H200's dense BF16 peak) = 0.5486 MFU."""
    import csv
    import json

    results = ROOT / "benchmarks" / "results"
    with published_runs.CSV.open(encoding="utf-8", newline="") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh) if r["id"].startswith("h200-eager")}
    assert len(rows) == 6
    for row in rows.values():
        assert row["source_key"] == "trainbill-h200-2026-12-04"
        cited = row["source"].split("raw output benchmarks/results/")[1]
        path, _, shape = cited.partition(" (")
        raw = json.loads((results / path).read_text(encoding="utf-8"))
        name = shape.rstrip(")") if shape else "transformer-1b"
        (big,) = (r for r in raw["results"] if r["model"] == name)
        prof = big["profile"]
        assert raw["machine"]["device_name"] == "NVIDIA H200"
        assert prof["achieved_tflops"] == pytest.approx(
            prof["flops_per_step"] / prof["step_seconds"] / 1e12
        )
        assert prof["mfu"] == pytest.approx(prof["achieved_tflops"] / 989.0)
        assert float(row["tflops_per_gpu"]) == pytest.approx(prof["achieved_tflops"], abs=0.05)
        assert float(row["mfu"]) == pytest.approx(prof["mfu"], abs=5e-5)
        assert float(row["params_b"]) * 1e9 == pytest.approx(big["param_count"])
        assert int(row["seq_len"]) == big["config"]["seq_len"]
        notes = published_runs._notes(row)
        assert float(notes["step_seconds"]) == pytest.approx(prof["step_seconds"], abs=5e-5)
    one_b = json.loads((results / "h200-2026-12-04" / "profile_1b.json").read_text("utf-8"))
    prof = next(r for r in one_b["results"] if r["model"] == "transformer-1b")["profile"]
    assert round(prof["achieved_tflops"], 1) == 542.6
    assert round(prof["mfu"], 4) == 0.5486


def test_h200_case_counts_the_time_models_flops() -> None:
    """Published = (6 N + 12 L d s) T / step: d_model 2048, 18 layers, N = 1,041,387,520,
    s = 2048, T = 32,768 tokens per step, 0.4159 s: (6.2483e9 + 9.0597e8) × 32,768 / 0.4159 /
    1e12 = 563.7 TFLOP/s per GPU (6ND plus attention, as ``timemodel.training_flops``)."""
    case = next(c for c in published_runs.cases() if c.id == "h200-eager-d2048-l18")
    n, layers, d, s, t = 1_041_387_520, 18, 2048, 2048, 32_768
    assert case.published == pytest.approx((6 * n + 12 * layers * d * s) * t / 0.4159 / 1e12)
    assert case.published == pytest.approx(563.7, abs=0.05)
    # One GPU measured, modelled as one 8-GPU node with the same per-GPU batch.
    assert (case.gpus, case.batch_tokens) == (8, 8 * 32_768)


def test_validation_only_sources_are_never_fitted() -> None:
    """The fit tool scores the H200 rows and the whole runs whose GPU count their source does
    not state, but leaves them out of every fit: 6 H200 rows, and the whole runs with an empty
    ``gpu_count`` in the CSV."""
    sys.path.insert(0, str(ROOT / "tools"))
    import fit_time_model

    cases = list(published_runs.cases())
    used = {c.id for c in fit_time_model.fitted(cases)}
    assert not any(c.source_key == "trainbill-h200-2026-12-04" for c in cases if c.id in used)
    with published_runs.CSV.open(encoding="utf-8", newline="") as fh:
        blank = {r["id"] for r in csv.DictReader(fh) if not r["gpu_count"].strip()}
    unstated = {c.id for c in cases if c.kind == "whole_run" and c.id in blank}
    assert "llama2-7b" in unstated  # the Llama 2 card states GPU-hours, not GPUs
    assert not unstated & used
    assert len(used) == len(cases) - 6 - len(unstated)


def test_fitted_fp8_gain_is_below_the_measured_fp8_gemm_gain(catalog: Catalog) -> None:
    """An FP8 recipe cannot speed matmuls up more than FP8 GEMMs do: the fitted η_fp8 × (FP8 peak
    / BF16 peak) of the H100 (1,979 / 989; the H200 has the same tensor cores) must stay below
    the median FP8/BF16 GEMM speed-up trainbill measured on one H200 at transformer shapes
    (benchmarks/results/h200-2026-12-04-sweep/fp8_gemm.json: 16 GEMMs, median 1.82×)."""
    import json
    import statistics

    raw = ROOT / "benchmarks" / "results" / "h200-2026-12-04-sweep" / "fp8_gemm.json"
    gemms = json.loads(raw.read_text(encoding="utf-8"))["gemms"]
    assert len(gemms) == 16
    measured = statistics.median(g["bf16_seconds"] / g["fp8_seconds"] for g in gemms)
    assert measured == pytest.approx(1.82, abs=0.005)
    h100 = catalog.accelerator("h100")
    assert h100.peak_fp8_tflops is not None
    fitted = float(catalog.value("time.fit.eta_fp8")) * h100.peak_fp8_tflops / h100.peak_bf16_tflops
    assert fitted < measured
