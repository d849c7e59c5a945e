"""Calibration files: a measured step, saved as TOML, that a forecast can trust over a model.

``trainbill profile -o calibration.toml`` writes one; ``trainbill forecast --calibration``
reads it with :func:`read_calibration` and asks :func:`calibrated_efficiency` whether it
applies to the plan's accelerator and precision. If it does, the measured MFU replaces the
modelled per-GPU efficiency and the time model extrapolates to the plan's GPU count.

This module never imports torch: a forecast reads calibrations on machines without it.

File format (schema 1). Like the bills calibration (``trainbill calibrate``), every key
sits in a ``[calibration]`` table whose ``kind`` says which sort it is, so one
``--calibration`` flag can take either and dispatch on ``kind``::

    [calibration]
    kind = "profile"                      # required, constant
    schema_version = 1                    # required
    accelerator = "h200"                  # catalog id; absent when measured on a CPU
    precision = "bf16"                    # required: fp32, tf32, fp16, bf16 or fp8
    achieved_tflops_per_gpu = 412.5       # required, > 0
    mfu = 0.417                           # 0 < mfu <= 1; absent without a catalog peak
    peak_tflops = 989.0                   # the catalog peak mfu was computed against
    step_seconds = 0.61                   # required, > 0 (median)
    tokens_per_step = 32768               # required, per GPU, >= 1
    flops_per_step = 251658240000000      # per GPU
    world_size = 1
    comm_share = 0.12                     # share of step in collectives (distributed only)
    model_params = 1041387520
    seq_len = 2048
    peak_memory_bytes = 61203283968
    device_name = "NVIDIA H200"
    torch_version = "2.13.0"
    source = "builtin:tiny-transformer"   # what was profiled
    measured_at = 2026-01-01T12:00:00Z    # required, with a UTC offset
"""

from __future__ import annotations

import json
import math
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trainbill._io import DestinationError, atomic_write_text, destination_problem
from trainbill._record import record
from trainbill.errors import suggest
from trainbill.profile._errors import CalibrationError
from trainbill.profile.step import PRECISIONS, StepProfile

__all__ = [
    "SCHEMA_VERSION",
    "Calibration",
    "calibrated_efficiency",
    "calibration_from_profile",
    "calibration_to_toml",
    "read_calibration",
    "write_calibration",
]

SCHEMA_VERSION = 1
KIND = "profile"
TABLE = "[calibration]"
# mfu must equal achieved / peak to this relative tolerance when both are recorded, so a
# hand edit of one number without the others is caught rather than silently trusted.
_CONSISTENCY_RTOL = 0.01


@record
class Calibration:
    """One measured training step, as recorded in a calibration file.

    Attributes mirror the file keys (see the module docstring). ``mfu`` is what a forecast
    uses; the rest says what was measured, where and when, so a reader can judge whether
    it applies to their plan.
    """

    accelerator: str | None
    precision: str
    achieved_tflops_per_gpu: float
    mfu: float | None
    step_seconds: float
    tokens_per_step: int
    measured_at: datetime
    peak_tflops: float | None = None
    flops_per_step: int | None = None
    world_size: int = 1
    comm_share: float | None = None
    model_params: int | None = None
    seq_len: int | None = None
    peak_memory_bytes: int | None = None
    device_name: str | None = None
    torch_version: str | None = None
    source: str | None = None
    kind: str = KIND
    schema_version: int = SCHEMA_VERSION


def calibration_from_profile(
    profile: StepProfile,
    *,
    measured_at: datetime,
    source: str | None = None,
    model_params: int | None = None,
    seq_len: int | None = None,
) -> Calibration:
    """Turn a :class:`StepProfile` into a :class:`Calibration` (pure; time passed in).

    Args:
        profile: the measurement.
        measured_at: when it was taken (timezone-aware).
        source: what was profiled (``"builtin:tiny-transformer"``, a script path).
        model_params: model size, if known, so a forecast can check it matches the plan.
        seq_len: sequence length, if known.
    """
    return Calibration(
        accelerator=profile.accelerator,
        precision=profile.precision,
        achieved_tflops_per_gpu=profile.achieved_tflops,
        mfu=profile.mfu,
        peak_tflops=profile.peak_tflops,
        step_seconds=profile.step_seconds,
        tokens_per_step=profile.tokens_per_step,
        flops_per_step=profile.flops_per_step,
        world_size=profile.world_size,
        comm_share=profile.comm_share,
        model_params=model_params,
        seq_len=seq_len,
        peak_memory_bytes=profile.peak_memory_bytes,
        device_name=profile.device_name,
        torch_version=profile.torch_version,
        source=source,
        measured_at=measured_at,
    )


def calibrated_efficiency(
    cal: Calibration,
    accelerator_id: str,
    precision: str,
    *,
    model_params: int | None = None,
    params_tolerance: float = 0.2,
) -> float | None:
    """The measured MFU to use for a plan, or ``None`` when the calibration does not apply.

    MFU depends on the accelerator, the precision and the model's shape, so a calibration
    is only evidence for a plan that matches it: same accelerator id, same precision and,
    when both sides know the model size, a parameter count within ``params_tolerance``
    (relative) of the measured one. The caller keeps its modelled efficiency otherwise.

    Args:
        cal: a calibration read with :func:`read_calibration`.
        accelerator_id: the plan's catalog accelerator id.
        precision: the plan's compute precision.
        model_params: the plan's model size, if known.
        params_tolerance: largest relative size difference still accepted.

    Returns:
        ``cal.mfu`` when it applies, else ``None``.
    """
    if cal.mfu is None or cal.accelerator is None:
        return None
    if cal.accelerator.lower() != accelerator_id.lower():
        return None
    if cal.precision.lower() != precision.lower():
        return None
    if (
        model_params is not None
        and cal.model_params is not None
        and abs(model_params - cal.model_params) > params_tolerance * cal.model_params
    ):
        return None
    return cal.mfu


# --- writing ---------------------------------------------------------------------------

_HEADER = (
    "# trainbill calibration: one measured training step (see `trainbill profile`).\n"
    "# `trainbill forecast --calibration FILE` uses mfu for this accelerator and precision.\n"
)


def calibration_to_toml(cal: Calibration) -> str:
    """Serialise a calibration as TOML text; ``None`` fields are left out (TOML has no null)."""
    lines = [_HEADER + TABLE]
    for f in fields(Calibration):
        value = getattr(cal, f.name)
        if value is not None:
            lines.append(f"{f.name} = {_toml_value(f.name, value)}")
    return "\n".join(_order(lines)) + "\n"


def _order(lines: list[str]) -> list[str]:
    """Put ``kind`` and ``schema_version`` first so the file says what it is up front."""
    head = [line for line in lines if line.startswith(("kind ", "schema_version "))]
    return [lines[0], *head, *(line for line in lines[1:] if line not in head)]


def _toml_value(name: str, value: object) -> str:
    """One scalar as TOML. JSON string escapes are a subset of TOML basic-string escapes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CalibrationError(f"must be finite, got {value!r}", field=name)
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise CalibrationError("must be timezone-aware", field=name)
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    raise CalibrationError(f"cannot be written to TOML: {type(value).__name__}", field=name)


def write_calibration(cal: Calibration, path: Path, *, overwrite: bool = False) -> None:
    """Write ``cal`` to ``path`` atomically (temp file in the same folder + ``os.replace``).

    Args:
        cal: the calibration.
        path: destination file.
        overwrite: replace an existing file; without it an existing file is refused, since
            it may hold an earlier measurement the user still wants.

    Raises:
        CalibrationError: the file exists (and ``overwrite`` is false) or cannot be written.
    """
    text = calibration_to_toml(cal)
    # Validate what is about to be written exactly as a reader will, so a measurement that
    # could never be read back (say zero FLOPs, hence achieved 0) fails here, not later.
    label = f"{path} (not written)"
    from trainbill._io import parse_toml

    _check(_parse_document(parse_toml(text, source=label), source=label), source=label)
    problem = destination_problem(path, replace=overwrite)
    if problem is not None:
        raise CalibrationError(problem, source=str(path))
    try:
        atomic_write_text(path, text, replace=overwrite)
    except DestinationError as exc:
        raise CalibrationError(str(exc), source=str(path)) from None
    except OSError as exc:
        raise CalibrationError(f"cannot write: {exc.strerror}", source=str(path)) from None


# --- reading ---------------------------------------------------------------------------


def read_calibration(path: Path) -> Calibration:
    """Read and validate a calibration file.

    Raises:
        CalibrationError: the file is missing, is not TOML, or a field is missing, of the
            wrong type, out of range or inconsistent; the message names file and field.
    """
    from trainbill._io import parse_toml, read_input_text

    source = str(path)

    def error(message: str, src: str) -> CalibrationError:
        return CalibrationError(message, source=src)

    text = read_input_text(path, kind="calibration", what="calibration file", error=error)
    data = parse_toml(text, source=source, error=error)
    return calibration_from_document(data, source=source)


def calibration_from_document(data: dict[str, Any], *, source: str) -> Calibration:
    """A profile calibration from its parsed TOML (a file's, or a web request's text);
    ``source`` names it in errors.

    Raises:
        CalibrationError: a field is missing, of the wrong type, out of range or inconsistent.
    """
    return _check(_parse_document(data, source=source), source=source)


def _parse_document(data: dict[str, Any], *, source: str) -> Calibration:
    """Find the ``[calibration]`` table; anything else at top level is refused."""
    table = data.get("calibration")
    if not isinstance(table, dict):
        msg = "no [calibration] table; is this a file written by `trainbill profile -o`?"
        raise CalibrationError(msg, source=source)
    extra = [key for key in data if key != "calibration"]
    if extra:
        raise CalibrationError(
            "unknown top-level key (keys go under [calibration])", source=source, field=extra[0]
        )
    return _parse_mapping(table, source=source)


_REQUIRED = (
    "kind",
    "schema_version",
    "precision",
    "achieved_tflops_per_gpu",
    "step_seconds",
    "tokens_per_step",
    "measured_at",
)
_FIELD_NAMES = tuple(f.name for f in fields(Calibration))


def _parse_mapping(data: dict[str, Any], *, source: str) -> Calibration:
    """Check keys and types; build the dataclass. Ranges are checked in :func:`_check`."""
    unknown = [key for key in data if key not in _FIELD_NAMES]
    if unknown:
        key = unknown[0]
        hint = suggest(key, _FIELD_NAMES)
        raise CalibrationError(f"unknown key.{hint}", source=source, field=key)
    for key in _REQUIRED:
        if key not in data:
            raise CalibrationError("missing (required)", source=source, field=key)
    if data["kind"] != KIND:
        msg = f"must be {KIND!r} (a calibration from `trainbill profile`), got {data['kind']!r}"
        raise CalibrationError(msg, source=source, field="kind")
    version = _int(data, "schema_version", source)
    if version != SCHEMA_VERSION:
        msg = f"{version} is not supported; this trainbill reads schema {SCHEMA_VERSION}"
        raise CalibrationError(msg, source=source, field="schema_version")
    measured_at = data["measured_at"]
    if not isinstance(measured_at, datetime) or measured_at.tzinfo is None:
        msg = (
            "must be a TOML datetime with a UTC offset (e.g. 2026-01-01T12:00:00Z), got "
            f"{measured_at!r}"
        )
        raise CalibrationError(msg, source=source, field="measured_at")
    return Calibration(
        accelerator=_str(data, "accelerator", source, required=False),
        precision=_str(data, "precision", source) or "",
        achieved_tflops_per_gpu=_float(data, "achieved_tflops_per_gpu", source) or 0.0,
        mfu=_float(data, "mfu", source, required=False),
        peak_tflops=_float(data, "peak_tflops", source, required=False),
        step_seconds=_float(data, "step_seconds", source) or 0.0,
        tokens_per_step=_int(data, "tokens_per_step", source) or 0,
        flops_per_step=_int(data, "flops_per_step", source, required=False),
        world_size=_int(data, "world_size", source, required=False) or 1,
        comm_share=_float(data, "comm_share", source, required=False),
        model_params=_int(data, "model_params", source, required=False),
        seq_len=_int(data, "seq_len", source, required=False),
        peak_memory_bytes=_int(data, "peak_memory_bytes", source, required=False),
        device_name=_str(data, "device_name", source, required=False),
        torch_version=_str(data, "torch_version", source, required=False),
        source=_str(data, "source", source, required=False),
        measured_at=measured_at,
    )


def _check(cal: Calibration, *, source: str) -> Calibration:
    """Range and consistency checks, one field at a time."""
    if cal.precision not in PRECISIONS:
        msg = f"{cal.precision!r} is not one of {', '.join(PRECISIONS)}"
        raise CalibrationError(msg, source=source, field="precision")
    positive = {
        "achieved_tflops_per_gpu": cal.achieved_tflops_per_gpu,
        "step_seconds": cal.step_seconds,
        "peak_tflops": cal.peak_tflops,
    }
    for name, value in positive.items():
        if value is not None and not value > 0:
            raise CalibrationError(f"must be > 0, got {value!r}", source=source, field=name)
    at_least_one = {
        "tokens_per_step": cal.tokens_per_step,
        "world_size": cal.world_size,
        "model_params": cal.model_params,
        "seq_len": cal.seq_len,
        "flops_per_step": cal.flops_per_step,
    }
    for name, count in at_least_one.items():
        if count is not None and count < 1:
            raise CalibrationError(f"must be >= 1, got {count}", source=source, field=name)
    if cal.comm_share is not None and not 0 <= cal.comm_share <= 1:
        msg = f"must be in [0, 1], got {cal.comm_share!r}"
        raise CalibrationError(msg, source=source, field="comm_share")
    if cal.peak_memory_bytes is not None and cal.peak_memory_bytes < 0:
        msg = f"must be >= 0, got {cal.peak_memory_bytes}"
        raise CalibrationError(msg, source=source, field="peak_memory_bytes")
    if cal.mfu is not None:
        _check_mfu(cal, cal.mfu, source=source)
    return cal


def _check_mfu(cal: Calibration, mfu: float, *, source: str) -> None:
    """An MFU is a share, names its accelerator, and agrees with achieved / peak when both are
    given."""
    if not 0 < mfu <= 1:
        msg = f"must be in (0, 1], got {mfu!r}; above 1 means a wrong peak or FLOP count"
        raise CalibrationError(msg, source=source, field="mfu")
    if cal.accelerator is None:
        msg = "an mfu needs the accelerator it was measured on (catalog id)"
        raise CalibrationError(msg, source=source, field="accelerator")
    if cal.peak_tflops is not None:
        expected = cal.achieved_tflops_per_gpu / cal.peak_tflops
        if abs(mfu - expected) > _CONSISTENCY_RTOL * expected:
            msg = (
                f"{mfu!r} disagrees with achieved_tflops_per_gpu / peak_tflops = "
                f"{expected:.6g}; edit all three together or drop peak_tflops"
            )
            raise CalibrationError(msg, source=source, field="mfu")


def _str(data: dict[str, Any], key: str, source: str, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise CalibrationError(
            f"must be a non-empty string, got {value!r}", source=source, field=key
        )
    return value


def _float(data: dict[str, Any], key: str, source: str, *, required: bool = True) -> float | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalibrationError(f"must be a number, got {value!r}", source=source, field=key)
    if not math.isfinite(value):
        raise CalibrationError(f"must be finite, got {value!r}", source=source, field=key)
    return float(value)


def _int(data: dict[str, Any], key: str, source: str, *, required: bool = True) -> int | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise CalibrationError(f"must be an integer, got {value!r}", source=source, field=key)
    return value
