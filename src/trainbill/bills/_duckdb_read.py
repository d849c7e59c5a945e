"""A DuckDB read: register the files, take the SQL from the cache or compile it with Ibis
(the scan running in a thread while the rest compiles), run it, and turn a DuckDB error into
one line naming the bill file.

Kept apart from ``summary`` because it is the embedded engine's machinery: the other engines
never import it, and ``summary`` keeps only the use case and what the user sees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from trainbill.bills._files import BillFormat
from trainbill.bills._queries import _SCAN, _TABLE, _queries, _rows
from trainbill.bills.filters import BillFilter
from trainbill.errors import BillError


def _run_duckdb(
    eng: Any,
    fmt: BillFormat,
    kind: str | None,
    tag_key: str | None,
    where: BillFilter,
    progress: Callable[[Any, str, str], object] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Register the files, get the SQL (cached per schema, else compiled by Ibis), run it.

    ``progress(con, sql, label)``, where given, runs each scan of the files instead of a plain
    ``execute`` (``summary._with_progress`` draws the bar: the user-facing part stays there)."""
    import duckdb

    try:
        return _query_duckdb(eng, fmt, kind, tag_key, where, progress)
    except duckdb.Error as exc:
        # Unreadable files, malformed CSV, a non-finite or out-of-range double: a message
        # naming the files, never a traceback.
        raise BillError(_duckdb_message(exc, fmt)) from None


def _named_file(lines: Sequence[str], fmt: BillFormat) -> str:
    """The one bill file a DuckDB error names (a CSV error's ``file = …`` line; an IO error's
    quoted path, as when a part is cut short or removed mid-read), else all the files."""
    for line in lines[1:]:
        stripped = line.strip()
        if stripped.startswith("file = "):
            return stripped.removeprefix("file = ")
    quoted = [f.location for f in fmt.files if f'"{f.location}"' in lines[0]]
    if len(quoted) == 1:
        return quoted[0]
    # A gzip error ends with the path, unquoted ("Unexpected end of GZIP stream: a.csv.gz").
    ending = [f.location for f in fmt.files if lines[0].endswith(f": {f.location}")]
    if len(ending) == 1:
        return ending[0]
    return ", ".join(f.location for f in fmt.files)


def _duckdb_message(exc: Exception, fmt: BillFormat) -> str:
    """One line from a DuckDB error: its first line, the reason a CSV error gives further down
    ("… This file is not utf-8 encoded.") and the one file it names, else all the files; never
    the SQL DuckDB quotes (``LINE 1: CREATE … read_csv(…``), which says nothing about the bill.
    """
    lines = [x.rstrip() for x in str(exc).strip().splitlines()]
    if not lines or not lines[0]:
        lines = [type(exc).__name__]
    detail = lines[0]
    names = _named_file(lines, fmt)
    if "gzip" in detail.lower():  # DuckDB reads a .csv.gz while it runs (and sniffs) the SQL
        # The file named already ends the detail ("…GZIP stream: a.csv.gz"): not twice.
        detail = detail.removesuffix(f": {names}")
        return f"{names}: truncated or corrupt gzip ({detail}); download the file again"
    if any("not utf-8 encoded" in line.lower() for line in lines):
        where = detail.removeprefix("Invalid Input Error: CSV Error on ")
        return f"{names}: {where}: not UTF-8 text; export or save the bill as UTF-8"
    skipped = ("Original Line", "Possible Solution", "LINE ")
    raw_row = False
    for line in lines[1:]:
        # "Original Line:" with nothing after it puts the raw row on the next line: that row
        # is the bill's content, not the reason.
        after_label = raw_row
        raw_row = line.startswith("Original Line") and not line.partition(":")[2].strip()
        if after_label or not line or line[0].isspace() or line.startswith(skipped):
            continue
        detail = f"{detail}: {line}"
        break
    return f"{names}: DuckDB could not read the bill: {detail}"


def _query_duckdb(
    eng: Any,
    fmt: BillFormat,
    kind: str | None,
    tag_key: str | None,
    where: BillFilter,
    progress: Callable[[Any, str, str], object] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Run the read's SQL: cached for this schema (``_sqlcache``), else compiled by Ibis.

    On a first run the scan (the ``table:`` statements, compiled first from a small
    expression) runs in a thread while Ibis compiles the classification: DuckDB releases
    the GIL while it reads, and compiling is most of a first run's extra second.
    """
    from trainbill.bills import cur, focus
    from trainbill.bills._sqlcache import load_sql, store_sql

    views = eng.register(fmt)
    mapping = focus if fmt.family == "focus" else cur
    key = {
        "family": fmt.family,
        "columns": dict(fmt.columns),
        "views": views,
        # Parquet grouping columns proven constant leave the GROUP BY (``Engine.constants``).
        # A filtered read folds nothing (``Engine.groups``): the footers say nothing of the
        # rows the filter keeps, which may be none.
        "folded": eng.folded(fmt, mapping.DIMENSIONS) if where.empty else [],
        "by": kind,
        "tag": tag_key,
        **({} if where.empty else {"where": where.cache_key()}),
    }
    label = f"reading {len(fmt.files)} file(s)"

    def create(name: str, sql: str) -> str:
        return f"CREATE OR REPLACE TEMP TABLE {name.split(':', 1)[1]} AS {sql}"

    def scan(name: str, sql: str) -> None:
        if progress is not None:
            progress(eng.con, create(name, sql), label)
        else:
            eng.con.execute(create(name, sql))

    sqls = load_sql(key)
    if sqls is None:
        sqls = _compile_and_scan(eng, fmt, kind, tag_key, where, scan)
        store_sql(key, sqls)
    else:
        for name, sql in sqls.items():
            if name.startswith(_SCAN):
                scan(name, sql)
    results: dict[str, list[dict[str, Any]]] = {}
    for name, sql in sqls.items():
        if name.startswith(_TABLE):
            eng.con.execute(create(name, sql))
        elif not name.startswith(_SCAN):
            cursor = eng.con.execute(sql)
            results[name] = _rows([d[0] for d in cursor.description], cursor.fetchall())
    return results


def _compile_and_scan(
    eng: Any,
    fmt: BillFormat,
    kind: str | None,
    tag_key: str | None,
    where: BillFilter,
    scan: Callable[[str, str], None],
) -> dict[str, str]:
    """Compile the read's SQL with Ibis, running each scan (``scan``) in a thread as soon as
    it is compiled, while the rest compiles; returns every statement by name."""
    compiler = _duckdb_compiler()

    def to_sql(expr: Any) -> str:
        # ``ibis.to_sql`` would also unbind the tables (already unbound) and pretty-print.
        return str(compiler.to_sqlglot(expr).sql(dialect=compiler.dialect))

    compiled: dict[str, str] = {}
    worker = _Worker(scan)

    def start(name: str, expr: Any) -> None:
        compiled[name] = to_sql(expr)
        worker.submit(name, compiled[name])

    try:
        queries = _queries(eng, fmt, kind, tag_key, where=where, staged=True, on_scan=start)
        compiled.update({n: to_sql(q) for n, q in queries.items() if n not in compiled})
    except BaseException:
        worker.cancel(eng.con)
        raise
    worker.join()
    return compiled


_COMPILERS = "ibis.backends.sql.compilers"


def _duckdb_compiler() -> Any:
    """Ibis's DuckDB SQL compiler, imported without the other 19 dialects' compilers.

    Why: the package ``ibis.backends.sql.compilers`` imports every dialect's compiler in its
    ``__init__``, ~0.1 s of a first run (a tenth of it) for dialects a DuckDB read never uses.
    A bare package module stands in for it while its ``duckdb`` module is imported; then the
    stand-in and the modules imported under it are removed from ``sys.modules``, so a later
    import of the package (Spark, Trino, ``ibis.to_sql``) runs its ``__init__`` as usual. If
    anything about this fails (another Ibis layout), the package is imported normally.
    """
    import importlib
    import sys
    import types

    if _COMPILERS not in sys.modules:
        import ibis.backends.sql as sql_package

        stand_in = types.ModuleType(_COMPILERS)
        stand_in.__path__ = [str(Path(sql_package.__path__[0]) / "compilers")]
        before = set(sys.modules)
        sys.modules[_COMPILERS] = stand_in
        try:
            return importlib.import_module(_COMPILERS + ".duckdb").compiler
        except Exception:  # noqa: BLE001, S110 - any failure: the normal import below
            pass
        finally:
            for name in set(sys.modules) - before:
                if name == _COMPILERS or name.startswith(_COMPILERS + "."):
                    del sys.modules[name]
    from ibis.backends.sql.compilers.duckdb import compiler

    return compiler


class _Worker:
    """Runs ``fn(name, sql)`` for each submitted statement, in order, in one thread (started
    on the first); ``join`` waits for the last and re-raises the first error in the caller."""

    def __init__(self, fn: Callable[[str, str], None]) -> None:
        import queue

        self._fn = fn
        self._queue: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self._thread: Any = None
        self._error: BaseException | None = None
        self._cancelled = False

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None and not self._cancelled:
                try:
                    self._fn(*item)
                except BaseException as exc:  # noqa: BLE001 - re-raised by join()
                    self._error = exc

    def submit(self, name: str, sql: str) -> None:
        if self._thread is None:
            import threading

            self._thread = threading.Thread(target=self._run, name="trainbill-scan")
            self._thread.start()
        self._queue.put((name, sql))

    def join(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
        if self._error is not None:
            raise self._error

    def cancel(self, con: Any) -> None:
        """Interrupt the running statement (the caller is failing) and wait for the thread."""
        if self._thread is not None:
            self._cancelled = True  # what is still queued is skipped
            con.interrupt()
            self._queue.put(None)
            self._thread.join()
