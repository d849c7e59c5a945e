"""Static quality gates run as tests, so CI enforces them: ruff and mypy --strict."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.skipif(
    shutil.which("ruff") is None, reason="ruff not installed (install the test extra)"
)
def test_ruff_clean() -> None:
    """ruff reports nothing on the package, tests, tools and benchmarks."""
    res = subprocess.run(
        ["ruff", "check", "src", "tests", "tools", "benchmarks"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stdout[-4000:]


def test_mypy_strict() -> None:
    """mypy --strict (configured in pyproject) passes on src/trainbill."""
    pytest.importorskip("mypy")
    res = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert res.returncode == 0, res.stdout[-4000:]


def test_import_is_light() -> None:
    """``import trainbill`` and every CLI command module load no optional engine.

    ``trainbill.cli._commands`` imports all command modules (``trainbill.cli`` alone registers
    none since the fast path), so it is what a plain ``trainbill --help`` pays for.
    """
    code = (
        "import sys, trainbill, trainbill.cli, trainbill.cli._commands; heavy = [m for m in "
        "('duckdb', 'torch', 'fastapi', 'pyspark', 'ibis') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""
