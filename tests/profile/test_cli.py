"""`trainbill profile`: the JSON contract, calibration output and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_argv
from trainbill.profile import calibrated_efficiency, read_calibration

JSON_KEYS = {
    "device",
    "flops_per_step",
    "step_seconds",
    "achieved_tflops",
    "tokens_per_step",
    "mfu",
    "peak_memory_bytes",
}


_run = run_argv


def test_core_imports_do_not_import_torch() -> None:
    """`import trainbill`, every CLI command module and the profile package leave torch
    unimported."""
    code = (
        "import sys, trainbill, trainbill.cli, trainbill.cli._commands, trainbill.profile; "
        "sys.exit(1 if 'torch' in sys.modules else 0)"
    )
    completed = subprocess.run([sys.executable, "-c", code], check=False)
    assert completed.returncode == 0, "torch was imported by a core import"


def test_builtin_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    """--builtin tiny-transformer --json prints the contracted keys with CPU-true values.

    tokens_per_step = batch 4 × seq 64 = 256; flops_per_step = 230_686_720 (hand count in
    test_step.py::test_tiny_transformer_flops_match_hand_count); no catalog peak on a CPU,
    so mfu is null.
    """
    pytest.importorskip("torch")
    argv = ["profile", "--builtin", "tiny-transformer", "--json", "--steps", "2", "--warmup", "1"]
    code, out, err = _run([*argv, "--device", "cpu"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert set(data) >= JSON_KEYS
    assert data["device"] == "cpu"
    assert data["tokens_per_step"] == 256
    assert data["flops_per_step"] == 230_686_720
    assert data["mfu"] is None
    assert data["step_seconds"] > 0
    assert data["achieved_tflops"] == pytest.approx(
        data["flops_per_step"] / data["step_seconds"] / 1e12
    )
    assert data["peak_memory_bytes"] > 0
    assert len(data["step_seconds_samples"]) == 2
    assert data["model_params"] == 168_576
    assert data["source"] == "builtin:tiny-transformer"


def test_script_with_calibration_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--script runs make_step(); -o writes a calibration that reads back with its info.

    The step is one Linear(16→16) on an 8-row batch with grad: 3 · 2·8·16·16 = 12288 FLOPs.
    """
    pytest.importorskip("torch")
    script = tmp_path / "step.py"
    script.write_text(
        "import torch\n"
        "def make_step():\n"
        "    layer = torch.nn.Linear(16, 16, bias=False)\n"
        "    x = torch.randn(8, 16, requires_grad=True)\n"
        "    def step():\n"
        "        layer(x).sum().backward()\n"
        "    return step, 8, {'model_params': 256, 'seq_len': 1}\n",
        encoding="utf-8",
    )
    out_path = tmp_path / "cal.toml"
    argv = ["profile", "--script", str(script), "--json", "--steps", "2", "--warmup", "0"]
    code, out, err = _run([*argv, "--device", "cpu", "-o", str(out_path)], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["flops_per_step"] == 12_288
    assert data["calibration"] == str(out_path)
    cal = read_calibration(out_path)
    assert (cal.tokens_per_step, cal.model_params, cal.seq_len) == (8, 256, 1)
    assert cal.precision == "fp32"
    assert cal.mfu is None
    assert cal.step_seconds == pytest.approx(data["step_seconds"])


def test_checkpointed_script_reports_recompute_beside_model_flops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A step that checkpoints Linear(16→16) → ReLU → Linear(16→16) on 8 rows: model FLOPs are
    the plain step's, 3 · 2 · (2·8·16·16) = 24,576 (forward, grad input, grad weight of both);
    backward reruns the first Linear to get the ReLU output the second's weight gradient
    needs, 2·8·16·16 = 4,096 FLOPs, shown beside them and left out of MFU."""
    pytest.importorskip("torch")
    script = tmp_path / "step.py"
    script.write_text(
        "import torch\n"
        "from torch.utils.checkpoint import checkpoint\n"
        "def make_step():\n"
        "    l1 = torch.nn.Linear(16, 16, bias=False)\n"
        "    l2 = torch.nn.Linear(16, 16, bias=False)\n"
        "    x = torch.randn(8, 16, requires_grad=True)\n"
        "    def block(t):\n"
        "        return l2(torch.relu(l1(t)))\n"
        "    def step():\n"
        "        checkpoint(block, x, use_reentrant=False).sum().backward()\n"
        "    return step, 8\n",
        encoding="utf-8",
    )
    argv = ["profile", "--script", str(script), "--steps", "1", "--warmup", "0", "--device", "cpu"]
    code, out, err = _run([*argv, "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert (data["flops_per_step"], data["recompute_flops_per_step"]) == (24_576, 4_096)
    code, out, err = _run([*argv, "--no-kernels"], capsys)
    assert code == 0, err
    assert "recomputed FLOPs / step" in out
    assert "activation recompute: 4,096 FLOPs" in out


def test_table_output_mentions_the_headline_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json a table shows step time, achieved TFLOP/s and why MFU is missing."""
    pytest.importorskip("torch")
    argv = ["profile", "--builtin", "tiny-transformer", "--steps", "1", "--warmup", "0"]
    code, out, err = _run([*argv, "--device", "cpu", "--no-kernels"], capsys)
    assert code == 0, err
    assert "step time" in out
    assert "TFLOP/s" in out
    assert "n/a (no catalog peak)" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--script", "does-not-exist.py"], "does-not-exist.py: step script not found"),
        (["--builtin", "tiny-transformer", "--steps", "0"], "steps: must be >= 1, got 0"),
        (["--builtin", "tiny-transformer", "--warmup", "-1"], "warmup: must be >= 0, got -1"),
        (
            ["--builtin", "tiny-transformer", "--steps", "1000000000"],
            "steps: must be <= 10,000",
        ),  # ran until killed
        (["--builtin", "tiny-transformer", "--warmup", "10001"], "warmup: must be <= 10,000"),
        (["--builtin", "huge"], "builtin: unknown model 'huge'; choose one of tiny-transformer"),
        ([], "give exactly one of --script FILE.py or --builtin NAME"),
    ],
)
def test_bad_input_is_one_line_error(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad arguments exit 1 with `trainbill: error: …` and no traceback."""
    code, _out, err = _run(["profile", *extra], capsys)
    assert code == 1
    assert err.startswith("trainbill: error: ")
    assert message in err
    assert "Traceback" not in err


def test_script_without_make_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A script that defines no make_step is refused, naming the file."""
    pytest.importorskip("torch")
    script = tmp_path / "empty.py"
    script.write_text("x = 1\n", encoding="utf-8")
    code, _, err = _run(["profile", "--script", str(script), "--device", "cpu"], capsys)
    assert code == 1
    assert f"trainbill: error: {script}: defines no make_step()" in err


def test_existing_calibration_is_kept_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o onto an existing file fails before profiling and leaves the file untouched."""
    out_path = tmp_path / "cal.toml"
    out_path.write_text("precious\n", encoding="utf-8")
    argv = ["profile", "--builtin", "tiny-transformer", "-o", str(out_path)]
    code, _, err = _run(argv, capsys)
    assert code == 1
    assert "already exists" in err
    assert out_path.read_text(encoding="utf-8") == "precious\n"


def test_forced_accelerator_gives_mfu_and_a_usable_calibration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--accelerator h200 makes MFU = achieved / 989 (NVIDIA H200 datasheet, dense BF16),
    and the calibration written with it is what a forecast for h200/bf16 will use."""
    pytest.importorskip("torch")
    out_path = tmp_path / "cal.toml"
    argv = ["profile", "--builtin", "tiny-transformer", "--json", "--steps", "1", "--warmup", "0"]
    extra = ["--device", "cpu", "--accelerator", "h200", "--precision", "bf16", "--no-kernels"]
    code, out, err = _run([*argv, *extra, "-o", str(out_path)], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["accelerator"] == "h200"
    assert data["peak_tflops"] == 989.0
    assert data["mfu"] == pytest.approx(data["achieved_tflops"] / 989.0)
    cal = read_calibration(out_path)
    assert cal.mfu == pytest.approx(data["mfu"])
    assert calibrated_efficiency(cal, "h200", "bf16", model_params=168_576) == cal.mfu
    assert calibrated_efficiency(cal, "h100", "bf16") is None


def test_missing_torch_is_an_install_hint_not_a_traceback() -> None:
    """Without PyTorch, `trainbill profile` says how to install the extra and exits 1."""
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from trainbill.cli import main\n"
        "main(['profile', '--builtin', 'tiny-transformer'])\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True
    )
    assert completed.returncode == 1
    assert completed.stderr.startswith("trainbill: error: profiling needs PyTorch")
    assert "pip install 'trainbill[profile]'" in completed.stderr
    assert "Traceback" not in completed.stderr
