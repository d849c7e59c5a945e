"""``read_bill``: one pass over a bill, reduced to a ``BillSummary``.

The engine does one ``GROUP BY`` over every row (category, purchase option, GPU flag, service,
usage type, …) and returns a few hundred or thousand groups; everything else (totals,
reconciliation checks, GPU attribution of commitment fees, top lines) is exact ``Decimal``
arithmetic over those groups in Python. One scan keeps a 5-million-row bill close to the speed
of a bare ``SELECT sum(BilledCost)``, and doing the final sums in ``Decimal`` makes the result
independent of the engine's summation order, so DuckDB and Spark agree exactly.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from trainbill._record import record
from trainbill.bills._duckdb_read import (
    _duckdb_message,  # noqa: F401 - read from here by tests
    _run_duckdb,
)
from trainbill.bills._engine import ENGINES, TABLE_ENGINES, open_engine
from trainbill.bills._files import BillFile, BillFormat, detect, discover, remote_uri
from trainbill.bills._queries import (
    _ALL,
    _fetch,
    _queries,
    _rows,  # noqa: F401 - read from here by tests
)
from trainbill.bills._totals import (
    _TOP_LINES,
    BY_CHOICES,
    BillLine,
    BreakdownRow,
    _breakdown,
    _parse_by,
    _summarise,
)
from trainbill.bills.filters import BillFilter
from trainbill.errors import BillError, TrainbillError

__all__ = ["BY_CHOICES", "BillLine", "BillSummary", "BreakdownRow", "read_bill"]


@record
class BillSummary:
    """A bill reduced to the ledger's categories; every row counted exactly once.

    ``by_category`` holds BilledCost per category and sums to ``billed_cost``. Rows no rule
    recognises are in ``other`` and also counted in ``uncategorized_rows``/``_cost`` so they are
    visible, not hidden. ``gpu_compute_cost`` is the billed cost of GPU instance usage plus the
    share of commitment fees (Savings Plan/RI) that paid for GPU usage: each commitment's fees
    in proportion to the list cost of the usage that commitment covered (fees of a commitment
    with no covered usage on the bill: by all committed usage); ``hidden_multiplier`` is
    ``billed_cost / gpu_compute_cost`` (``None`` without GPU compute).
    """

    format: str
    engine: str
    files: tuple[str, ...]
    rows: int
    currency: str
    billed_cost: float
    effective_cost: float
    list_cost: float
    by_category: Mapping[str, float]
    rows_by_category: Mapping[str, int]
    effective_by_category: Mapping[str, float]
    compute_by_option: Mapping[str, float]
    gpu_compute_cost: float
    gpu_instance_hours: float
    uncategorized_rows: int
    uncategorized_cost: float
    period_start: str | None
    period_end: str | None
    top_lines: tuple[BillLine, ...] = ()
    breakdown_by: str | None = None
    breakdown: tuple[BreakdownRow, ...] = field(default_factory=tuple)
    #: BilledCost per payer (CUR ``bill_payer_account_id``; FOCUS ``BillingAccountId``): a
    #: folder holding two payers' exports, or a multi-cloud FOCUS file, is summed and each
    #: payer's part shown, never silently merged. Empty when the files lack the column.
    by_payer: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: Rows per provider (FOCUS ``ServiceProviderName``, else ``ProviderName``; CUR: AWS), so
    #: that ``compare`` can tell a bill of another cloud from the plan's. Empty without it.
    by_provider: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: Rows whose mandatory cost (FOCUS BilledCost, EffectiveCost or ListCost; CUR
    #: ``line_item_unblended_cost``) is empty: counted as 0, which a total alone cannot show.
    null_cost_rows: int = 0
    #: What the reader noticed without refusing the bill (``null_cost_rows``), one line each.
    warnings: tuple[str, ...] = ()
    #: The rows read (``--where``/``--since``/``--until``); None: every row of the files.
    where: BillFilter | None = None

    @property
    def hidden_multiplier(self) -> float | None:
        """Total bill over GPU-instance compute: how much the GPUs' sticker price understates."""
        if self.gpu_compute_cost <= 0:
            return None
        return self.billed_cost / self.gpu_compute_cost

    def lines_for(self, category: str, basis: str = "billed") -> tuple[BillLine, ...]:
        """The largest lines of one category on ``basis``, largest absolute cost first."""
        mine = [line for line in self.top_lines if line.category == category]
        mine.sort(key=lambda line: (-abs(line.cost(basis)), line.service, line.item))
        return tuple(mine[:_TOP_LINES])

    def as_dict(self) -> dict[str, Any]:
        """The JSON contract of ``trainbill bill summary --json``."""
        out: dict[str, Any] = {
            "format": self.format,
            "engine": self.engine,
            "files": list(self.files),
            "rows": self.rows,
            "currency": self.currency,
            "period_start": self.period_start,
            "period_end": self.period_end,
            "billed_cost": self.billed_cost,
            "effective_cost": self.effective_cost,
            "list_cost": self.list_cost,
            "by_category": dict(self.by_category),
            "rows_by_category": dict(self.rows_by_category),
            "compute_by_purchase_option": dict(self.compute_by_option),
            "gpu_compute_cost": self.gpu_compute_cost,
            "gpu_instance_hours": self.gpu_instance_hours,
            "uncategorized": {"rows": self.uncategorized_rows, "cost": self.uncategorized_cost},
            "hidden_multiplier": self.hidden_multiplier,
            "by_payer": dict(self.by_payer),
            "by_provider": dict(self.by_provider),
            "null_cost_rows": self.null_cost_rows,
            "warnings": list(self.warnings),
            "top_lines": [
                {
                    "category": x.category,
                    "service": x.service,
                    "item": x.item,
                    "rows": x.rows,
                    "billed_cost": x.billed_cost,
                    "effective_cost": x.effective_cost,
                }
                for x in self.top_lines
            ],
        }
        if self.where is not None:
            out["where"] = self.where.as_dict()
        if self.breakdown_by is not None:
            out["by"] = self.breakdown_by
            out["breakdown"] = [
                {
                    "key": r.key,
                    "rows": r.rows,
                    "billed_cost": r.billed_cost,
                    "effective_cost": r.effective_cost,
                    "by_category": dict(r.by_category),
                }
                for r in self.breakdown
            ]
        return out


def read_bill(
    paths: str | Path | Sequence[str | Path],
    *,
    engine: str = "duckdb",
    by: str | None = None,
    progress: bool = False,
    where: BillFilter | None = None,
) -> BillSummary:
    """Read FOCUS 1.0-1.2 or AWS CUR 2.0 files (CSV, CSV.gz, Parquet) into a ``BillSummary``.

    Args:
        paths: files, folders, or a CUR 2.0 Data Export folder with its ``*-Manifest.json``;
            for ``engine="trino"``/``"athena"``, table names (``schema.table``).
        engine: ``"duckdb"`` (embedded, default), ``"spark"`` (PySpark), ``"trino"`` or
            ``"athena"`` (the same queries; see ``trainbill.bills._engine``).
        by: optional breakdown: ``"tag:KEY"``, ``"resource"``, ``"service"`` or ``"day"``.
        progress: show a Rich progress bar on stderr while DuckDB reads (the CLI's default
            for tables; off with ``--quiet`` and with ``--json``).
        where: read only the rows a ``filters.BillFilter`` keeps (tags, charge days),
            filtered inside the engine before anything is summed.

    Raises:
        UnsupportedBillError: unknown format (the message lists the expected columns) or
            missing required columns.
        BillError: unreadable files, non-numeric costs or mixed currencies (naming file, row
            and column), an unknown engine or ``by`` value.
    """
    kind, tag_key = _parse_by(by)
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    if engine not in ENGINES:  # before reading any file: the engine decides what the inputs are
        raise BillError(f"unknown engine {engine!r}; allowed: {', '.join(ENGINES)}")
    remote = [u for i in items if (u := remote_uri(i)) is not None]
    if remote and engine != "spark":
        raise BillError(
            f"{remote[0]}: S3 files are read by --engine spark (as s3a://); DuckDB reads local "
            "files (copy them down), Trino/Athena the lake table over them"
        )
    if engine in TABLE_ENGINES and not items:
        raise BillError(f"no tables given; engine {engine!r} reads bill tables by name")
    # Trino/Athena tables and S3 files are described by the engine, once it is open (``_run``).
    fmt = None if engine in TABLE_ENGINES or remote else detect(discover(items))
    # Ibis 12 calls DuckDB 2's deprecated ``fetch_arrow_table``; the warning concerns Ibis's
    # internals, not ours, so it is silenced for the engine calls only.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"fetch_arrow_table\(\) is deprecated")
        # PySpark 4.0 sets a pandas option pandas 3 deprecates, and py4j leaves sockets to GC.
        warnings.filterwarnings("ignore", message=r"The 'future\.infer_string' option")
        warnings.filterwarnings("ignore", category=ResourceWarning)
        return _run(
            fmt, [str(i) for i in items], engine, kind, tag_key, by, progress, where or _ALL
        )


def _run(
    fmt: BillFormat | None,
    names: list[str],
    engine: str,
    kind: str | None,
    tag_key: str | None,
    by: str | None,
    progress: bool = False,
    where: BillFilter | None = None,
) -> BillSummary:
    """Open the engine, run the queries, reduce the groups; ``fmt`` is None for table engines."""
    where = where or _ALL
    eng = open_engine(engine)
    try:
        if fmt is None:
            fmt = detect(_engine_files(eng, names))
        if eng.name == "duckdb":
            results = _run_duckdb(
                eng, fmt, kind, tag_key, where, _with_progress if progress else None
            )
        else:
            cached: list[Any] = []

            def share(table: Any) -> Any:
                # Spark recomputes a table for every query that reads it; cached, the summary
                # and the breakdown share one scan of the files (DuckDB stores the step itself).
                cached.append(table.cache())
                return cached[-1]

            try:
                queries = _queries(
                    eng,
                    fmt,
                    kind,
                    tag_key,
                    where=where,
                    share=share if eng.name == "spark" else None,
                )
                results = {name: _fetch(q) for name, q in queries.items()}
            except TrainbillError:
                raise
            except Exception as exc:  # noqa: BLE001 - Spark/Trino/Athena errors vary by version
                raise BillError(_engine_message(exc, fmt, eng.name)) from None
            finally:
                for table in cached:
                    table.release()
    finally:
        eng.close()
    fields = _summarise(results["summary"], fmt, engine)
    breakdown = _breakdown(results["breakdown"]) if "breakdown" in results else ()
    return BillSummary(
        **fields,
        breakdown_by=by,
        breakdown=breakdown,
        where=None if where.empty else where,
    )


#: An engine's error class in its message: Spark's ``[MALFORMED_CSV_RECORD] Malformed CSV
#: record: …``, Trino's ``INVALID_CAST_ARGUMENT``-style names are found the same way.
_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z0-9_.]+\][^\n]*")
#: Longest engine detail quoted in an error line (a malformed record can be a whole row).
_MAX_DETAIL = 300


def _engine_message(exc: Exception, fmt: BillFormat, engine: str) -> str:
    """One line from a Spark, Trino or Athena failure at run time (a malformed CSV row under
    ``FAILFAST``, a file gone from S3): the engine's own error class and message where it
    gives one, else its first line, with the files read. A JVM error arrives as dozens of
    lines of stack; the user needs the first sentence and which bill."""
    text = str(exc).strip()
    # The last error class is the root cause: a JVM error lists its causes outermost first
    # (``[FAILED_READ_FILE.NO_HINT]`` … caused by ``[MALFORMED_CSV_RECORD] Malformed CSV
    # record: "x","y"``).
    found = _ERROR_CLASS.findall(text)
    detail = found[-1].strip() if found else (text.splitlines() or [type(exc).__name__])[0]
    if len(detail) > _MAX_DETAIL:
        detail = detail[: _MAX_DETAIL - 1] + "…"
    names = ", ".join(f.location for f in fmt.files)
    return f"{names}: {engine} could not read the bill: {detail}"


def _engine_files(eng: Any, names: list[str]) -> tuple[BillFile, ...]:
    """The bill's files as the open engine sees them: Trino/Athena tables by name; for Spark,
    local files (found and read here) and ``s3://``/``s3a://`` ones (described by Spark)."""
    if eng.name in TABLE_ENGINES:
        return tuple(eng.table_files(names))
    local = [n for n in names if remote_uri(n) is None]
    remote = [u for n in names if (u := remote_uri(n)) is not None]
    return (*(discover(local) if local else ()), *eng.remote_files(remote))


#: Seconds between polls of DuckDB's progress; a bill under this is done before any bar shows.
_PROGRESS_POLL_S = 0.2


def _with_progress(con: Any, sql: str, label: str) -> tuple[list[str], list[Any]]:
    """Run ``sql`` on ``con`` while a thread polls ``query_progress`` into a Rich bar on stderr.

    The bar is transient (gone when the read ends) and drawn only on a terminal, so piped
    output and logs stay clean. DuckDB reports progress per pipeline; the percentage is of the
    scan, which is nearly all of a large bill's time.
    """
    import threading

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    # DuckDB tracks progress only with its bar on; it must never print the bar itself.
    con.execute("SET enable_progress_bar = true")
    con.execute("SET enable_progress_bar_print = false")
    done = threading.Event()
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(label, total=100)

    def poll() -> None:
        shown = False
        while not done.wait(_PROGRESS_POLL_S):
            pct = con.query_progress()
            if pct is None or pct < 0:
                continue
            if not shown:
                bar.start()
                shown = True
            bar.update(task, completed=min(float(pct), 100.0))
        if shown:
            bar.stop()

    thread = threading.Thread(target=poll, name="trainbill-progress", daemon=True)
    thread.start()
    try:
        cursor = con.execute(sql)
        return [d[0] for d in cursor.description], cursor.fetchall()
    finally:
        done.set()
        thread.join()
