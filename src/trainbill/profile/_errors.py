"""Errors raised by the profiler and the calibration file reader (defined in ``trainbill.errors``).

Both are ``TrainbillError``, so the CLI reports them as one line and exit status 1 rather than
a traceback::

    TrainbillError
    ├── ProfileError                       bad profile request or step script; torch missing
    └── SpecError
        └── CalibrationError               calibration file invalid: names file and field
"""

from __future__ import annotations

from trainbill.errors import CalibrationError, ProfileError

__all__ = ["CalibrationError", "ProfileError"]
