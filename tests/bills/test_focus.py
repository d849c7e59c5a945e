"""FOCUS columns as providers type them in Parquet (``trainbill.bills.focus``): ``Tags`` as a
``MAP(VARCHAR, VARCHAR)`` (AWS's FOCUS export) or as JSON text, timestamps with a time zone."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ibis")
pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from trainbill.bills import read_bill

pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

_UTC = dt.UTC

#: (billed cost, tags) per row: two rows of ``llm``, one of ``vision``, one with another key
#: only and one without tags.
_ROWS: list[tuple[str, dict[str, str]]] = [
    ("10.25", {"user:project": "llm", "aws:createdBy": "role/x"}),
    ("0.0000000001", {"user:project": "llm"}),
    ("7", {"user:project": "vision"}),
    ("3.5", {"aws:createdBy": "role/y"}),
    ("100", {}),
]


def _focus(path: Path, tags_type: str, *, charge_start: dt.datetime | None = None) -> Path:
    """A FOCUS 1.0 Parquet file of ``_ROWS`` with DECIMAL(38, 10) money, timestamps typed
    ``TIMESTAMP WITH TIME ZONE`` (UTC) and ``Tags`` as a map (``"map"``) or JSON text."""
    n = len(_ROWS)
    start = dt.datetime(2026, 10, 1, tzinfo=_UTC)
    ts = pa.timestamp("ms", tz="UTC")
    money = pa.array([Decimal(c) for c, _ in _ROWS], pa.decimal128(38, 10))
    if tags_type == "map":
        tags = pa.array([list(t.items()) for _, t in _ROWS], pa.map_(pa.string(), pa.string()))
    else:
        tags = pa.array([json.dumps(t) if t else None for _, t in _ROWS], pa.string())
    table = pa.table({
        "BillingCurrency": ["USD"] * n,
        "ChargeCategory": ["Usage"] * n,
        "ServiceCategory": ["Compute"] * n,
        "ServiceName": ["Amazon Elastic Compute Cloud"] * n,
        "ChargePeriodStart": pa.array([charge_start or start] * n, ts),
        "BillingPeriodStart": pa.array([start] * n, ts),
        "BillingPeriodEnd": pa.array([dt.datetime(2026, 11, 1, tzinfo=_UTC)] * n, ts),
        "BilledCost": money,
        "EffectiveCost": money,
        "ListCost": money,
        "Tags": tags,
    })  # fmt: skip
    pq.write_table(table, path)
    return path


def _by_key(summary: Any) -> dict[str, tuple[int, float]]:
    return {r.key: (r.rows, r.billed_cost) for r in summary.breakdown}


# llm: 10.25 + 0.0000000001 = 10.2500000001 (2 rows); vision: 7 (1 row); (none): the row with
# only aws:createdBy and the untagged row, 3.5 + 100 = 103.5 (2 rows).
_EXPECTED = {"llm": (2, 10.2500000001), "vision": (1, 7.0), "(none)": (2, 103.5)}


@pytest.mark.parametrize("tags_type", ["map", "json"])
def test_tag_breakdown_reads_map_and_json_tags_alike(tmp_path: Path, tags_type: str) -> None:
    """A ``MAP`` Tags column is looked up by key: cast to text (``{k=v}``, not JSON) it put
    every row in "(none)"."""
    s = read_bill(_focus(tmp_path / "f.parquet", tags_type), by="tag:user:project")
    assert _by_key(s) == _EXPECTED


@pytest.mark.spark
@pytest.mark.usefixtures("spark_available")
def test_spark_reads_map_tags_like_duckdb(tmp_path: Path) -> None:
    path = _focus(tmp_path / "f.parquet", "map")
    spark = read_bill(path, engine="spark", by="tag:user:project").as_dict()
    duck = read_bill(path, by="tag:user:project").as_dict()
    assert (duck.pop("engine"), spark.pop("engine")) == ("duckdb", "spark")
    assert spark == duck
    assert {r["key"]: (r["rows"], r["billed_cost"]) for r in spark["breakdown"]} == _EXPECTED


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_empty_mandatory_cost_is_counted_and_warned(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """Rows 2, 5 and 9 of the FOCUS sample lose their BilledCost: the total is the Decimal sum
    of the other rows (the empty ones count as 0, as before) and the summary says 3 rows."""
    import csv

    from tests.bills.conftest import FOCUS_SAMPLE

    if engine == "spark":
        request.getfixturevalue("spark_available")
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("BilledCost")
    for i in (2, 5, 9):
        rows[i][col] = ""
    total = sum((Decimal(r[col]) for r in rows[1:] if r[col]), Decimal(0))
    path = tmp_path / "bill.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    s = read_bill(path, engine=engine)
    assert s.billed_cost == float(total)
    assert s.null_cost_rows == 3
    expected = (
        f"{path}: 3 row(s) have an empty BilledCost or EffectiveCost or ListCost, counted as 0 "
        "in the totals"
    )
    assert s.warnings == (expected,)
    assert s.as_dict()["warnings"] == list(s.warnings)
