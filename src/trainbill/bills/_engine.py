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

Trino and Athena (``engine="trino"`` / ``"athena"``) query bills that already live in the
lake as tables (AWS's CUR/FOCUS Athena integration, a Glue or Hive table over the export
folder), so their inputs are table names, not files: the columns come from the table's schema
and the same Ibis expressions run there. Connection settings come from the environment, like
Spark's master: ``TRAINBILL_TRINO_URL`` (``trino://user@host:8080/catalog/schema``) and
``TRAINBILL_ATHENA_S3_STAGING_DIR`` (plus ``TRAINBILL_ATHENA_SCHEMA``, the AWS region and
credentials from the usual AWS variables). Neither server exists in CI: the tests compile the
expressions to each dialect and run the Trino SQL, translated by sqlglot, on DuckDB.

On DuckDB the files are registered as views with fixed names (``trainbill_csv``,
``trainbill_parquet``) on a plain ``duckdb`` connection; when an expression must be built, Ibis
gets unbound tables with the views' names and schemas (no Ibis backend, so no PyArrow import),
compiles them to DuckDB SQL, and the SQL runs on that connection. The SQL therefore does not
depend on the file paths, so ``summary`` can cache it per schema and run it later without
importing Ibis at all. Parquet grouping columns that the files' footers prove constant are
grouped out (``_constant_columns``); their values come from a one-row view,
``trainbill_parquet_constants``, so the SQL depends on which columns are folded (part of the
cache key) but not on their values (next month's billing period reuses it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from trainbill.bills._expr import money_total, null_str
from trainbill.bills._files import (
    BillFile,
    BillFormat,
    canonical_column,
    duckdb_database,
    find_ragged_row,
)
from trainbill.errors import BillError

__all__ = ["ENGINES", "TABLE_ENGINES", "Engine", "open_engine"]

ENGINES: tuple[str, ...] = ("duckdb", "spark", "trino", "athena")
#: Engines whose inputs are table names in the engine's catalog rather than files.
TABLE_ENGINES: tuple[str, ...] = ("trino", "athena")


class Engine:
    """A query engine plus a way to load files; ``close()`` releases DuckDB's memory.

    For DuckDB, ``con`` is the ``duckdb`` connection (a cursor of the process's database) and
    expressions are built on unbound tables, so a run whose SQL is already compiled never imports
    Ibis. ``backend`` is the Ibis backend of Spark, Trino and Athena.
    """

    def __init__(
        self, name: str, backend: Any = None, session: Any = None, con: Any = None
    ) -> None:
        self.name = name
        self._backend = backend
        self.session = session
        self.con = con
        self._views: dict[str, list[tuple[str, str]]] = {}
        #: DuckDB: Parquet columns proven constant by the files' footers (see ``constants``).
        self.constants: dict[str, str | None] = {}

    @property
    def backend(self) -> Any:
        """The Ibis backend (Spark, Trino, Athena; DuckDB builds on unbound tables instead)."""
        return self._backend

    def close(self) -> None:
        """Release the DuckDB connection or the Trino/Athena client (Spark stays up)."""
        if self.name == "duckdb":
            self.con.close()
        elif self.name in TABLE_ENGINES and self._backend is not None:
            disconnect = getattr(self._backend, "disconnect", None)
            if disconnect is not None:
                disconnect()

    def _table(self, name: str) -> Any:
        """``schema.table`` or ``catalog.schema.table`` as Ibis wants it (database separate)."""
        parts = name.split(".")
        if len(parts) == 1:
            return self.backend.table(name)
        if len(parts) == 2:
            return self.backend.table(parts[1], database=parts[0])
        if len(parts) == 3:
            return self.backend.table(parts[2], database=(parts[0], parts[1]))
        raise BillError(f"{name}: a table name is table, schema.table or catalog.schema.table")

    def table_files(self, names: list[str]) -> tuple[BillFile, ...]:
        """Trino/Athena: each table name as a ``BillFile`` of kind ``table`` with its columns.

        Raises:
            BillError: a table does not exist or cannot be described.
        """
        out: list[BillFile] = []
        for name in names:
            try:
                columns = tuple(str(c) for c in self._table(name).columns)
            except BillError:
                raise
            except Exception as exc:  # noqa: BLE001 - driver errors vary by engine and version
                detail = (
                    str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                )
                raise BillError(f"{name}: {self.name} cannot read the table: {detail}") from None
            # ``path`` holds the table name (``catalog.schema.table``): only ever displayed.
            out.append(BillFile(path=Path(name), kind="table", columns=columns))
        return tuple(out)

    def remote_files(self, uris: list[str]) -> tuple[BillFile, ...]:
        """Spark: each ``s3a://`` file or folder as a ``BillFile`` with the columns Spark reads
        from it where it is (footers or the CSV header; nothing is copied here).

        Raises:
            BillError: Spark cannot list or read it (no such key, no credentials, no S3
                connector on the classpath), naming the URI.
        """
        from trainbill.bills._files import remote_kind

        out: list[BillFile] = []
        for uri in uris:
            kind = remote_kind(uri)
            try:
                reader = self.session.read
                df = (
                    reader.option("mergeSchema", "true").parquet(uri)
                    if kind == "parquet"
                    else reader.csv(uri, header=True, inferSchema=False)
                )
                columns = tuple(str(c) for c in df.columns)
            except Exception as exc:  # noqa: BLE001 - Spark/Hadoop errors vary by version
                detail = (
                    str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                )
                raise BillError(f"{uri}: Spark cannot read it: {detail}") from None
            out.append(BillFile(path=Path(uri), kind=kind, columns=columns, uri=uri))
        return tuple(out)

    def register(self, fmt: BillFormat) -> list[tuple[str, list[tuple[str, str]]]]:
        """DuckDB: create one view per file kind; return (view, [(column, type), ...]) for each.

        The column names and types are exactly what Ibis sees, so they key the SQL cache.
        """
        out: list[tuple[str, list[tuple[str, str]]]] = []
        for kind in ("csv", "parquet"):
            paths = [str(f.path) for f in fmt.files if f.kind == kind]
            if not paths:
                continue
            listing = _sql_list(paths)
            if kind == "parquet":
                source = f"read_parquet({listing}, union_by_name = true)"
            else:
                source = (
                    f"read_csv({listing}, all_varchar = true, union_by_name = true, "
                    "header = true, auto_detect = true)"
                )
            view = f"trainbill_{kind}"
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM {source}")
            schema = [
                (str(r[0]), str(r[1])) for r in self.con.execute(f"DESCRIBE {view}").fetchall()
            ]
            if kind == "csv":
                _check_sniffed([f for f in fmt.files if f.kind == kind], [c for c, _ in schema])
            out.append((view, schema))
            self._views[view] = schema
            if kind == "parquet":
                self.constants = _constant_columns(self.con, paths, dict(schema))
                if self.constants:
                    types = dict(schema)
                    cols = ", ".join(
                        f"CAST({_sql_str(v)} AS {types[c]}) AS {_sql_ident(c)}"
                        for c, v in self.constants.items()
                    )
                    self.con.execute(
                        f"CREATE OR REPLACE TEMP VIEW {_CONSTANTS_VIEW} AS SELECT {cols}"
                    )
        return out

    def folded(self, fmt: BillFormat, dimensions: tuple[str, ...]) -> list[str]:
        """The grouping ``dimensions`` (real spellings) left out of the Parquet GROUP BY because
        ``constants`` proves each holds one value; ``normalized`` attaches them after grouping.

        The spellings are the Parquet files' own, whether ``fmt`` holds every file (the SQL cache
        key) or only the Parquet ones (``normalized``): a CSV spelling a column in another case
        must not make the key say "nothing folded" while the SQL folds it, or the cached SQL
        would later run where that column varies and its constant view does not exist.
        """
        spelled: dict[str, str] = {}
        for f in fmt.files:
            if f.kind == "parquet":
                for c in f.columns:
                    spelled.setdefault(canonical_column(c), c)
        return [
            spelled[canonical_column(c)]
            for c in dimensions
            if spelled.get(canonical_column(c)) in self.constants
        ]

    def _load_group(self, files: list[BillFile]) -> Any:
        paths = [f.location for f in files]
        kind = files[0].kind
        if kind == "table":
            tables = [self._table(p) for p in paths]
            if len({tuple(t.columns) for t in tables}) > 1:
                raise BillError(
                    f"tables {', '.join(paths)} have different columns; read them separately"
                )
            import ibis

            return tables[0] if len(tables) == 1 else ibis.union(*tables, distinct=False)
        if self.name == "duckdb":
            # An unbound table with the view's schema (from ``register``): the SQL names the
            # view and runs on ``con``. ``backend.table`` would be the same query but imports
            # PyArrow to read the schema, ~0.3 s of the first read of a new bill schema.
            try:
                import ibis
                from ibis.backends.sql.datatypes import DuckDBType
            except ImportError:
                raise BillError(
                    "reading bills needs Ibis: pip install 'trainbill[bills]'"
                ) from None

            view = f"trainbill_{kind}"
            schema = {c: DuckDBType.from_string(t) for c, t in self._views[view]}
            return ibis.table(schema, name=view)
        reader = self.session.read
        if kind == "parquet":
            df = _spark_parquet(reader, paths)
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

    def groups(
        self,
        fmt: BillFormat,
        mapping: Any,
        *,
        key: str | None,
        tag_key: str | None,
        where: Any = None,
    ) -> list[tuple[BillFormat, Any]]:
        """Each file kind's rows grouped by the format's raw ``DIMENSIONS`` (plus the money
        null flags and the breakdown key), their money summed exactly: a few thousand
        groups, ready for ``mapping.normalize``; with the format of that kind's files.

        Cleaning, regexes and classification then run once per distinct combination instead
        of once per row (millions). Per row, only the money columns are converted (each once,
        ``mapping.MONEY``) and the flags computed. DuckDB groups by one hash of the keys
        (``_hash_grouped``); the other engines by the key columns. ``where`` (a
        ``filters.BillFilter``) keeps only its rows, before anything is converted or summed.
        """
        import ibis

        out: list[tuple[BillFormat, Any]] = []
        for kind in ("csv", "parquet", "table"):
            group = [f for f in fmt.files if f.kind == kind]
            if not group:
                continue
            columns: dict[str, str] = {}
            for f in group:
                for c in f.columns:
                    columns.setdefault(canonical_column(c), c)
            sub = replace(fmt, columns=columns, files=tuple(group))
            t = self._load_group(group)
            filtered = where is not None and not where.empty
            if filtered:
                t = t.filter(mapping.rows_where(t, sub, where))
            reused: list[Any] = []
            row = mapping.row_values(t, sub, key=key, tag_key=tag_key, once=_collect(reused))
            nulls = [name for name in row if name.startswith("null_")]  # see ``cur.row_values``
            per_row = _computed_once(t, row, reused, name=f"trainbill_{kind}_rows")
            # Footers prove a column constant over all rows, which a filter may empty.
            folded = (
                self.folded(sub, mapping.DIMENSIONS) if kind == "parquet" and not filtered else []
            )
            dims = [
                sub.col(c) for c in mapping.DIMENSIONS if sub.has(c) and sub.col(c) not in folded
            ]
            # DuckDB sums int64 into 128 bits; the others are given exact decimals per row.
            wide = self.name == "duckdb"
            sums = {
                "rows": per_row.count(),
                **{n: money_total(per_row[n], wide_int_sum=wide) for n in mapping.MONEY},
                "quantity": per_row.quantity.sum(),
                "bad_billed": per_row.bad_billed.sum(),
                "bad_effective": per_row.bad_effective.sum(),
                "bad_list": per_row.bad_list.sum(),
                "bad_quantity": per_row.bad_quantity.sum(),
                "no_cost": per_row.no_cost.sum(),
            }
            # Without a breakdown the key is a null for every row: grouping by it would hash
            # a constant per row for nothing, so it is attached after grouping instead.
            # With every grouping column folded the files hold one combination (and >= 1 row:
            # ``_constant_columns`` proves nothing about empty files), so one global aggregate.
            keys = [*dims, *nulls, *(["key"] if key else [])]
            if not keys:
                g = per_row.aggregate(**sums)
            elif self.name == "duckdb":
                g = _hash_grouped(per_row, keys, sums)
            else:
                g = per_row.group_by(keys).aggregate(**sums)
            if key is None:
                g = g.mutate(key=null_str())
            if folded:
                from ibis.backends.sql.datatypes import DuckDBType

                types = dict(self._views["trainbill_parquet"])
                consts = ibis.table(
                    {c: DuckDBType.from_string(types[c]) for c in folded}, name=_CONSTANTS_VIEW
                )
                g = g.cross_join(consts)
            out.append((sub, g))
        return out

    def normalized(
        self,
        fmt: BillFormat,
        mapping: Any,
        *,
        key: str | None,
        tag_key: str | None,
        where: Any = None,
        stage: Callable[[Any], Any] | None = None,
    ) -> Any:
        """All files as one normalised table of groups (``groups``), ready to classify; CSV
        and Parquet groups are mapped separately and unioned. ``stage``, if given, replaces
        each grouped table before it is mapped (DuckDB: by a table the groups are stored in)."""
        import ibis

        tables = [
            mapping.normalize(g if stage is None else stage(g), sub)
            for sub, g in self.groups(fmt, mapping, key=key, tag_key=tag_key, where=where)
        ]
        if len(tables) == 1:
            return tables[0]
        return ibis.union(*tables, distinct=False)


_CONSTANTS_VIEW = "trainbill_parquet_constants"
#: Column names of the hash grouping (``_hash_grouped``): names no export uses; a bill column
#: so named would only be shadowed in that step, which reads nothing but the keys and sums.
_KEYS = "_trainbill_keys"
_HASH = "_trainbill_hash"


def _hash_grouped(t: Any, keys: list[str], sums: dict[str, Any]) -> Any:
    """``t.group_by(keys).aggregate(**sums)`` as DuckDB runs it fastest: grouped by one 64-bit
    ``hash()`` of the keys, each group's key values taken back with one ``ANY_VALUE`` of them
    packed in a struct.

    Why: grouping by the ~11 raw dimension strings (plus the null flags) makes DuckDB compare
    every key column of every row with its group's; one integer key halves the grouping's CPU
    time (20 M CUR rows: 1.8 s -> 0.9 s for the grouping alone). The price is a theoretical
    one: two different key combinations with the same 64-bit hash would be merged into one
    group and classified by one of their labels. With k distinct combinations the chance is
    about k^2 / 2^65: 3e-12 for a bill of 10,000 distinct lines (5e-7 for a 4-million-resource
    ``--by resource``). Rows and the billed total cannot change (every row's cost is summed
    once either way); a merge could move rows between categories and, merging rows whose
    null flags differ, change an effective or list cost by the merged rows' fallback.
    ``sums`` are expressions on ``t`` (Ibis dereferences them on the keyed table).
    """
    import ibis
    import ibis.expr.datatypes as dt

    def hash_of(value):  # type: ignore[no-untyped-def]
        """DuckDB's own ``hash()``; Ibis's ``.hash()`` adds two casts per row."""

    # The annotations are set here: under ``from __future__ import annotations`` Ibis would
    # evaluate the string ``dt.uint64`` in this module's globals.
    hash_of.__annotations__ = {"return": dt.uint64}
    duckdb_hash = ibis.udf.scalar.builtin(hash_of, name="hash")
    keyed = t.mutate(**{_KEYS: ibis.struct({k: t[k] for k in keys})})
    packed = keyed[_KEYS]
    g = keyed.group_by(**{_HASH: duckdb_hash(packed)}).aggregate(
        **{_KEYS: packed.arbitrary()}, **{n: _rebind(e, t, keyed) for n, e in sums.items()}
    )
    return g.select(*[g[_KEYS][k].name(k) for k in keys], *sums)


#: Name prefix of the columns ``_computed_once`` adds (names no export uses).
_ONCE = "_trainbill_once_"


def _collect(into: list[Any]) -> Callable[[Any], Any]:
    """A ``_expr.Once`` that appends each expression it marks to ``into``."""

    def once(expr: Any) -> Any:
        if all(expr.op() != e.op() for e in into):
            into.append(expr)
        return expr

    return once


def _computed_once(t: Any, row: dict[str, Any], reused: list[Any], *, name: str) -> Any:
    """``t.mutate(**row)``, with each ``reused`` expression computed in an earlier projection
    and read from there by every expression that contains it.

    Why a projection per level, behind an Ibis ``alias`` (a CTE): Ibis merges consecutive
    projections back into one, inlining each expression into every use (checked:
    ``t.mutate(v=...).mutate(z=v.isnull())`` compiles to one SELECT computing ``v`` twice), and
    DuckDB then computes the copies again per row (it does not share expressions under a
    ``CASE``, which every conversion is). A text money column's value feeds its "is it empty"
    and "bad value" flags; inlined, a legacy CUR CSV's 8 columns were converted ~3 times per
    row. A reused expression that contains another goes one level later. With nothing reused
    (typed Parquet columns) this is ``t.mutate(**row)``, the SQL unchanged. ``name`` prefixes
    the CTEs and must differ between tables one query unions (CSV and Parquet groups on Spark,
    Trino, Athena): two CTEs of one name are a SQL error.
    """
    if not reused:
        return t.mutate(**row)
    import ibis.expr.operations as ops

    marked = [e.op() for e in reused]
    inside = {m: set(m.find(ops.Value)) - {m} for m in marked}
    level: dict[Any, int] = {}

    def depth(m: Any) -> int:
        if m not in level:
            level[m] = 1 + max((depth(o) for o in marked if o in inside[m]), default=-1)
        return level[m]

    def on(table: Any, names: dict[Any, str], e: Any) -> Any:
        """``e`` on ``table`` (``t`` plus computed columns), reading the computed ones."""
        subs = {m: table[name].op() for m, name in names.items()}
        return e.replace({**subs, t.op(): table.op()}).to_expr()

    current, names = t, dict[Any, str]()
    for n in range(1 + max(depth(m) for m in marked)):
        now = {m: f"{_ONCE}{i}" for i, m in enumerate(marked) if depth(m) == n}
        current = current.mutate(**{col: on(current, names, m) for m, col in now.items()})
        current = current.alias(f"{name}_{n}")
        names.update(now)
    return current.mutate(**{k: on(current, names, e.op()) for k, e in row.items()})


def _rebind(expr: Any, old: Any, new: Any) -> Any:
    """``expr`` (on ``old``) as an expression on ``new``, a table with all of ``old``'s columns."""
    return expr.op().replace({old.op(): new.op()}).to_expr()


def _sql_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_str(value: str | None) -> str:
    return "NULL" if value is None else "'" + value.replace("'", "''") + "'"


def _sql_list(paths: list[str]) -> str:
    """A DuckDB list literal of file paths, for
    ``read_parquet``/``read_csv``/``parquet_metadata``."""
    return "[" + ", ".join(_sql_str(p) for p in paths) + "]"


def _constant_columns(con: Any, paths: list[str], types: dict[str, str]) -> dict[str, str | None]:
    """Columns that the Parquet footers prove hold one value, or only nulls, in every row of
    every file: column name -> that value (``None``: all null).

    Why: grouping millions of rows by ten strings is most of ``bill summary``'s time, and in a
    monthly export some grouping columns never vary (``BillingCurrency``, the billing period)
    or are entirely empty (``CommitmentDiscountId`` without commitments). A key with a single
    value splits no group, so grouping without it and attaching its value afterwards gives
    the same result (the benchmark's query runs about a fifth faster). The proof is read from
    each row group's statistics (a footer read, milliseconds); anything short of proof keeps the
    column in the GROUP BY: statistics missing or not exact (truncated), a column absent from some
    file, a value in a column that is not plain text (its printed statistic need not equal
    the value DuckDB reads) or printed with a backslash (DuckDB's ``\\xHH`` escape of bytes
    that are not UTF-8, which the read refuses), or a column a Hive ``name=value`` folder in a
    path overrides.
    """
    listing = _sql_list(paths)
    # DuckDB reads a ``name=value`` folder in a path as a Hive partition column that replaces
    # the file's column of that name (any case): the footer then says nothing about the view.
    parts = [part for p in paths for part in re.split(r"[/\\]", p) if "=" in part]
    partitions = {part.split("=", 1)[0].lower() for part in parts}
    rows = con.execute(
        "SELECT path_in_schema, count(DISTINCT file_name), bool_and(coalesce(num_values = "
        "row_group_num_rows AND stats_null_count = num_values, false)), "
        "bool_and(coalesce(num_values = row_group_num_rows AND stats_null_count = 0 AND type = "
        "'BYTE_ARRAY' AND stats_min_value = stats_max_value AND min_is_exact AND max_is_exact, "
        "false)), count(DISTINCT stats_min_value), min(stats_min_value), "
        f"sum(row_group_num_rows) FROM parquet_metadata({listing}) GROUP BY path_in_schema"
    ).fetchall()
    out: dict[str, str | None] = {}
    for column, files, all_null, each_one_value, values, value, n_rows in rows:
        if column not in types or files != len(paths) or not n_rows or column.lower() in partitions:
            continue  # a nested column's leaf, missing from a file (nulls there), no rows, Hive
        if all_null:
            out[column] = None
        elif each_one_value and values == 1 and types[column] == "VARCHAR" and "\\" not in value:
            # DuckDB prints a statistic that is not valid UTF-8 with ``\xHH`` escapes (reading
            # the column is then an error): a backslash makes the printed value ambiguous.
            out[column] = value
    return out


def _check_sniffed(files: list[BillFile], columns: list[str]) -> None:
    """Refuse a CSV whose columns DuckDB's dialect sniffer saw differently from its header.

    A row with more or fewer cells than the header makes the sniffer settle for another
    dialect (one column holding whole lines), and the query would then fail, or read nothing,
    far from the cause. The header read by ``_files`` is the truth; the bad row is named.
    """
    # A header cell with no name (a trailing comma, as spreadsheets save) is a column no
    # mapping reads; DuckDB names it ``columnNN``.
    expected = {c.lower() for f in files for c in f.columns if c.strip()}
    if expected <= {c.lower() for c in columns}:  # extra: hive partitions (BILLING_PERIOD=…)
        return
    for f in files:
        hit = find_ragged_row(f)
        if hit is not None:
            row, cells = hit
            raise BillError(
                f"{f.path}: row {row}: {cells} cell(s) where the header has {len(f.columns)}; "
                "every row of a CSV bill must have one cell per header column"
            )
    names = ", ".join(str(f.path) for f in files)
    raise BillError(
        f"{names}: DuckDB did not find the header's columns (it read {len(columns)} where the "
        f"header(s) have {len(expected)}); the CSV dialect (comma-separated, double quotes) was "
        "not recognised"
    )


def _spark_parquet(reader: Any, paths: list[str]) -> Any:
    """The Parquet files as one Spark DataFrame, columns matched by name.

    Spark's ``mergeSchema`` refuses a column whose type differs between files (a month whose
    export wrote a cost as text, DOUBLE the next); DuckDB reads such a folder with the column as
    text. Here too: the files are read one by one, a column of several types is cast to text
    in every file (``_expr.money`` parses text exactly), and the frames are unioned by name.
    """
    try:
        return reader.option("mergeSchema", "true").parquet(*paths)
    except Exception as exc:  # pyspark's AnalysisException, imported lazily
        if "CANNOT_MERGE" not in str(exc) and "incompatible" not in str(exc).lower():
            raise
    frames = [reader.parquet(p) for p in paths]
    types: dict[str, set[str]] = {}
    for frame in frames:
        for field in frame.schema.fields:
            types.setdefault(field.name, set()).add(field.dataType.simpleString())
    mixed = {name for name, seen in types.items() if len(seen) > 1}
    df = None
    for frame in frames:
        cast = frame.select(
            *[frame[c].cast("string").alias(c) if c in mixed else frame[c] for c in frame.columns]
        )
        df = cast if df is None else df.unionByName(cast, allowMissingColumns=True)
    return df


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
        # Spark logs a failed task's JVM stack traces at ERROR; the reader turns the failure
        # into one line naming the bill (``summary._engine_message``), so only FATAL is shown
        # unless TRAINBILL_SPARK_LOG_LEVEL asks for more (ERROR, WARN, INFO…).
        _SPARK.sparkContext.setLogLevel(os.environ.get("TRAINBILL_SPARK_LOG_LEVEL", "FATAL"))
    return _SPARK


def _table_engine(name: str) -> Engine:
    """Connect to Trino or Athena from the environment (see the module docstring)."""
    import ibis

    if name == "trino":
        url = os.environ.get("TRAINBILL_TRINO_URL", "").strip()
        if not url.startswith("trino://"):
            raise BillError(
                "engine 'trino' needs TRAINBILL_TRINO_URL, e.g. "
                "trino://user@host:8080/catalog/schema (the tables are read from there)"
            )
        try:
            backend = ibis.connect(url)
        except ImportError:
            raise BillError(
                "engine 'trino' needs the Trino client: pip install 'trainbill[trino]'"
            ) from None
        return Engine(name, backend=backend)
    staging = os.environ.get("TRAINBILL_ATHENA_S3_STAGING_DIR", "").strip()
    if not staging.startswith("s3://"):
        raise BillError(
            "engine 'athena' needs TRAINBILL_ATHENA_S3_STAGING_DIR, e.g. "
            "s3://bucket/athena-results/ (and TRAINBILL_ATHENA_SCHEMA, AWS_REGION and AWS "
            "credentials as usual)"
        )
    config: dict[str, Any] = {
        "s3_staging_dir": staging,
        "schema_name": os.environ.get("TRAINBILL_ATHENA_SCHEMA", "default"),
    }
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        config["region_name"] = region
    try:
        backend = ibis.athena.connect(**config)
    except ImportError:
        raise BillError("engine 'athena' needs PyAthena: pip install 'trainbill[athena]'") from None
    return Engine(name, backend=backend)


def open_engine(name: str) -> Engine:
    """Start ``duckdb`` (in-process) or ``spark``, or connect to ``trino`` or ``athena``.

    Raises:
        BillError: unknown engine name, its packages are not installed, or its connection
            settings are missing.
    """
    if name not in ENGINES:
        raise BillError(f"unknown engine {name!r}; allowed: {', '.join(ENGINES)}")
    if name == "duckdb":
        try:
            con = duckdb_database().cursor()
        except ImportError:
            raise BillError(
                "engine 'duckdb' needs DuckDB: pip install 'trainbill[bills]'"
            ) from None
        con.execute("SET enable_progress_bar = false")  # never draw on the user's stderr
        # Bills are in UTC (AWS and FOCUS periods start at 00:00Z). DuckDB cuts a TIMESTAMP
        # WITH TIME ZONE to a date in its session zone, by default the machine's: in
        # America/Los_Angeles an October bill began on 2026-09-30 and ``--by day`` moved every
        # row a day back. UTC here, as Spark's session (``_spark_session``); this cursor only.
        con.execute("SET TimeZone = 'UTC'")
        # Parquet min/max statistics leave NaN out (as the format specifies) and DuckDB's
        # statistics propagation takes them for the column's range: it proved
        # ``ABS(cost) < 9e9`` for every row, dropped the CASE that keeps a NaN DOUBLE cost out
        # of the int64 cast and the query failed with its SQL ("Conversion Error … CASE WHEN
        # ABS(…"); a NaN quantity passed as a number. Without the pass each row is tested; a
        # 2 M-row FOCUS DOUBLE and CUR 2.0 bill read as fast (±5%, noise) either way.
        con.execute("SET disabled_optimizers = 'statistics_propagation'")
        return Engine(name, con=con)
    try:
        import ibis
    except ImportError:
        raise BillError("reading bills needs Ibis: pip install 'trainbill[bills]'") from None
    if name in TABLE_ENGINES:
        return _table_engine(name)
    session = _spark_session()
    return Engine(name, ibis.pyspark.connect(session), session)
