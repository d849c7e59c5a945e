"""Open a query engine and load bill files into one Ibis table per file kind.

DuckDB (embedded, default) and Spark (``engine="spark"``) run the same Ibis expressions; only
loading differs, because the engines' CSV readers differ:

* DuckDB reads every CSV column as text (``all_varchar``) so the cleaning rules in ``_expr``
  decide what a number is, identically on both engines; ``union_by_name`` lines up files whose
  columns differ in order.
* Spark reads CSV without schema inference, ``FAILFAST`` (a malformed line is an error, never a
  silently nulled row), ``multiLine`` (quoted newlines), ``"`` as the escape (RFC 4180, which
  the FOCUS sample uses), one file at a time joined with ``unionByName`` because a multi-file
  read would take column positions from the first file.

One Spark session per process: ``SparkSession.builder.getOrCreate`` returns the running one.
The master is ``local[2]`` unless ``TRAINBILL_SPARK_MASTER`` names a cluster.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from trainbill.bills._files import BillFile, BillFormat
from trainbill.errors import BillError

__all__ = ["ENGINES", "Engine", "open_engine"]

ENGINES: tuple[str, ...] = ("duckdb", "spark")


class Engine:
    """An Ibis backend plus a way to load files; ``close()`` releases DuckDB's memory."""

    def __init__(self, name: str, backend: Any, session: Any = None) -> None:
        self.name = name
        self.backend = backend
        self.session = session

    def close(self) -> None:
        """Release the DuckDB connection (the Spark session stays up for the next call)."""
        if self.name == "duckdb":
            self.backend.disconnect()

    def _load_group(self, files: list[BillFile]) -> Any:
        paths = [str(f.path) for f in files]
        kind = files[0].kind
        if self.name == "duckdb":
            if kind == "parquet":
                return self.backend.read_parquet(paths, union_by_name=True)
            return self.backend.read_csv(
                paths, all_varchar=True, union_by_name=True, header=True
            )
        reader = self.session.read
        if kind == "parquet":
            df = reader.option("mergeSchema", "true").parquet(*paths)
        else:
            df = None
            for p in paths:
                one = reader.csv(
                    p,
                    header=True,
                    inferSchema=False,
                    escape='"',
                    multiLine=True,
                    mode="FAILFAST",
                )
                df = one if df is None else df.unionByName(one, allowMissingColumns=True)
        from ibis.util import gen_name

        name = gen_name("trainbill_bill")
        df.createOrReplaceTempView(name)
        return self.backend.table(name)

    def normalized(
        self, fmt: BillFormat, mapping: Any, *, key: str | None, tag_key: str | None
    ) -> Any:
        """All files as one normalised table of *groups*, ready to classify.

        Rows are first grouped by the format's raw ``DIMENSIONS`` (plus the breakdown key),
        summing the per-row money; cleaning, regexes and classification then run once per
        distinct combination (thousands) instead of once per row (millions). CSV and Parquet
        groups are mapped separately and unioned.
        """
        import ibis

        tables = []
        for kind in ("csv", "parquet"):
            group = [f for f in fmt.files if f.kind == kind]
            if not group:
                continue
            columns: dict[str, str] = {}
            for f in group:
                for c in f.columns:
                    columns.setdefault(c.lower(), c)
            sub = replace(fmt, columns=columns, files=tuple(group))
            t = self._load_group(group)
            per_row = t.mutate(**mapping.row_values(t, sub, key=key, tag_key=tag_key))
            dims = [sub.col(c) for c in mapping.DIMENSIONS if sub.has(c)]
            g = per_row.group_by([*dims, "key"]).aggregate(
                rows=per_row.count(),
                billed=per_row.billed.sum(),
                effective=per_row.effective.sum(),
                list=per_row.list.sum(),
                quantity=per_row.quantity.sum(),
                bad_billed=per_row.bad_billed.sum(),
                bad_effective=per_row.bad_effective.sum(),
                bad_list=per_row.bad_list.sum(),
            )
            tables.append(mapping.normalize(g, sub))
        if len(tables) == 1:
            return tables[0]
        return ibis.union(*tables, distinct=False)


_SPARK: Any = None


def _spark_session() -> Any:
    global _SPARK  # noqa: PLW0603 - one session per process is the point
    if _SPARK is None:
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise BillError(
                "engine 'spark' needs PySpark and Java 17: pip install 'trainbill[spark]'"
            ) from None
        master = os.environ.get("TRAINBILL_SPARK_MASTER", "local[2]")
        _SPARK = (
            SparkSession.builder.master(master)
            .appName("trainbill-bills")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        _SPARK.sparkContext.setLogLevel("ERROR")
    return _SPARK


def open_engine(name: str) -> Engine:
    """Start ``duckdb`` (in-process) or ``spark``.

    Raises:
        BillError: unknown engine name, or its packages are not installed.
    """
    if name not in ENGINES:
        raise BillError(f"unknown engine {name!r}; allowed: {', '.join(ENGINES)}")
    try:
        import ibis
    except ImportError:
        raise BillError("reading bills needs Ibis: pip install 'trainbill[bills]'") from None
    if name == "duckdb":
        try:
            backend = ibis.duckdb.connect()
        except ImportError:
            raise BillError("engine 'duckdb' needs DuckDB: pip install 'trainbill[bills]'") from None
        backend.raw_sql("SET enable_progress_bar = false")  # never draw on the user's stderr
        return Engine(name, backend)
    session = _spark_session()
    return Engine(name, ibis.pyspark.connect(session), session)
