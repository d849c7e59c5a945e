"""``python -m trainbill`` and the ``trainbill`` script: the CLI, interrupted cleanly.

The entry point is this small module, not ``trainbill.cli``, so that a Ctrl-C while the CLI's
imports are still loading (Typer, Rich, NumPy: the first few tenths of a second) is caught here
and reported as one line with the conventional exit status 130, never a ``KeyboardInterrupt``
traceback from the middle of an import.

It also sets up the process for a short run before anything heavy is imported (issue #21: a
one-shot ``trainbill forecast`` is mostly start-up; ``benchmarks/startup.py`` times it):

* OpenBLAS starts one thread per core when NumPy is imported (10-25 ms of CPU measured on two
  cores, before any work; more with more cores). trainbill's NumPy work is element-wise arithmetic,
  sorting and sampling, never BLAS, so ``OPENBLAS_NUM_THREADS`` defaults to 1. A value the user
  set is kept, and ``trainbill profile`` is left alone: it times real matrix products through
  PyTorch, which may use OpenBLAS.
* pydantic (only the web API's models use it: ``trainbill serve`` and the report's local
  server; the plan schema is plain Python) looks for plugins the first time a model is built by
  reading the metadata of every installed distribution (5-15 ms here, more in a large
  environment). The plugins observe validation (Logfire's, for one), so
  ``PYDANTIC_DISABLE_PLUGINS`` defaults to ``__all__`` except for ``trainbill serve``, whose
  API a user may well instrument. Set it to an empty value to keep plugins everywhere.
* The cyclic garbage collector runs every 700 new objects by default, and while modules load
  (Typer, NumPy, every dataclass) nearly nothing is garbage: it re-scans
  the ever-growing heap for nothing, 5-10% of the process's CPU (measured). Its first threshold
  is raised to ``GC_THRESHOLD``; cycles are still collected, in larger batches, so a long
  ``trainbill serve`` stays bounded.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Callable

#: 128 + SIGINT, what shells report for a command stopped by Ctrl-C.
EXIT_INTERRUPTED = 130
#: New objects between two young-generation collections (CPython's default is 700).
GC_THRESHOLD = 50_000
#: Commands that keep OpenBLAS's own thread count (see the module docstring).
_BLAS_COMMANDS = frozenset({"profile"})
#: Commands that keep pydantic's plugins (see the module docstring).
_PLUGIN_COMMANDS = frozenset({"serve"})


def _prepare(argv: list[str]) -> None:
    """Start-up settings for a short-lived process (module docstring); ``argv`` without the
    program name."""
    command = argv[0] if argv else ""
    if command not in _BLAS_COMMANDS:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if command not in _PLUGIN_COMMANDS:
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, older, oldest)


def _import_cli() -> Callable[[], object] | None:
    """The CLI's entry function, or None when Ctrl-C arrived while it was being imported.

    A KeyboardInterrupt raised inside the import system does not always surface as itself:
    landing in a path finder it has been seen to come out as ``ModuleNotFoundError: No module
    named 'typer'`` with a traceback (reproduced by interrupting start-up under load). So while
    the imports run, SIGINT is only noted, and acted on once they are done.
    """
    noted: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, _frame: noted.append(signum))
    except ValueError:  # not the main thread (an embedding host): leave signals alone
        previous = None
    try:
        _prepare(sys.argv[1:])
        from trainbill.cli import main
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return None if noted else main


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is a Ctrl-C in disguise. A command imports its modules when it runs, and
    pydantic-core builds a model's validator in Rust: a KeyboardInterrupt raised there comes
    back as a ``SchemaError`` that carries it only as text ("... KeyboardInterrupt: ..."), seen
    when SIGINT landed while a module defining pydantic models was imported (the plan schema's,
    before it became plain Python; the web API's still). Other wrappers chain it."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        if type(seen).__name__ == "SchemaError" and "KeyboardInterrupt" in str(seen):
            return True
        # DuckDB turns a Ctrl-C during a query (a bill read) into RuntimeError("Query
        # interrupted"), or its own InterruptException.
        if isinstance(seen, RuntimeError) and str(seen).startswith("Query interrupted"):
            return True
        if type(seen).__name__ == "InterruptException":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _settle() -> None:
    """Collect the command's garbage now, then freeze every surviving object, so that the
    interpreter's shutdown does not scan them all again.

    Why: at exit CPython runs its cyclic collector over the whole heap (NumPy, Typer, the
    catalog, the engine's modules: a few hundred thousand objects) more than once while it
    tears the modules down; that was ~20 ms of a ~0.23 s ``forecast --json``. One collection
    here keeps what shutdown's did that matters (cycles holding files are finalised and
    flushed), and frozen objects are skipped by the later ones: ~11 ms saved, measured."""
    gc.collect()
    gc.freeze()


def run() -> None:
    """Import and run the CLI; a Ctrl-C at any point is one line and exit 130."""
    try:
        main = _import_cli()
        if main is not None:
            try:
                main()
            finally:
                _settle()
            return
    except KeyboardInterrupt:
        pass
    except Exception as exc:
        if not _interrupted(exc):
            raise
    sys.stderr.write("trainbill: interrupted\n")
    raise SystemExit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    run()
