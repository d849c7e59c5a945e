"""Calibration files: written atomically, read back identically, validated field by field."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from trainbill.profile import (
    Calibration,
    CalibrationError,
    KernelTime,
    StepProfile,
    calibrated_efficiency,
    calibration_from_profile,
    calibration_to_toml,
    read_calibration,
    write_calibration,
)

MEASURED_AT = datetime(2026, 3, 1, 12, 30, 15, tzinfo=UTC)


def _calibration(**changes: object) -> Calibration:
    """A calibration as an H200 bf16 profile would give: 400 of 989 TFLOP/s."""
    cal = Calibration(
        accelerator="h200",
        precision="bf16",
        achieved_tflops_per_gpu=400.0,
        mfu=400.0 / 989.0,
        peak_tflops=989.0,
        step_seconds=0.625,
        tokens_per_step=32768,
        flops_per_step=250_000_000_000_000,
        world_size=8,
        comm_share=0.125,
        model_params=1_041_387_520,
        seq_len=2048,
        peak_memory_bytes=61_203_283_968,
        device_name='NVIDIA H200 "SXM"',
        torch_version="2.13.0",
        source="builtin:tiny-transformer",
        measured_at=MEASURED_AT,
    )
    return dataclasses.replace(cal, **changes)


def _write_text(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cal.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_round_trip_preserves_every_field(tmp_path: Path) -> None:
    """write → read gives back an equal Calibration, quotes in strings included."""
    cal = _calibration()
    path = tmp_path / "cal.toml"
    write_calibration(cal, path)
    assert read_calibration(path) == cal


def test_round_trip_of_a_cpu_calibration_without_mfu(tmp_path: Path) -> None:
    """A CPU measurement (no accelerator, no peak, no mfu) also round-trips."""
    cal = _calibration(accelerator=None, mfu=None, peak_tflops=None, model_params=None)
    path = tmp_path / "cal.toml"
    write_calibration(cal, path)
    assert read_calibration(path) == cal
    keys = [line.split(" = ")[0] for line in path.read_text(encoding="utf-8").splitlines()]
    assert "mfu" not in keys


def test_from_profile_copies_the_measurement() -> None:
    """A StepProfile becomes a calibration with per-GPU TFLOP/s, mfu and the given extras."""
    profile = StepProfile(
        device="cuda:0",
        device_name="NVIDIA H200",
        accelerator="h200",
        precision="bf16",
        flops_per_step=10**15,
        step_seconds=2.5,
        step_seconds_samples=(2.5,),
        achieved_tflops=400.0,
        tokens_per_step=4096,
        peak_tflops=989.0,
        mfu=400.0 / 989.0,
        peak_memory_bytes=1,
        peak_memory_source="cuda_max_memory_allocated",
        top_kernels=(KernelTime(name="k", calls_per_step=1, seconds_per_step=1, share=0.4),),
        torch_version="2.13.0",
    )
    cal = calibration_from_profile(
        profile, measured_at=MEASURED_AT, source="s.py", model_params=7, seq_len=8
    )
    assert (cal.accelerator, cal.precision, cal.mfu) == ("h200", "bf16", 400.0 / 989.0)
    assert (cal.achieved_tflops_per_gpu, cal.step_seconds, cal.tokens_per_step) == (
        400.0,
        2.5,
        4096,
    )
    assert (cal.model_params, cal.seq_len, cal.source) == (7, 8, "s.py")
    assert cal.measured_at == MEASURED_AT


def test_existing_file_is_not_overwritten_without_permission(tmp_path: Path) -> None:
    """An existing file is refused and left as it was; overwrite=True replaces it."""
    path = _write_text(tmp_path, "keep me\n")
    with pytest.raises(CalibrationError, match="already exists"):
        write_calibration(_calibration(), path)
    assert path.read_text(encoding="utf-8") == "keep me\n"
    write_calibration(_calibration(), path, overwrite=True)
    assert read_calibration(path) == _calibration()


def test_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    """The temp file used for the atomic write is renamed into place, not left behind."""
    write_calibration(_calibration(), tmp_path / "cal.toml")
    assert [p.name for p in tmp_path.iterdir()] == ["cal.toml"]


def test_unwritable_destination_is_a_clear_error(tmp_path: Path) -> None:
    """A destination under a plain file (not a folder) is reported with the path, not a
    traceback."""
    (tmp_path / "missing").write_text("a file, not a folder")
    path = tmp_path / "missing" / "cal.toml"
    with pytest.raises(
        CalibrationError, match=r"missing/cal\.toml: .*missing is a file, not a folder"
    ):
        write_calibration(_calibration(), path)


def test_toml_starts_with_kind_and_schema() -> None:
    """The first keys say what the file is, so a reader of the raw file knows at once."""
    keys = [line.split(" = ")[0] for line in calibration_to_toml(_calibration()).splitlines()]
    assert keys[2:5] == ["[calibration]", "kind", "schema_version"]


VALID = """\
[calibration]
kind = "profile"
schema_version = 1
accelerator = "h200"
precision = "bf16"
achieved_tflops_per_gpu = 400.0
mfu = 0.4044489383215369
peak_tflops = 989.0
step_seconds = 0.625
tokens_per_step = 32768
measured_at = 2026-03-01T12:30:15Z
"""


def test_hand_written_minimal_file_is_accepted(tmp_path: Path) -> None:
    """Only the required keys plus mfu; defaults fill the rest (world_size 1).

    mfu 0.40445 = 400 / 989, consistent with achieved and peak.
    """
    cal = read_calibration(_write_text(tmp_path, VALID))
    assert cal.mfu == pytest.approx(0.40445, rel=1e-4)
    assert cal.world_size == 1
    assert cal.model_params is None


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("mfu = 0.4044489383215369", "mfu = 1.2"), r"mfu: must be in \(0, 1\], got 1.2"),
        (("mfu = 0.4044489383215369", "mfu = 0.5"), "mfu: 0.5 disagrees with"),
        (("step_seconds = 0.625", "step_seconds = 0.0"), "step_seconds: must be > 0, got 0.0"),
        (("tokens_per_step = 32768", "tokens_per_step = 0"), "tokens_per_step: must be >= 1"),
        (("tokens_per_step = 32768", 'tokens_per_step = "a"'), "tokens_per_step: must be an int"),
        (('precision = "bf16"', 'precision = "int4"'), "precision: 'int4' is not one of"),
        (('kind = "profile"', 'kind = "bills"'), "kind: must be 'profile' .* got 'bills'"),
        (("schema_version = 1", "schema_version = 9"), "schema_version: 9 is not supported"),
        (
            ("2026-03-01T12:30:15Z", "2026-03-01T12:30:15"),
            "measured_at: must be a TOML datetime with a UTC offset",
        ),
        (('accelerator = "h200"\n', ""), "accelerator: an mfu needs the accelerator"),
        (("step_seconds = 0.625\n", ""), r"step_seconds: missing \(required\)"),
        (("mfu =", "mfuu ="), "mfuu: unknown key. Did you mean 'mfu'"),
        (("[calibration]\n", ""), r"no \[calibration\] table"),
        (("[calibration]\n", "mfu = 0.4\n[calibration]\n"), "mfu: unknown top-level key"),
        (("step_seconds = 0.625", "comm_share = 1.5\nstep_seconds = 0.625"), "comm_share: must be"),
    ],
)
def test_invalid_files_name_file_and_field(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    """Each bad value is reported as `<file>: <field>: <what is wrong>`."""
    old, new = edit
    assert old in VALID
    path = _write_text(tmp_path, VALID.replace(old, new))
    with pytest.raises(CalibrationError, match=f"^{path}: {message}"):
        read_calibration(path)


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    """A missing file and a non-TOML file are clear errors naming the path."""
    with pytest.raises(CalibrationError, match=r"nope\.toml: calibration file not found"):
        read_calibration(tmp_path / "nope.toml")
    path = _write_text(tmp_path, "kind = \n")
    with pytest.raises(CalibrationError, match=r"cal\.toml: invalid TOML"):
        read_calibration(path)


def test_calibrated_efficiency_applies_only_to_a_matching_plan() -> None:
    """The measured mfu is used only for the same accelerator, precision and model size."""
    cal = _calibration()
    mfu = 400.0 / 989.0
    assert calibrated_efficiency(cal, "h200", "bf16") == mfu
    assert calibrated_efficiency(cal, "H200", "BF16") == mfu
    assert calibrated_efficiency(cal, "h100", "bf16") is None
    assert calibrated_efficiency(cal, "h200", "fp8") is None
    # 1.1e9 is within 20 % of 1.041e9; 7e9 is not.
    assert calibrated_efficiency(cal, "h200", "bf16", model_params=1_100_000_000) == mfu
    assert calibrated_efficiency(cal, "h200", "bf16", model_params=7_000_000_000) is None


def test_calibrated_efficiency_is_none_without_mfu() -> None:
    """A CPU calibration (no mfu) never replaces the modelled efficiency."""
    cal = _calibration(accelerator=None, mfu=None, peak_tflops=None)
    assert calibrated_efficiency(cal, "h200", "bf16") is None


def test_a_calibration_that_could_not_be_read_back_is_not_written(tmp_path: Path) -> None:
    """A zero-FLOP measurement (achieved 0 TFLOP/s) is refused before any file appears."""
    path = tmp_path / "cal.toml"
    bad = _calibration(achieved_tflops_per_gpu=0.0, mfu=None, peak_tflops=None)
    with pytest.raises(CalibrationError, match=r"\(not written\): achieved_tflops_per_gpu"):
        write_calibration(bad, path)
    assert not path.exists()


def test_calibration_file_with_bom_reaches_field_validation(tmp_path: Path) -> None:
    """A calibration file with a BOM is parsed, so the error names the missing field."""
    from trainbill.profile import read_calibration
    from trainbill.profile._errors import CalibrationError

    f = tmp_path / "cal.toml"
    f.write_bytes(b'\xef\xbb\xbf[calibration]\nkind = "profile"\n')
    # Without BOM handling this stopped at "not valid TOML"; now the missing field is named.
    with pytest.raises(CalibrationError, match=r"schema_version: missing"):
        read_calibration(f)
