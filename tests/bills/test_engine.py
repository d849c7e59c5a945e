"""The engine session (``trainbill.bills._engine``): what a read must not take from the machine."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

pytest.importorskip("ibis")
pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from trainbill.bills import read_bill
from trainbill.bills._files import duckdb_database

_TS = pa.timestamp("ms", tz="UTC")
#: 2026-10-01T00:00Z is 2026-09-30 17:00 in Los Angeles (UTC-7 in October).
_OCT_1 = dt.datetime(2026, 10, 1, tzinfo=dt.UTC)
_NOV_1 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
#: 2026-10-15T03:00Z is 2026-10-14 20:00 in Los Angeles.
_OCT_15 = dt.datetime(2026, 10, 15, 3, tzinfo=dt.UTC)


@pytest.fixture
def los_angeles() -> Iterator[None]:
    """The process's DuckDB database defaults to America/Los_Angeles, as on a machine there
    (DuckDB takes the zone from the OS when the database opens, once per process)."""
    db = duckdb_database()
    before = db.execute("SELECT current_setting('TimeZone')").fetchone()[0]
    db.execute("SET GLOBAL TimeZone = 'America/Los_Angeles'")
    try:
        yield
    finally:
        db.execute(f"SET GLOBAL TimeZone = '{before}'")


def _focus(path: Path) -> Path:
    """Two FOCUS rows, $1 on 2026-10-01T00:00Z and $2 on 2026-10-15T03:00Z, every timestamp
    a TIMESTAMP WITH TIME ZONE."""
    money = pa.array([Decimal(1), Decimal(2)], pa.decimal128(18, 6))
    pq.write_table(
        pa.table(
            {
                "BillingCurrency": ["USD", "USD"],
                "ChargeCategory": ["Usage", "Usage"],
                "ServiceCategory": ["Compute", "Compute"],
                "ServiceName": ["Amazon Elastic Compute Cloud"] * 2,
                "ChargePeriodStart": pa.array([_OCT_1, _OCT_15], _TS),
                "BillingPeriodStart": pa.array([_OCT_1, _OCT_1], _TS),
                "BillingPeriodEnd": pa.array([_NOV_1, _NOV_1], _TS),
                "BilledCost": money,
                "EffectiveCost": money,
                "ListCost": money,
            }
        ),
        path,
    )
    return path


def _cur(path: Path) -> Path:
    """The same two rows as CUR 2.0 (DOUBLE costs, as AWS writes them)."""
    money = pa.array([1.0, 2.0], pa.float64())
    pq.write_table(
        pa.table(
            {
                "line_item_line_item_type": ["Usage", "Usage"],
                "line_item_unblended_cost": money,
                "line_item_currency_code": ["USD", "USD"],
                "line_item_product_code": ["AmazonEC2", "AmazonEC2"],
                "line_item_usage_type": ["BoxUsage:m5.large"] * 2,
                "line_item_usage_start_date": pa.array([_OCT_1, _OCT_15], _TS),
                "bill_billing_period_start_date": pa.array([_OCT_1, _OCT_1], _TS),
                "bill_billing_period_end_date": pa.array([_NOV_1, _NOV_1], _TS),
            }
        ),
        path,
    )
    return path


@pytest.mark.usefixtures("los_angeles")
@pytest.mark.parametrize("write", [_focus, _cur], ids=["focus", "cur-2.0"])
def test_time_zone_timestamps_are_cut_to_utc_dates(tmp_path: Path, write: object) -> None:
    """The period and the days are the UTC ones, whatever the machine's zone: in Los Angeles
    the bill began on 2026-09-30 and the Oct 15 03:00Z row fell on Oct 14."""
    s = read_bill(write(tmp_path / "bill.parquet"), by="day")  # type: ignore[operator]
    assert (s.period_start, s.period_end) == ("2026-10-01", "2026-11-01")
    assert {r.key: r.billed_cost for r in s.breakdown} == {"2026-10-01": 1.0, "2026-10-15": 2.0}
