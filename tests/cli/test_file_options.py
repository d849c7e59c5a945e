"""Every file-taking option of every command, given a FIFO, ``/dev/zero`` or a symlink loop
(directly, or as a catalog file inside a folder): one error line, no traceback, no hang past
10 s, no RSS past 1 GiB (issue #44).

The options are found from the Typer app, so a new command or option is covered without an
edit here; a new command with no template below fails ``test_every_command_has_a_template``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from tests.conftest import EXAMPLES, SEED

from trainbill.cli import app, register_commands

HERE = Path(__file__).parent
REPO = HERE.parent.parent
BILL = REPO / "tests" / "data" / "bills" / "focus_sample.csv"
CLAIMS = EXAMPLES / "article-claims.toml"
USAGE = EXAMPLES / "usage-monthly.csv"
#: 1 GiB, the issue's bound on a refusal's memory.
MAX_RSS_KIB = 1024 * 1024
#: Per case (``_hostile.CASE_TIMEOUT_S``) times the six cases, plus start-up.
PROCESS_TIMEOUT_S = 6 * 10 + 30

#: A working command line per command; ``{name}`` is a positional parameter's value.
TEMPLATES: dict[str, list[str]] = {
    "calibrate": ["calibrate", "{files}"],
    "diff": ["diff", "{base}", "{new}"],
    "forecast": ["forecast", "{plan_file}"],
    "check": ["check", "--claims", str(CLAIMS)],
    "optimize": ["optimize", "{plan_file}", "--instances", "p5.48xlarge", "--nodes", "32",
                 "--clouds", "aws"],
    "commit": ["commit", "{usage_csv}"],
    "profile": ["profile", "--script", "{SCRIPT}", "--steps", "1", "--warmup", "0"],
    "report": ["report", "{plan_file}", "-o", "{OUT}", "--trials", "0"],
    "serve": ["serve", "--port", "9"],
    "simulate": ["simulate", "{plan_file}", "--trials", "50"],
    "compare-orchestrators": ["compare-orchestrators", "{plan_file}"],
    "storage-check": ["storage-check", "{plan_file}"],
    "sparse-attention": ["sparse-attention", "{plan_file}"],
    "rule-of-thumb": ["rule-of-thumb", "{plan_file}"],
    "bill summary": ["bill", "summary", "{files}"],
    "bill compare": ["bill", "compare", "{plan}", "{files}"],
    "prices list": ["prices", "list"],
    "prices show": ["prices", "show", "p5.48xlarge"],
    "prices update": ["prices", "update", "--provider", "aws"],
    # The run registry (issue #39): a throwaway SQLite file in the case's own folder (cwd).
    "runs record": ["runs", "record", "{plan_file}", "--db", "sqlite:///reg.db"],
    "runs close": ["runs", "close", "run-1", "{files}", "--db", "sqlite:///reg.db"],
    "runs list": ["runs", "list", "--db", "sqlite:///reg.db"],
    "runs show": ["runs", "show", "run-1", "--db", "sqlite:///reg.db"],
    "runs delete": ["runs", "delete", "run-1", "--yes", "--db", "sqlite:///reg.db"],
    "runs calibrate": ["runs", "calibrate", "--db", "sqlite:///reg.db"],
    "runs export": ["runs", "export", "--format", "focus", "-o", "{OUT}", "--db", "sqlite:///reg.db"],
    "db upgrade": ["db", "upgrade", "--db", "sqlite:///reg.db"],
    "db path": ["db", "path"],
}  # fmt: skip
#: A good value for each positional parameter when another one is the hostile one.
GOOD = {"files": str(BILL), "base": str(SEED), "new": str(SEED), "plan_file": str(SEED),
        "usage_csv": str(USAGE), "plan": str(SEED)}  # fmt: skip


def _commands() -> list[tuple[str, Any]]:
    register_commands([])
    root = typer.main.get_command(app)
    out: list[tuple[str, Any]] = []

    def walk(cmd: Any, prefix: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*prefix, name])
        else:
            out.append((" ".join(prefix), cmd))

    walk(root, [])
    return out


def _takes_a_file(param: Any) -> bool:
    """A path-typed parameter, or one named for files (bills take text: s3:// URIs too)."""
    is_path = any(c.__name__.endswith("Path") for c in type(param.type).__mro__)
    return is_path or "file" in (param.name or "")


def _file_options() -> list[tuple[str, str, bool, str]]:
    """(command, parameter name, positional?, flag) for every file-taking parameter."""
    found = []
    for name, cmd in _commands():
        for param in cmd.params:
            if _takes_a_file(param):
                positional = type(param).__name__.endswith("Argument")
                found.append((name, param.name, positional, param.opts[0]))
    return found


FILE_OPTIONS = _file_options()


def test_every_command_has_a_template() -> None:
    assert {name for name, _ in _commands()} <= set(TEMPLATES)
    assert len(FILE_OPTIONS) >= 40  # the walk found the app's options (46 when written)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The six hostile paths: a FIFO, /dev/zero, a symlink loop, and folders whose
    ``prices.csv`` is each of them."""
    root = tmp_path_factory.mktemp("hostile")

    def three(where: Path) -> list[Path]:
        fifo, zero, loop = where / "fifo", where / "zero", where / "loop"
        os.mkfifo(fifo)
        zero.symlink_to("/dev/zero")
        (where / "loop2").symlink_to(loop)
        loop.symlink_to(where / "loop2")
        return [fifo, zero, loop]

    direct = three(root)
    targets = root / "targets"
    targets.mkdir()
    folders = []
    for i, target in enumerate(three(targets)):
        folder = root / f"overlay{i}"
        folder.mkdir()
        (folder / "prices.csv").symlink_to(target)
        folders.append(folder)
    return [str(direct[0]), "/dev/zero", str(direct[2]), *map(str, folders)]


def _argv(
    command: str, param: str, positional: bool, flag: str, value: str, tmp: Path
) -> list[str]:
    script = tmp / "step.py"
    script.write_text("def make_step():\n    return (lambda: None), 1\n", encoding="utf-8")
    fill = {**GOOD, "SCRIPT": str(script), "OUT": str(tmp / "out.html")}
    argv: list[str] = []
    template = TEMPLATES[command]
    replaced = False
    skip = False
    for token in template:
        if skip:
            skip = False
            continue
        if positional and token == "{" + param + "}":
            argv.append(value)
            replaced = True
        elif not positional and token == flag:
            argv += [flag, value]
            replaced = skip = True
        elif token.startswith("{"):
            argv.append(fill[token[1:-1]])
        else:
            argv.append(token)
    if not replaced:
        argv += [value] if positional else [flag, value]
    return argv


@pytest.mark.parametrize(
    ("command", "param", "positional", "flag"),
    FILE_OPTIONS,
    ids=[f"{c}:{f}" for c, _, _, f in FILE_OPTIONS],
)
def test_hostile_paths_are_one_line_refusals(
    command: str, param: str, positional: bool, flag: str, hostile: list[str], tmp_path: Path
) -> None:
    cases = [_argv(command, param, positional, flag, h, tmp_path) for h in hostile]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + str(REPO),
           "TRAINBILL_CACHE_DIR": str(tmp_path / "cache"), "HTTPS_PROXY": "http://127.0.0.1:9",
           "HTTP_PROXY": "http://127.0.0.1:9"}  # fmt: skip
    proc = subprocess.run(
        [sys.executable, str(HERE / "_hostile.py"), json.dumps(cases)],
        capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S, env=env, cwd=tmp_path,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    for case in json.loads(proc.stdout.splitlines()[-1]):
        where = " ".join(case["argv"])
        err = case["stderr"]
        assert "Traceback" not in err, (where, err)
        assert case["code"] in (1, 2), (where, case["code"], err)
        assert case["seconds"] < 10, (where, case["seconds"])
        assert case["max_rss_kib"] < MAX_RSS_KIB, (where, case["max_rss_kib"])
        if case["code"] == 1:
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert len(lines) == 1, (where, err)
            assert lines[0].startswith("trainbill: error:"), (where, err)
