"""Errors raised by the profiler and the calibration file reader.

Both subclass :class:`trainbill.errors.TrainbillError`, so the CLI reports them as one line
and exit status 1 rather than a traceback::

    TrainbillError
    ├── ProfileError                       bad profile request or step script; torch missing
    └── CalibrationError (also ValueError) calibration file invalid: names file and field
"""

from __future__ import annotations

from trainbill.errors import TrainbillError

__all__ = ["CalibrationError", "ProfileError"]


class ProfileError(TrainbillError):
    """A profile cannot be taken: bad arguments, a broken step script, or no PyTorch."""


class CalibrationError(TrainbillError, ValueError):
    """A calibration file is missing, unreadable or fails validation."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None):
        self.source = source
        self.field = field
        prefix = ""
        if source:
            prefix += f"{source}: "
        if field:
            prefix += f"{field}: "
        super().__init__(prefix + message)
