"""Calibrate forecasts from a real training step: measured step time, FLOPs and MFU.

``profile_step`` measures a step function the user supplies (or a builtin transformer);
``write_calibration``/``read_calibration`` save and validate the result as TOML; and
``calibrated_efficiency`` tells a forecast whether a calibration applies to its plan.

Importing this package does not import PyTorch (an optional extra, ``trainbill[profile]``):
only :func:`profile_step` and :func:`make_transformer_step` need it, and they import it
when called. Reading a calibration works without torch.
"""

from __future__ import annotations

from trainbill.profile._errors import CalibrationError, ProfileError
from trainbill.profile.calibration import (
    SCHEMA_VERSION,
    Calibration,
    calibrated_efficiency,
    calibration_from_profile,
    calibration_to_toml,
    read_calibration,
    write_calibration,
)
from trainbill.profile.devices import accelerator_id_for_device_name
from trainbill.profile.models import (
    BUILTINS,
    TransformerConfig,
    builtin_config,
    make_transformer_step,
)
from trainbill.profile.script import StepScript, load_step_script
from trainbill.profile.step import (
    PRECISIONS,
    AcceleratorCatalog,
    AcceleratorPeaks,
    KernelTime,
    StepProfile,
    check_counts,
    peak_tflops_for,
    profile_step,
    resolve_device,
)

__all__ = [
    "BUILTINS",
    "PRECISIONS",
    "SCHEMA_VERSION",
    "AcceleratorCatalog",
    "AcceleratorPeaks",
    "Calibration",
    "CalibrationError",
    "KernelTime",
    "ProfileError",
    "StepProfile",
    "StepScript",
    "TransformerConfig",
    "accelerator_id_for_device_name",
    "builtin_config",
    "calibrated_efficiency",
    "calibration_from_profile",
    "calibration_to_toml",
    "check_counts",
    "load_step_script",
    "make_transformer_step",
    "peak_tflops_for",
    "profile_step",
    "read_calibration",
    "resolve_device",
    "write_calibration",
]
