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


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; turn ``TrainbillError`` into ``trainbill: error: …`` and exit 1."""
    from trainbill.__main__ import EXIT_INTERRUPTED

    register_commands(list(sys.argv[1:] if argv is None else argv))
    try:
        app(args=argv, prog_name="trainbill", standalone_mode=True)
    except TrainbillError as exc:
        from trainbill.cli._common import named_by_plan

        sys.stderr.write(f"trainbill: error: {named_by_plan(exc)}\n")
        raise SystemExit(1) from None
    except SystemExit as exc:
        # Typer turns a Ctrl-C inside a running command into a silent exit 130; say what
        # happened, as ``trainbill.__main__`` does for one during start-up.
        if exc.code == EXIT_INTERRUPTED:
            sys.stderr.write("trainbill: interrupted\n")
        raise
