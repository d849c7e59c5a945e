"""Run the trainbill CLI in-process for tests (one helper instead of one per test file).

Importable from every test folder: pytest puts ``tests/`` on ``sys.path`` for the root conftest.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from trainbill.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``trainbill ARGS``; Typer exits via ``SystemExit``."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def run_argv(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``run_cli`` with the argument list first, as older tests call it."""
    return run_cli(capsys, *argv)
