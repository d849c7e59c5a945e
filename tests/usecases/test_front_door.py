"""The front ends parse, make one call into ``trainbill.usecases`` and render (issue #40): none
imports the engine's modules, and ``cli/forecast.py`` imports no other command module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from trainbill.cli import COMMANDS

SRC = Path(__file__).resolve().parents[2] / "src" / "trainbill"
#: The engine's modules a front end must reach only through a use case.
ENGINE = ("usage", "timemodel", "costs", "calibration", "simulate", "optimize")
_ENGINE_IMPORT = re.compile(rf"(?:from|import)\s+trainbill\.(?:{'|'.join(ENGINE)})\b", re.MULTILINE)


def _front_end_files() -> list[Path]:
    return sorted([*(SRC / "cli").rglob("*.py"), *(SRC / "web").rglob("*.py")])


def test_the_grep_finds_an_engine_import_when_there_is_one() -> None:
    """The check itself can fail: the pattern matches each form an engine import takes."""
    for line in (
        "from trainbill.usage import usage_for",
        "    from trainbill.calibration import calibrate",
        "import trainbill.simulate",
        "from trainbill.optimize.search import optimize",
        "from trainbill.costs._pricing import service",
    ):
        assert _ENGINE_IMPORT.search(line), line
    for line in (
        "from trainbill.usecases.simulate import simulate_plan",
        "from trainbill import __version__",
    ):
        assert not _ENGINE_IMPORT.search(line), line


def test_no_front_end_imports_the_engine() -> None:
    files = _front_end_files()
    assert len(files) > 10  # the cli and web packages were found
    found = [
        f"{path.relative_to(SRC)}: {m.group(0)}"
        for path in files
        for m in _ENGINE_IMPORT.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_forecast_command_imports_no_other_command_module() -> None:
    tree = ast.parse((SRC / "cli" / "forecast.py").read_text(encoding="utf-8"))
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
    }
    others = set(COMMANDS.values()) - {"trainbill.cli.forecast"}
    assert "trainbill.usecases.price" in imported  # the walk sees the function-level imports
    assert imported & others == set()
