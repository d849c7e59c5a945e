"""``s3://``/``s3a://`` bills with ``--engine spark``: the URI reaches Spark's reader unchanged
(``s3://`` as ``s3a://``), without a network: a stand-in session records what it is asked."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from conftest import run_cli

pytest.importorskip("ibis")

from trainbill.bills import read_bill
from trainbill.bills._engine import Engine
from trainbill.bills.summary import _engine_files
from trainbill.errors import BillError

_CUR = ("line_item_line_item_type", "line_item_unblended_cost", "line_item_currency_code",
        "line_item_product_code", "line_item_usage_type", "line_item_usage_start_date",
        "bill_billing_period_start_date", "bill_billing_period_end_date")  # fmt: skip


class _Frame:
    columns: ClassVar[list[str]] = list(_CUR)

    def createOrReplaceTempView(self, name: str) -> None:
        pass


class _Reader:
    """Records every read; answers with a frame holding the CUR 2.0 required columns."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, tuple[str, ...]]] = []

    def option(self, *_: Any) -> _Reader:
        return self

    def parquet(self, *paths: str) -> _Frame:
        self.reads.append(("parquet", paths))
        return _Frame()

    def csv(self, path: str, **_: Any) -> _Frame:
        self.reads.append(("csv", (path,)))
        return _Frame()


class _Session:
    def __init__(self) -> None:
        self.read = _Reader()


class _Backend:
    def table(self, name: str) -> str:
        return name


def _spark() -> tuple[Engine, _Reader]:
    session = _Session()
    return Engine("spark", backend=_Backend(), session=session), session.read


def test_s3a_folder_is_described_and_read_by_spark_as_given() -> None:
    """An ``s3a://`` Data Exports folder is described by Spark (Parquet, its columns) and the
    same URI, ``//`` intact, is what the query's reader gets."""
    eng, reader = _spark()
    uri = "s3a://bills/cur2/data/"
    (f,) = _engine_files(eng, [uri])
    assert (f.uri, f.kind, f.location) == (uri, "parquet", uri)
    assert f.columns == _CUR
    eng._load_group([f])
    assert reader.reads == [("parquet", (uri,)), ("parquet", (uri,))]


def test_s3_scheme_is_read_as_s3a() -> None:
    """``s3://bucket/key.csv`` reaches Spark as ``s3a://bucket/key.csv`` (the Hadoop S3
    connector's scheme), as a CSV by its name."""
    eng, reader = _spark()
    (f,) = _engine_files(eng, ["s3://bills/focus/2026-04.csv"])
    assert reader.reads == [("csv", ("s3a://bills/focus/2026-04.csv",))]
    assert f.kind == "csv"


def test_s3_path_with_duckdb_is_refused_naming_spark() -> None:
    """DuckDB reads local files: an S3 path is one clear error pointing at ``--engine spark``."""
    with pytest.raises(
        BillError, match=r"s3a://bills/x\.parquet: S3 files are read by --engine spark"
    ):
        read_bill("s3://bills/x.parquet")


def test_cli_keeps_the_uri_double_slash(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI takes the arguments as text: ``s3a://b/k`` is not folded to ``s3a:/b/k``."""
    code, out, err = run_cli(capsys, "bill", "summary", "s3a://bills/cur2/")
    assert code != 0
    assert "s3a://bills/cur2/: S3 files are read by --engine spark" in out + err
