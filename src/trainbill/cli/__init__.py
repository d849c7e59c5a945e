"""Command-line shell: parse arguments, call the library, render results.

Each command group lives in its own module under ``trainbill.cli`` and registers itself on
``app`` when imported (``_commands`` imports them all), so adding a command never means editing
another command's module. ``main`` imports them before parsing, all of them unless the command
is a fast-path one (``register_commands``). ``main`` is the single place where library errors become one-line messages and exit
status 1 (sqlite-utils' pattern): a traceback means a bug, never bad input.
"""

from __future__ import annotations

import sys

import typer

from trainbill.errors import TrainbillError

__all__ = ["app", "main", "register_commands"]

app = typer.Typer(
    name="trainbill",
    help="The real bill of training a model on a cloud GPU cluster, before the invoice lands.",
    no_args_is_help=True,
    # Typer's --install-completion / --show-completion (bash, zsh, fish, PowerShell): README "Shell completion".
    add_completion=True,
    pretty_exceptions_enable=False,
)

#: Commands whose module is imported alone when the command line starts with them, so
#: ``trainbill bill summary`` (benchmarked against a bare DuckDB scan, process start included)
#: does not pay for importing every other command (NumPy-heavy planners, web, profiling).
_FAST_PATH: dict[str, str] = {"bill": "trainbill.cli.bills", "calibrate": "trainbill.cli.bills"}


def register_commands(args: list[str]) -> None:
    """Import the command modules ``args`` needs; each registers its commands on ``app``.

    Everything (``trainbill.cli._commands``) unless the first argument is a fast-path command;
    ``--help``, no arguments or any other command registers every command. Importing a module
    twice is a no-op, so calling this again (tests run many commands in one process) only adds.
    """
    import importlib

    first = args[0] if args else ""
    importlib.import_module(_FAST_PATH.get(first, "trainbill.cli._commands"))


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; turn ``TrainbillError`` into ``trainbill: error: …`` and exit 1."""
    register_commands(list(sys.argv[1:] if argv is None else argv))
    try:
        app(args=argv, prog_name="trainbill", standalone_mode=True)
    except TrainbillError as exc:
        sys.stderr.write(f"trainbill: error: {exc}\n")
        raise SystemExit(1) from None
