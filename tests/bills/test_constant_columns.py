"""Parquet grouping columns that the footers prove constant leave the GROUP BY, changing nothing.

``trainbill.bills._engine._constant_columns`` reads each row group's statistics; a column is
folded only when every row group of every file holds the one same exact value, or only nulls.
These tests check the proof on hand-built files and that a folded read equals the CSV read of
the same rows (the CSV path never folds).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from tests.bills.conftest import FOCUS_SAMPLE

from trainbill.bills import read_bill
from trainbill.errors import BillError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")

_NUMERIC = {"BilledCost", "EffectiveCost", "ListCost", "ConsumedQuantity", "PricingQuantity"}


def _constants(paths: list[Path]) -> dict[str, str | None]:
    from trainbill.bills._engine import _constant_columns

    con = duckdb.connect()
    listing = ", ".join(f"'{p}'" for p in paths)
    types = {
        str(r[0]): str(r[1])
        for r in con.execute(
            f"DESCRIBE SELECT * FROM read_parquet([{listing}], union_by_name = true)"
        ).fetchall()
    }
    return _constant_columns(con, [str(p) for p in paths], types)


def test_footer_statistics_prove_only_true_constants(tmp_path: Path) -> None:
    """Four rows in two row groups of two: ``same`` is "USD" everywhere and ``empty`` null
    everywhere (folded); ``per_group`` is "a" in the first group and "b" in the second, ``some``
    is "x" or null, ``varies`` differs within a group, ``number`` is a constant integer (its
    printed statistic is not text, so it is kept)."""
    table = pa.table({
        "same": ["USD"] * 4,
        "empty": pa.array([None] * 4, pa.string()),
        "per_group": ["a", "a", "b", "b"],
        "some": ["x", None, "x", "x"],
        "varies": ["p", "q", "p", "q"],
        "number": [7, 7, 7, 7],
    })  # fmt: skip
    path = tmp_path / "bill.parquet"
    pq.write_table(table, path, row_group_size=2)
    assert pq.ParquetFile(path).metadata.num_row_groups == 2
    assert _constants([path]) == {"same": "USD", "empty": None}


def test_two_files_with_different_constants_are_not_folded(tmp_path: Path) -> None:
    """April's file and May's file each have one billing period; together they have two."""
    a, b = tmp_path / "apr.parquet", tmp_path / "may.parquet"
    pq.write_table(pa.table({"period": ["2026-04-01"] * 3, "cur": ["USD"] * 3}), a)
    pq.write_table(pa.table({"period": ["2026-05-01"] * 3, "cur": ["USD"] * 3}), b)
    assert _constants([a, b]) == {"cur": "USD"}


def _sample_as_parquet(
    path: Path, *, currency_of_second_half: str | None = None, service: str | None = None
) -> None:
    """The FOCUS sample's 1,000 rows as typed Parquet in four row groups of 250."""
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))

    def val(c: str, v: str) -> Any:
        if v in ("NULL", ""):
            return None
        return float(v) if c in _NUMERIC else v

    cols = {c: [val(c, r[c]) for r in rows] for c in rows[0]}
    if service is not None:
        cols["ServiceName"] = [service] * len(rows)
    if currency_of_second_half is not None:
        cols["BillingCurrency"] = cols["BillingCurrency"][:500] + [currency_of_second_half] * 500
    pq.write_table(pa.table(cols), path, row_group_size=250)


@pytest.mark.parametrize("service", [None, """O'Reilly's "Data" Service"""])
def test_folded_read_equals_the_unfolded_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: str | None
) -> None:
    """The sample's BillingCurrency ("USD" in all 1,000 rows) is folded; every figure of the
    summary, and of a per-service breakdown, equals the read of the same file with folding
    switched off (the same doubles, so exactly equal; test_focus_sample checks Parquet vs CSV).
    A folded value with quotes in it (one service name for the whole file) survives the SQL."""
    from trainbill.bills import _engine

    path = tmp_path / "focus.parquet"
    _sample_as_parquet(path, service=service)
    assert _constants([path]).get("BillingCurrency") == "USD"
    if service is not None:
        assert _constants([path])["ServiceName"] == service
    for by in (None, "service"):
        folded = read_bill(path, by=by).as_dict()
        with monkeypatch.context() as m:
            m.setattr(_engine, "_constant_columns", lambda *a: {})
            m.setenv("TRAINBILL_CACHE_DIR", str(tmp_path / f"cache-{by}"))  # compile unfolded SQL
            plain = read_bill(path, by=by).as_dict()
        assert folded["rows"] == 1000
        assert folded == plain
        if by is not None and service is not None:
            assert [r["key"] for r in folded["breakdown"]] == [service]


def test_currency_changing_between_row_groups_is_still_refused(tmp_path: Path) -> None:
    """Each row group has one currency, but the bill has two: folding must not hide that, even
    right after a folded read of the same schema (the compiled SQL is cached per folded set)."""
    folded, mixed = tmp_path / "one.parquet", tmp_path / "two.parquet"
    _sample_as_parquet(folded)
    _sample_as_parquet(mixed, currency_of_second_half="EUR")
    assert "BillingCurrency" not in _constants([mixed])
    assert read_bill(folded).currency == "USD"
    with pytest.raises(BillError, match="mixed currencies"):
        read_bill(mixed)


def test_a_file_without_rows_proves_nothing(tmp_path: Path) -> None:
    """An empty table (pyarrow writes one row group of 0 rows, whose null count 0 equals its
    0 values) must not count as "all null": nothing is folded."""
    path = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"cur": pa.array([], pa.string())}), path)
    assert _constants([path]) == {}


def _folded(paths: list[Path], by: str | None = None) -> Any:
    """``read_bill``'s answer (``files`` dropped), or the ``BillError`` it raises."""
    try:
        out = read_bill(paths, by=by).as_dict()
    except BillError as exc:
        return exc
    out.pop("files")
    return out


def _unfolded(
    monkeypatch: pytest.MonkeyPatch, cache: Path, paths: list[Path], by: str | None = None
) -> Any:
    """The same with folding switched off and a fresh SQL cache: the reference answer."""
    from trainbill.bills import _engine

    with monkeypatch.context() as m:
        m.setattr(_engine, "_constant_columns", lambda *a: {})
        m.setenv("TRAINBILL_CACHE_DIR", str(cache))
        return _folded(paths, by)


def test_a_csv_spelling_a_folded_column_in_another_case_leaves_no_stale_sql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CSV whose header says ``servicename`` read with a Parquet file saying ``ServiceName``.
    With one service in every Parquet row the column is folded; the SQL cache key used to
    take the CSV's spelling, miss the folded column and file the folding SQL under "nothing
    folded". A later read of the same schema whose Parquet services vary got that SQL and
    failed ("trainbill_parquet_constants does not exist"); it must equal the unfolded read."""
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    header = list(rows[0])
    lower_csv = tmp_path / "part.csv"
    with lower_csv.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["servicename" if h == "ServiceName" else h for h in header])
        w.writerows([r[h] for h in header] for r in rows[:300])
    one, many = tmp_path / "one" / "bill.parquet", tmp_path / "many" / "bill.parquet"
    one.parent.mkdir()
    many.parent.mkdir()
    _sample_as_parquet(one, service="Amazon Elastic Compute Cloud")
    _sample_as_parquet(many)
    assert "ServiceName" in _constants([one])
    assert "ServiceName" not in _constants([many])
    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(tmp_path / "shared-cache"))
    first = _folded([lower_csv, one])
    second = _folded([lower_csv, many])  # same schema, same cache: a cache hit
    assert first == _unfolded(monkeypatch, tmp_path / "plain-1", [lower_csv, one])
    expected = _unfolded(monkeypatch, tmp_path / "plain-2", [lower_csv, many])
    assert not isinstance(expected, BillError)
    assert second == expected
    assert second["rows"] == 1300


@pytest.mark.parametrize("folder", ["BillingCurrency=EUR", "billingcurrency=EUR"])
def test_a_hive_partition_folder_named_like_a_column_is_not_folded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    """The file says "USD" in every row of BillingCurrency, but it lies in a folder
    ``BillingCurrency=EUR``: DuckDB reads the folder as a Hive partition whose value replaces
    the file's column (names compared ignoring case), so the footer proves nothing about what
    the query sees. Folding used to report "USD" where the unfolded read reports the
    partition's value; the two reads must agree."""
    path = tmp_path / folder / "bill.parquet"
    path.parent.mkdir()
    _sample_as_parquet(path)
    assert "BillingCurrency" not in _constants([path])
    for by in (None, "service"):
        plain = _unfolded(monkeypatch, tmp_path / f"plain-{by}", [path], by)
        assert not isinstance(plain, BillError)
        assert _folded([path], by) == plain


def _not_utf8(n: int, value: bytes) -> Any:
    """A pyarrow *string* array of ``n`` copies of ``value`` without UTF-8 validation (pyarrow
    refuses to build one from Python; foreign writers do write such files)."""
    offsets = pa.array([i * len(value) for i in range(n + 1)], pa.int32()).buffers()[1]
    return pa.Array.from_buffers(pa.string(), n, [None, offsets, pa.py_buffer(value * n)])


@pytest.mark.parametrize("column", ["BillingCurrency", "ServiceName"])
def test_a_constant_that_is_not_utf8_is_not_folded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, column: str
) -> None:
    """Every row of ``column`` holds the bytes ``US\\xc3`` (a truncated UTF-8 sequence).
    DuckDB refuses to read such a value ("not valid UTF8") but prints its statistic escaped,
    as the text ``US\\xC3``; folding used to take that text as the value and return a bill
    (currency "US\\xC3") where the unfolded read refuses the file. Both must refuse."""
    path = tmp_path / "bill.parquet"
    _sample_as_parquet(path)
    table = pq.read_table(path)
    i = table.schema.get_field_index(column)
    pq.write_table(table.set_column(i, column, _not_utf8(table.num_rows, b"US\xc3")), path)
    assert column not in _constants([path])
    plain = _unfolded(monkeypatch, tmp_path / "plain", [path])
    assert isinstance(plain, BillError)
    assert "UTF8" in str(plain)
    folded = _folded([path])
    assert isinstance(folded, BillError)
    assert str(folded) == str(plain)


def test_date_typed_billing_period_reads_like_the_csv(tmp_path: Path) -> None:
    """A FOCUS export may type BillingPeriodStart/End as DATE: the period is those days, as the
    CSV's text gives them (its first ten characters, YYYY-MM-DD). It used to raise
    AttributeError ('DateColumn' object has no attribute 'date')."""
    import datetime as dt

    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))

    def val(c: str, v: str) -> Any:
        if v in ("NULL", ""):
            return None
        if c in ("BillingPeriodStart", "BillingPeriodEnd"):
            return dt.date.fromisoformat(v[:10])
        return float(v) if c in _NUMERIC else v

    path = tmp_path / "dated.parquet"
    pq.write_table(pa.table({c: [val(c, r[c]) for r in rows] for c in rows[0]}), path)
    starts = {r["BillingPeriodStart"][:10] for r in rows}
    ends = {r["BillingPeriodEnd"][:10] for r in rows}
    s = read_bill(path)
    assert (s.period_start, s.period_end) == (min(starts), max(ends))


def test_mixed_currencies_named_across_csv_and_parquet_spellings(tmp_path: Path) -> None:
    """A CSV whose header says ``billingcurrency`` read with a Parquet file saying
    ``BillingCurrency``: the sample's 1,000 rows are USD in the CSV and EUR in the Parquet, so
    the bill has two currencies and is refused by name; the error path used to look the column
    up in the Parquet file by the CSV's spelling and fail with an IndexError."""
    text = FOCUS_SAMPLE.read_text(encoding="utf-8")
    header, _, body = text.partition("\n")
    csv_path = tmp_path / "usd.csv"
    csv_path.write_text(
        header.replace("BillingCurrency", "billingcurrency") + "\n" + body, encoding="utf-8"
    )
    pq_path = tmp_path / "eur.parquet"
    _sample_as_parquet(pq_path, currency_of_second_half="EUR")
    with pytest.raises(BillError, match="mixed currencies"):
        read_bill([csv_path, pq_path])
