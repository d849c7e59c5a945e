"""The Ibis expressions of one bill read: the classified rows grouped for the summary and,
with ``--by``, for the breakdown; and turning an engine's rows into mappings.

Shared by every engine: DuckDB compiles them to SQL once per schema (``_duckdb_read``), Spark,
Trino and Athena run them as they are (``summary._run``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

from trainbill.bills._classify import classify
from trainbill.bills._files import BillFormat
from trainbill.bills._totals import _CTX, _MONEY_KEYS
from trainbill.bills.filters import BillFilter

#: The filter that keeps every row.
_ALL = BillFilter()


def _rows(columns: Sequence[str], records: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
    """Result rows as dicts, money turned from integer pico-units (``_expr.pico_total``) into
    exact ``Decimal``."""
    out: list[dict[str, Any]] = []
    for values in records:
        row = dict(zip(columns, values, strict=True))
        for k in _MONEY_KEYS:
            v = row.get(k)
            if v is not None:
                row[k] = Decimal(v).scaleb(-12, _CTX)
        out.append(row)
    return out


def _fetch(expr: Any) -> list[dict[str, Any]]:
    """Run an Ibis expression (Spark) and return its rows as dicts."""
    table = expr.to_pyarrow()
    return _rows(table.column_names, (r.values() for r in table.to_pylist()))


def _summary_expr(c: Any) -> Any:
    """One aggregate over the classified groups: everything ``_summarise`` needs."""
    import ibis

    label = ibis.coalesce(c.usage_type, c.desc, c.service)
    keys = [
        "currency",
        "payer",
        "provider",
        "category",
        "option",
        "gpu",
        "fee",
        "negation",
        "uncat",
        "service",
        "commit_id",
    ]
    m = c.mutate(label=label)
    return m.group_by([*keys, "label"]).aggregate(
        rows=m.rows.sum(),
        billed=m.billed.sum(),
        effective=m.effective.sum(),
        list=m.list.sum(),
        gpu_hours=m.gpu_hours.sum(),
        bad_billed=m.bad_billed.sum(),
        bad_effective=m.bad_effective.sum(),
        bad_list=m.bad_list.sum(),
        bad_quantity=m.bad_quantity.sum(),
        no_cost=m.no_cost.sum(),
        pmin=m.period_start.min(),
        pmax=m.period_end.max(),
    )


def _breakdown_expr(c: Any) -> Any:
    return c.group_by(["key", "category"]).aggregate(
        rows=c.rows.sum(), billed=c.billed.sum(), effective=c.effective.sum()
    )


def _queries(
    eng: Any,
    fmt: BillFormat,
    kind: str | None,
    tag_key: str | None,
    *,
    where: BillFilter = _ALL,
    staged: bool = False,
    on_scan: Callable[[str, Any], None] | None = None,
    share: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """The Ibis expressions of one read: the summary and, with ``--by``, the breakdown.

    ``staged`` (DuckDB): the read is cut into steps that each store their result in a temp
    table, read by the next step through an unbound table of that name; such entries are
    named ``scan:NAME`` (the grouped rows, ``Engine.groups``: the scan of the files, placed
    first) and ``table:NAME`` (the normalised groups). Why: a first run can start the scan,
    compiled from a small expression, while Ibis compiles the rest (``_query_duckdb``); and
    DuckDB plans the classification of a few thousand groups in ~10 ms instead of ~90 ms
    when it does not inline the normalising expressions into the classifying ones.
    ``on_scan(name, expr)`` is called with each scan as soon as it is built, before the rest.
    """
    import ibis

    from trainbill.bills import cur, focus

    mapping = focus if fmt.family == "focus" else cur
    out: dict[str, Any] = {}

    def stage(prefix: str) -> Any:
        def store(table: Any) -> Any:
            name = f"trainbill_step_{len(out)}"
            out[prefix + name] = table
            if prefix == _SCAN and on_scan is not None:
                on_scan(prefix + name, table)
            return ibis.table(table.schema(), name=name)

        return store

    def classified(key: str | None, tag: str | None) -> Any:
        if not staged:
            return classify(eng.normalized(fmt, mapping, key=key, tag_key=tag, where=where))
        n = eng.normalized(fmt, mapping, key=key, tag_key=tag, where=where, stage=stage(_SCAN))
        return classify(stage(_TABLE)(n))

    # With a breakdown, the summary is the breakdown's groups added up: one scan of the files
    # instead of two (a 2 M-row gzip CSV: 10.6 s -> about 5 s). Exact either way: every group's
    # money is an exact integer (``_expr.pico_total``) and the key only splits groups further.
    c = classified(kind, tag_key)
    if kind is not None and share is not None:  # read by two queries: computed once (Spark)
        c = share(c)
    out["summary"] = _summary_expr(c)
    if kind is not None:
        out["breakdown"] = _breakdown_expr(c)
    return out


#: Prefixes of ``_queries`` entries whose result is stored as a temp table, not returned: the
#: scan of the files, and a later step.
_SCAN = "scan:"
_TABLE = "table:"
