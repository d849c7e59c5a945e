"""``python -m trainbill`` and the ``trainbill`` script: the CLI, interrupted cleanly.

The entry point is this small module, not ``trainbill.cli``, so that a Ctrl-C while the CLI's
imports are still loading (Typer, Rich, NumPy: the first few tenths of a second) is caught here
and reported as one line with the conventional exit status 130, never a ``KeyboardInterrupt``
traceback from the middle of an import.
"""

from __future__ import annotations

import sys

#: 128 + SIGINT, what shells report for a command stopped by Ctrl-C.
EXIT_INTERRUPTED = 130


def run() -> None:
    """Import and run the CLI; a Ctrl-C at any point is one line and exit 130."""
    try:
        from trainbill.cli import main

        main()
    except KeyboardInterrupt:
        sys.stderr.write("trainbill: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None


if __name__ == "__main__":
    run()
