"""benchmarks/gpu_profile.py stays runnable: on a CPU it profiles the tiny model and writes JSON."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_profile.py"


def test_cpu_run_writes_results_for_the_tiny_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without CUDA the 1B model is skipped; the tiny model's result has the contract keys.

    tiny-transformer: 6 · 168_576 params · 256 tokens = 258_932_736 for the 6·N·T estimate.
    """
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("on a GPU this script runs the 1B model; run it directly there")
    spec = importlib.util.spec_from_file_location("gpu_profile", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    # The script sets this allocator option if unset; keep it from leaking into other tests.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "profile.json"
    assert module.main(["--out", str(out), "--steps", "1", "--warmup", "0"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["errors"] == []
    assert [r["model"] for r in data["results"]] == ["tiny-transformer"]
    tiny = data["results"][0]
    assert tiny["flops_6nt_per_step"] == 258_932_736
    assert tiny["profile"]["flops_per_step"] == 230_686_720
    assert tiny["profile"]["mfu"] is None
    assert tiny["profile"]["step_seconds"] > 0


def test_sweep_smoke_runs_every_shape_on_a_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """benchmarks/gpu_sweep.py --smoke runs each shape scaled down (so the one prepared GPU run
    cannot fail on a typo): one result per shape, the recompute shapes counting each layer's
    forward again (reported beside the model FLOPs their plain twin counts), and an unknown shape
    refused."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("on a GPU run the sweep itself")
    sweep = SCRIPT.with_name("gpu_sweep.py")
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    spec = importlib.util.spec_from_file_location("gpu_sweep", sweep)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "gpu_sweep", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    out = tmp_path / "sweep.json"
    argv = ["--smoke", "--out", str(out), "--steps", "1", "--warmup", "0"]
    assert module.main(argv) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    by = {r["model"]: r for r in data["results"]}
    assert list(by) == [s.name for s in module.SHAPES]
    assert all("error" not in r for r in by.values())
    flops = {name: r["profile"]["flops_per_step"] for name, r in by.items()}
    assert flops["recompute-d4096-l8"] == flops["d4096-l8"]  # model FLOPs: MFU's
    assert by["recompute-d4096-l8"]["profile"]["recompute_flops_per_step"] > 0
    assert by["d4096-l8"]["profile"]["recompute_flops_per_step"] == 0
    assert by["recompute-batch-16"]["config"]["recompute"] is True
    assert module.main(["--smoke", "--out", str(out), "--only", "nope"]) == 2
