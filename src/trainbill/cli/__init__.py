"""Command-line shell: parse arguments, call the library, render results.

Each command group lives in its own module under ``trainbill.cli`` and registers itself on
``app`` by being imported here, so adding a command never means editing another command's
module. ``main`` is the single place where library errors become one-line messages and exit
status 1 (sqlite-utils' pattern): a traceback means a bug, never bad input.
"""

from __future__ import annotations

import sys

import typer

from trainbill.errors import TrainbillError

__all__ = ["app", "main"]

app = typer.Typer(
    name="trainbill",
    help="The real bill of training a model on a cloud GPU cluster, before the invoice lands.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Command modules register themselves on ``app`` when imported.
from trainbill.cli import _commands  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; turn ``TrainbillError`` into ``trainbill: error: …`` and exit 1."""
    try:
        app(args=argv, prog_name="trainbill", standalone_mode=True)
    except TrainbillError as exc:
        sys.stderr.write(f"trainbill: error: {exc}\n")
        raise SystemExit(1) from None
