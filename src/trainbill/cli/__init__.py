"""Command-line shell: parse arguments, call the library, render results.

Each command group lives in its own module under ``trainbill.cli`` and registers itself on
``app`` when imported, so adding a command never means editing another command's module, only
its line in ``COMMANDS``. ``main`` imports the one module that defines the command being run
(``register_commands``): ``trainbill forecast …`` never pays for the planners, the web app or
the bills engine (issue #21: start-up is most of a one-shot command's time). ``--help``, no
arguments, shell completion or an unknown name import every module, so the listing and the
"did you mean" stay complete. ``main`` is the single place where library errors become
one-line messages and exit status 1 (sqlite-utils' pattern): a traceback means a bug, never
bad input.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer

from trainbill.errors import TrainbillError

__all__ = ["COMMANDS", "app", "main", "register_commands"]

app = typer.Typer(
    name="trainbill",
    help="The real bill of training a model on a cloud GPU cluster, before the invoice lands.",
    no_args_is_help=True,
    # Typer's --install-completion / --show-completion (bash, zsh, fish, PowerShell): README "Shell
    # completion".
    add_completion=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _group() -> None:
    """Keep ``app`` a command group when only one command is registered.

    Typer turns an app with a single command and no callback into that command itself, which
    would make ``trainbill diff a b`` read ``diff`` as its first argument once only the ``diff``
    module is imported.
    """


#: Every top-level command (or command group) and the module that registers it, in the order
#: ``trainbill --help`` lists them. ``tests/cli/test_startup.py`` checks this against what
#: the modules register.
COMMANDS: dict[str, str] = {
    "calibrate": "trainbill.cli.bills",
    "diff": "trainbill.cli.diff",
    "forecast": "trainbill.cli.forecast",
    "check": "trainbill.cli.forecast",
    "optimize": "trainbill.cli.optimize",
    "commit": "trainbill.cli.optimize",
    "profile": "trainbill.cli.profile",
    "report": "trainbill.cli.report",
    "serve": "trainbill.cli.report",
    "simulate": "trainbill.cli.simulate",
    "compare-orchestrators": "trainbill.cli.whatif",
    "storage-check": "trainbill.cli.whatif",
    "sparse-attention": "trainbill.cli.whatif",
    "rule-of-thumb": "trainbill.cli.whatif",
    "bill": "trainbill.cli.bills",
    "prices": "trainbill.cli.prices",
    "runs": "trainbill.cli.runs",
    "db": "trainbill.cli.runs",
}


def register_commands(args: list[str]) -> None:
    """Import the command modules ``args`` needs; each registers its commands on ``app``.

    Only the module of ``args[0]`` when it names a command; every module otherwise (no
    arguments, an option such as ``--help``, a misspelt command). Importing a module twice is a
    no-op, so calling this again (tests run many commands in one process) only adds.
    """
    first = args[0] if args else ""
    module = COMMANDS.get(first)
    if module is not None:
        importlib.import_module(module)
        return
    for name in dict.fromkeys(COMMANDS.values()):
        importlib.import_module(name)


try:  # Typer 0.2x vendors its own click; older Typer uses click itself
    from typer._click import types as _click_types
except ImportError:  # pragma: no cover - depends on the installed Typer
    from click import types as _click_types  # type: ignore[no-redef]


class _BoundedNumber(_click_types.ParamType):
    """An int or float flag's type, refusing an integer no float holds before any arithmetic
    (``check --gpus`` with 400 digits was an ``OverflowError`` traceback): the input gate's rule
    (``trainbill._io.check_number``), applied to every numeric flag of every command at once,
    so a new flag is covered without a line of its own."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        from trainbill._io import check_number
        from trainbill.errors import SpecError

        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            # Python refuses int("9" * 5000) with a ValueError click shows as "not a valid
            # integer"; the gate's message says what the limit is.
            value = value.strip()
            digits = len(value.lstrip("+-"))
            if digits > _MAX_DIGITS:
                where = "/".join(param.opts) if param is not None else "value"
                msg = f"{value[:12]}… ({digits:,} digits) is out of range"
                raise SpecError(msg, source="command line", field=where)
        out = self.inner.convert(value, param, ctx)
        where = "/".join(param.opts) if param is not None else "value"
        check_number(
            out,
            where=where,
            source="command line",
            error=lambda message, source: SpecError(message, source=source),
        )
        return out


#: Digits of the longest integer a flag may have (the largest float has 309).
_MAX_DIGITS = 309


def _bound_numbers(command: Any) -> None:
    """Give every int and float parameter of ``command`` (and its subcommands) the bounded
    type; idempotent."""
    for param in command.params:
        if isinstance(param.type, _click_types.IntParamType | _click_types.FloatParamType):
            param.type = _BoundedNumber(param.type)
    for sub in getattr(command, "commands", {}).values():
        _bound_numbers(sub)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; turn ``TrainbillError`` into ``trainbill: error: …`` and exit 1."""
    from trainbill._io import command_inputs

    register_commands(list(sys.argv[1:] if argv is None else argv))
    # The output gate refuses the files this command reads (and only this command's).
    with command_inputs():
        _run(argv)


def _run(argv: list[str] | None) -> None:
    """``main``'s body: the app run, errors and interrupts as one line."""
    from trainbill.__main__ import EXIT_INTERRUPTED

    try:
        command = typer.main.get_command(app)
        _bound_numbers(command)
        command(args=argv, prog_name="trainbill", standalone_mode=True)
    except TrainbillError as exc:
        from trainbill.cli._common import named_by_plan

        sys.stderr.write(f"trainbill: error: {named_by_plan(exc)}\n")
        raise SystemExit(1) from None
    except Exception as exc:
        from trainbill.__main__ import _interrupted

        if not _interrupted(exc):
            raise
        sys.stderr.write("trainbill: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
    except SystemExit as exc:
        # Typer turns a Ctrl-C inside a running command into a silent exit 130; say what
        # happened, as ``trainbill.__main__`` does for one during start-up.
        if exc.code == EXIT_INTERRUPTED:
            sys.stderr.write("trainbill: interrupted\n")
        raise
