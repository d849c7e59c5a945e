"""CLI start-up: a command line imports only its command's module; help and near-misses see all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.bills.conftest import FOCUS_SAMPLE

from trainbill.cli import COMMANDS, app, main, register_commands

#: Every command module, by its last name.
_MODULES = {m.rsplit(".", 1)[1] for m in COMMANDS.values()}


def _loaded_after(args: list[str]) -> set[str]:
    """Which ``trainbill.cli.<module>`` command modules a fresh process imports for ``args``
    (the shared helpers, ``_common`` and ``_plan_flags``, are not command modules)."""
    code = (
        "import sys; from trainbill.cli import register_commands; "
        f"register_commands({args!r}); "
        "print(' '.join(m.rsplit('.', 1)[1] for m in sys.modules "
        "if m.startswith('trainbill.cli.') and not m.rsplit('.', 1)[1].startswith('_')))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(res.stdout.split())


@pytest.mark.parametrize("args", [["bill", "summary", "x.csv"], ["calibrate", "--help"], ["bill"]])
def test_bill_commands_import_only_the_bills_module(args: list[str]) -> None:
    """``bill``/``calibrate`` command lines import trainbill.cli.bills and no other command
    module."""
    assert _loaded_after(args) == {"bills"}


@pytest.mark.parametrize(
    ("args", "module"),
    [(["forecast", "plan.toml"], "forecast"), (["check", "--help"], "forecast"),
     (["diff", "a", "b"], "diff"), (["serve"], "report"), (["rule-of-thumb"], "whatif")],
)  # fmt: skip
def test_a_command_line_imports_only_its_command_module(args: list[str], module: str) -> None:
    """``trainbill forecast …`` imports trainbill.cli.forecast and no other command module."""
    assert _loaded_after(args) == {module}


def test_forecast_json_loads_no_rendering_or_other_command_library() -> None:
    """``forecast --json`` never imports Rich, the report or the web app (issue #21 start-up)."""
    code = (
        "import sys; from trainbill.cli import main\n"
        "try:\n"
        "    main(['forecast', '--params', '70e9', '--tokens', '1.4e12', '--gpu', 'h100',"
        " '--gpus', '512', '--json'])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print(' '.join(sorted({m.split('.')[0] if not m.startswith('trainbill.') else m"
        " for m in sys.modules})), file=sys.stderr)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(res.stderr.split())
    unwanted = {"rich", "trainbill.report", "trainbill.web", "trainbill.bills", "fastapi", "yaml"}
    assert loaded.isdisjoint(unwanted), loaded & unwanted


@pytest.mark.parametrize("args", [[], ["--help"], ["billing"], ["--install-completion"]])
def test_other_command_lines_register_everything(args: list[str]) -> None:
    """No arguments, an option, or a near-miss name import every command module."""
    assert _loaded_after(args) == _MODULES


def test_commands_table_matches_what_the_modules_register() -> None:
    """``COMMANDS`` names every registered command and group with the module that registers it.

    A command added to a module but not to the table would be missing from its own fast path
    (and from nothing else, so only this test notices).
    """
    register_commands([])
    registered: dict[str | None, str] = {}
    for command in app.registered_commands:
        assert command.callback is not None
        registered[command.name] = command.callback.__module__
    for group in app.registered_groups:
        first = group.typer_instance.registered_commands[0].callback
        assert first is not None
        registered[group.name] = first.__module__
    assert registered == COMMANDS


def test_top_level_help_lists_every_command() -> None:
    """``python -m trainbill --help`` still lists the bills and the other commands."""
    res = subprocess.run(
        [sys.executable, "-m", "trainbill", "--help"], capture_output=True, text=True, check=True
    )
    for command in COMMANDS:
        assert f" {command} " in res.stdout, command


def test_bill_help_through_python_dash_m() -> None:
    """``python -m trainbill bill --help`` exits 0 and shows the bill sub-commands."""
    res = subprocess.run(
        [sys.executable, "-m", "trainbill", "bill", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert "summary" in res.stdout
    assert "compare" in res.stdout


def test_fast_path_then_other_command_in_one_process(capsys: pytest.CaptureFixture[str]) -> None:
    """After a bill command in this process, ``--help`` registers the rest (tests run many)."""
    for args in (["bill", "--help"], ["--help"]):
        with pytest.raises(SystemExit) as exc:
            main(args)
        assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "forecast" in out
    assert "optimize" in out


def test_first_read_compiles_with_the_duckdb_compiler_alone(tmp_path: Path) -> None:
    """A first read (empty SQL cache) imports Ibis's DuckDB compiler and none of the other
    dialects' (``summary._duckdb_compiler``); afterwards the compilers package still imports
    whole: ``ibis.to_sql`` compiles for Trino, and the DuckDB compiler is the package's."""
    pytest.importorskip("ibis")
    code = (
        "import sys, ibis\n"
        "seen = []\n"
        "class Log:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        seen.append(name)\n"
        "sys.meta_path.insert(0, Log())\n"
        "from trainbill.bills import read_bill\n"
        f"s = read_bill({str(FOCUS_SAMPLE)!r})\n"
        "print(sorted(m.rsplit('.', 1)[1] for m in seen "
        "if m.startswith('ibis.backends.sql.compilers.')))\n"
        "t = ibis.table({'a': 'int64'}, name='t')\n"
        "print(ibis.to_sql(t.mutate(b=t.a + 1), dialect='trino').count('SELECT'))\n"
        "import ibis.backends.sql.compilers as c\n"
        "print(c.duckdb.DuckDBCompiler is c.DuckDBCompiler)\n"
    )
    env = {**os.environ, "TRAINBILL_CACHE_DIR": str(tmp_path / "cache")}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert res.stdout.split("\n")[:3] == ["['_compat', 'base', 'duckdb']", "1", "True"]


def test_forecast_options_are_annotated_with_objects_not_strings() -> None:
    """Typer evaluates string annotations (``from __future__ import annotations``) several
    times per run; ``trainbill.cli.forecast`` keeps them evaluated once, at import."""
    from trainbill.cli import forecast

    for command in (forecast.forecast_cmd, forecast.check_cmd):
        kinds = {type(a) for a in command.__annotations__.values()}
        assert str not in kinds, command.__name__
