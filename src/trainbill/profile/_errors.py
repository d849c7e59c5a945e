"""Errors raised by the profiler and the calibration file reader.

Both subclass :class:`trainbill.errors.TrainbillError`, so the CLI reports them as one line
and exit status 1 rather than a traceback::

    TrainbillError
    ├── ProfileError                       bad profile request or step script; torch missing
    └── SpecError
        └── CalibrationError               calibration file invalid: names file and field
"""

from __future__ import annotations

from trainbill.errors import SpecError, TrainbillError

__all__ = ["CalibrationError", "ProfileError"]


class ProfileError(TrainbillError):
    """A profile cannot be taken: bad arguments, a broken step script, or no PyTorch."""


class CalibrationError(SpecError):
    """A calibration file is missing, unreadable or fails validation.

    A calibration is user input like a plan, so it reports ``source: field: problem`` the
    same way (it is a ``SpecError``, hence also a ``ValueError``).
    """
