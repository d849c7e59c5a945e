"""The CLI runner under its older import name; it lives in ``tests/conftest.py``.

Kept only for the test files that still write ``from cli_runner import ...`` (``bills/`` and
``test_simulate.py`` at this writing); every other test imports ``run_cli`` / ``run_argv`` from
``conftest``. Delete this file once those move.
"""

from __future__ import annotations

from conftest import run_argv, run_cli

__all__ = ["run_argv", "run_cli"]
