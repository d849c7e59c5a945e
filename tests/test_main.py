"""The ``trainbill`` entry point: a Ctrl-C at any moment is one line, never a traceback."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from conftest import REPO, SEED
from trainbill.__main__ import GC_THRESHOLD, _prepare

#: Starts like the ``trainbill`` console script (import the entry module, call ``run``) but
#: says "ready" just before ``run``, so the SIGINT lands in trainbill's start-up (the CLI's
#: imports take a few tenths of a second). The interpreter's own start-up and the tiny entry
#: module before it (a few tens of milliseconds) run before any code that could catch it.
_LAUNCH = (
    "import sys; from trainbill.__main__ import run; sys.argv = ['trainbill', 'forecast', "
    "sys.argv[1]]; sys.stderr.write('ready\\n'); sys.stderr.flush(); run()"
)


# At least 20 ms after "ready": the launcher's own last bytecodes before ``run()`` are not ours.
@pytest.mark.parametrize("delay_s", [0.02, 0.05, 0.15, 0.3])
def test_sigint_during_start_up_is_one_line(delay_s: float) -> None:
    """SIGINT while the CLI's imports load (or later) ends in 'interrupted', no traceback."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCH, str(SEED)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    assert proc.stderr.readline() == "ready\n"
    time.sleep(delay_s)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    assert "KeyboardInterrupt" not in err, err
    if proc.returncode == -signal.SIGINT:
        # Landed while the interpreter was shutting down, after the command had finished: Python
        # restores the default SIGINT action then, and the process ends by the signal with its
        # whole output written (a fast start-up puts the longest delay in that window).
        assert "Real bill" in out, out
        return
    # Interrupted (130 from run(); click's "Aborted!" and 1 once a command is running) or, on a
    # fast machine at the longest delay, already finished (0).
    assert proc.returncode in {0, 1, 130}, (proc.returncode, err)
    if proc.returncode == 130:
        assert err.strip() == "trainbill: interrupted"


@pytest.fixture
def _prepared(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Neither variable set, and what ``_prepare`` changes (environment, GC thresholds) back
    as it was after the test."""
    for name in ("OPENBLAS_NUM_THREADS", "PYDANTIC_DISABLE_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


@pytest.mark.usefixtures("_prepared")
def test_prepare_defaults_openblas_to_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset: 1 thread; a value the user set is kept; ``profile`` keeps OpenBLAS's own count."""
    _prepare(["forecast", "--json"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    _prepare(["forecast"])
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    _prepare(["profile", "--cpu"])
    assert "OPENBLAS_NUM_THREADS" not in os.environ


@pytest.mark.usefixtures("_prepared")
def test_prepare_disables_pydantic_plugins_but_for_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset: no plugins; ``serve`` keeps them; an empty value (plugins on) is kept."""
    _prepare(["serve"])
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ
    _prepare(["forecast", "--json"])
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")
    _prepare(["forecast"])
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == ""


@pytest.mark.usefixtures("_prepared")
def test_prepare_raises_only_the_young_gc_threshold() -> None:
    """Generation 0 waits for ``GC_THRESHOLD`` new objects; the older generations' ratios stay."""
    gc.set_threshold(700, 11, 12)
    _prepare([])
    assert gc.get_threshold() == (GC_THRESHOLD, 11, 12)
    assert gc.isenabled()


def test_process_runs_with_its_start_up_settings() -> None:
    """Through ``python -m trainbill``, the settings are in place before NumPy is imported (one
    BLAS thread, the raised GC threshold), and a forecast never imports pydantic at all (the
    plan schema is plain Python; only the web API's models use pydantic)."""
    code = (
        "import gc, os, sys, runpy\n"
        "sys.argv = ['trainbill', 'forecast', '--params', '70e9', '--tokens', '1.4e12',"
        " '--gpu', 'h100', '--gpus', '512', '--json']\n"
        "try:\n"
        "    runpy.run_module('trainbill', run_name='__main__')\n"
        "finally:\n"
        "    print(os.environ.get('OPENBLAS_NUM_THREADS'), 'pydantic' in sys.modules,"
        " gc.get_threshold()[0], file=sys.stderr)\n"
    )
    unset = {"OPENBLAS_NUM_THREADS", "PYDANTIC_DISABLE_PLUGINS"}
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["PYTHONPATH"] = str(REPO / "src")
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert res.returncode == 0, res.stderr
    assert res.stderr.split() == ["1", "False", str(GC_THRESHOLD)]
    assert '"total_usd"' in res.stdout


def test_interrupt_while_the_cli_imports_is_noted_then_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl-C during the CLI's imports is held until they finish (raised inside the import
    system it came out as "ModuleNotFoundError: No module named 'typer'"), then it is the
    usual one line and exit 130, and the SIGINT handler is back as it was."""
    import trainbill.__main__ as entry

    before = signal.getsignal(signal.SIGINT)
    went_on: list[bool] = []

    def interrupted_start_up(_argv: list[str]) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # bytecodes at which a raising handler would have fired
            pass
        went_on.append(True)

    monkeypatch.setattr(entry, "_prepare", interrupted_start_up)
    monkeypatch.setattr(sys, "argv", ["trainbill", "--help"])
    with pytest.raises(SystemExit) as exc:
        entry.run()
    assert went_on == [True]  # the start-up (imports) ran to the end
    assert exc.value.code == 130
    assert capsys.readouterr().err == "trainbill: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is before


def test_a_ctrl_c_folded_into_another_error_is_still_an_interruption() -> None:
    """SIGINT while pydantic-core builds a validator (a module of pydantic models imported by a
    running command) came back as a SchemaError carrying "KeyboardInterrupt" in its text, and
    printed a traceback (seen in CI at 0.15 s); a chained KeyboardInterrupt counts too; other
    errors not."""
    from pydantic_core import SchemaError

    from trainbill.__main__ import _interrupted

    assert _interrupted(SchemaError('Error building "literal" validator:\n  KeyboardInterrupt: '))
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = KeyboardInterrupt()
    assert _interrupted(wrapped)
    assert not _interrupted(ValueError("a real error"))
    assert not _interrupted(SchemaError("Error building a validator: a real schema problem"))


def test_a_finished_command_leaves_its_objects_frozen_for_a_quick_exit() -> None:
    """After the command, its garbage is collected and the survivors frozen (``_settle``), so
    the interpreter's shutdown collections skip them; the output is whole."""
    code = (
        "import gc, sys, runpy, atexit\n"
        "atexit.register(lambda: print(gc.get_freeze_count() > 0, file=sys.stderr))\n"
        "sys.argv = ['trainbill', 'forecast', '--params', '70e9', '--tokens', '1.4e12',"
        " '--gpu', 'h100', '--gpus', '512', '--json']\n"
        "runpy.run_module('trainbill', run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert res.returncode == 0, res.stderr
    assert res.stderr.split() == ["True"]
    assert res.stdout.rstrip().endswith("}")
