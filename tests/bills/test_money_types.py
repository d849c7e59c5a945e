"""Money columns of every physical type a real export uses give the hand-computed totals.

FOCUS gives costs the Decimal type; AWS writes DOUBLE; DuckDB and Spark write DECIMAL(p, s)
for decimal arithmetic; CSV and string-typed Parquet hold text, sometimes in scientific
notation. Each is read with its own per-row conversion (``trainbill.bills._expr.money``).
"""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from tests.bills.conftest import CUR_MONTH

pytest.importorskip("ibis")
duckdb = pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from trainbill.bills import read_bill
from trainbill.errors import BillError

_MONEY = ("BilledCost", "EffectiveCost", "ListCost")


def _focus(path: Path, costs: list[str], money_type: Any) -> Path:
    """A FOCUS 1.0 file, one Compute usage row per cost, every money column ``money_type``
    (a pyarrow type; ``pa.string()`` writes the text as given)."""
    n = len(costs)
    if pa.types.is_decimal(money_type):
        values: Any = pa.array([Decimal(c) for c in costs], money_type)
    elif pa.types.is_floating(money_type):
        values = pa.array([float(c) for c in costs], money_type)
    else:
        values = pa.array(costs, money_type)
    table = pa.table({
        "BillingCurrency": ["USD"] * n,
        "ChargeCategory": ["Usage"] * n,
        "ServiceCategory": ["Compute"] * n,
        "ServiceName": ["Amazon Elastic Compute Cloud"] * n,
        "ChargePeriodStart": ["2026-04-01 00:00:00"] * n,
        "BillingPeriodStart": ["2026-04-01 00:00:00"] * n,
        "BillingPeriodEnd": ["2026-05-01 00:00:00"] * n,
        **dict.fromkeys(_MONEY, values),
    })  # fmt: skip
    pq.write_table(table, path)
    return path


# 0.1 + 0.2 − 0.3 + 4,567.000001 + 1,000,000,000.5 = 1,000,004,567.500001 (six decimals at
# most, so every type holds it exactly and no rounding is involved).
_COSTS = ["0.1", "0.2", "-0.3", "4567.000001", "1000000000.5"]
_TOTAL = 1000004567.500001


@pytest.mark.parametrize(
    "money_type",
    [
        pa.float64(),
        pa.decimal128(18, 6),
        pa.decimal128(38, 12),
        pa.decimal128(38, 9),
        pa.decimal128(20, 6),
        pa.string(),
    ],
    ids=["double", "decimal-18-6", "decimal-38-12", "decimal-38-9", "decimal-20-6", "string"],
)
def test_every_money_type_gives_the_hand_total(tmp_path: Path, money_type: Any) -> None:
    """The five costs sum to 1,000,004,567.500001 on billed, effective and list cost alike."""
    s = read_bill(_focus(tmp_path / "bill.parquet", _COSTS, money_type))
    assert s.rows == 5
    assert (s.billed_cost, s.effective_cost, s.list_cost) == (_TOTAL, _TOTAL, _TOTAL)
    assert s.by_category["compute"] == _TOTAL


def test_scientific_notation_text(tmp_path: Path) -> None:
    """'1.5E-7' + '2e3' + '-1.0E0' as text = 0.00000015 + 2000 − 1 = 1,999.00000015."""
    s = read_bill(_focus(tmp_path / "bill.parquet", ["1.5E-7", "2e3", "-1.0E0"], pa.string()))
    assert s.billed_cost == 1999.00000015


def test_small_decimal_type_needs_no_range_check(tmp_path: Path) -> None:
    """DECIMAL(9, 2) cannot hold ±9e9: 1,234,567.89 + 0.11 = 1,234,568.00."""
    s = read_bill(_focus(tmp_path / "bill.parquet", ["1234567.89", "0.11"], pa.decimal128(9, 2)))
    assert s.billed_cost == 1234568.00


def test_decimal_beyond_nine_decimals_is_summed_exactly(tmp_path: Path) -> None:
    """DECIMAL(38, 12) and the same values as text are both summed exactly (whole 1e-12
    units): 3 × 0.0000000004 + 10.0000000006 = 10.0000000018, not rounded to 1e-9."""
    costs = ["0.0000000004"] * 3 + ["10.0000000006"]
    typed = read_bill(_focus(tmp_path / "typed.parquet", costs, pa.decimal128(38, 12)))
    text = read_bill(_focus(tmp_path / "text.parquet", costs, pa.string()))
    assert typed.billed_cost == 10.0000000018
    assert text.billed_cost == 10.0000000018


def test_decimal_beyond_twelve_decimals_is_rounded_once_per_group(tmp_path: Path) -> None:
    """DECIMAL(38, 15): 0.000000000000400 × 3 + 1.000000000000700 = 1.000000000001900 in one
    group, rounded half away from zero at 1e-12 → 1.000000000002 (the rows alone would each
    round to 0 and 1.000000000001)."""
    costs = ["0.000000000000400"] * 3 + ["1.000000000000700"]
    typed = read_bill(_focus(tmp_path / "typed.parquet", costs, pa.decimal128(38, 15)))
    assert typed.billed_cost == 1.000000000002


def test_decimal_beyond_nine_billion_names_the_row(tmp_path: Path) -> None:
    """A DECIMAL(38, 6) BilledCost of 10,000,000,000 (beyond ±9e9) is refused at data row 2."""
    path = _focus(tmp_path / "bill.parquet", ["1", "10000000000", "2"], pa.decimal128(38, 6))
    with pytest.raises(
        BillError, match=r"bill\.parquet: row 2: column BilledCost: '10000000000\.000000'"
    ):
        read_bill(path)


_CUR_MONEY = (
    "line_item_unblended_cost",
    "savings_plan_savings_plan_effective_cost",
    "savings_plan_total_commitment_to_date",
    "savings_plan_used_commitment",
    "pricing_public_on_demand_cost",
)


def _cur_parquet(path: Path, types: dict[str, Any]) -> Path:
    """The hand-checked CUR month (``test_cur``) as Parquet, money columns typed as given
    (empty cells are nulls; other columns stay text)."""
    with CUR_MONTH.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    data: dict[str, Any] = {}
    for column in rows[0]:
        cells = [r[column] or None for r in rows]
        kind = types.get(column)
        if kind is None:
            data[column] = pa.array(cells, pa.string())
        elif pa.types.is_decimal(kind):
            data[column] = pa.array([None if c is None else Decimal(c) for c in cells], kind)
        else:
            data[column] = pa.array([None if c is None else float(c) for c in cells], kind)
    pq.write_table(pa.table(data), path)
    return path


@pytest.mark.parametrize(
    "types",
    [
        dict.fromkeys(_CUR_MONEY, pa.decimal128(18, 6)),
        dict.fromkeys(_CUR_MONEY, pa.float64()),
        # Mixed kinds in one row's effective cost: DECIMAL unblended, DOUBLE Savings Plan.
        {
            **dict.fromkeys(_CUR_MONEY, pa.float64()),
            "line_item_unblended_cost": pa.decimal128(38, 12),
        },
    ],
    ids=["decimal", "double", "mixed"],
)
def test_cur_month_typed_money_gives_the_hand_totals(tmp_path: Path, types: dict[str, Any]) -> None:
    """Billed 14,197.04, committed compute 7,200, effective compute 5,504 + 1,200 + 7,000 + 0 +
    200 + 138.24 = 14,042.24 and list 19,557.04, as in ``test_cur``'s hand sums."""
    s = read_bill(_cur_parquet(tmp_path / "cur.parquet", types))
    assert s.rows == 24
    assert s.billed_cost == pytest.approx(14197.04, abs=1e-9)
    assert s.compute_by_option["committed"] == pytest.approx(7200.00, abs=1e-9)
    assert s.effective_by_category["compute"] == pytest.approx(14042.24, abs=1e-9)
    assert s.list_cost == pytest.approx(19557.04, abs=1e-9)


@pytest.mark.parametrize(
    "money_type",
    [pa.float64(), pa.decimal128(18, 6), pa.decimal128(10, 0), pa.string()],
    ids=["double", "decimal-18-6", "decimal-10-0", "string"],
)
def test_cur_fallbacks_apply_row_by_row_within_one_line(tmp_path: Path, money_type: Any) -> None:
    """Rows of one line (same type, usage type, ARN) where some carry the Savings Plan columns
    and the public price and some do not: each row falls back to its own unblended cost, as
    the effective and list cost are computed from per-group sums (``cur.normalize``).

    Covered usage, unblended 10 / 20 / 30, SP effective 7 / — / 21, public 12 / — / —:
    effective 7 + 20 + 21 = 48, list 12 + 20 + 30 = 62. Recurring fee, unblended 100 / 50,
    commitment 100 / 50, used 80 / —: effective (100 − 80) + 50 = 70, list 100 + 50 = 150.
    Billed 10 + 20 + 30 + 100 + 50 = 210; effective 48 + 70 = 118; list 62 + 150 = 212.
    """
    arn = "arn:aws:savingsplans::111122223333:savingsplan/sp-1"
    covered = ("SavingsPlanCoveredUsage", "BoxUsage:p5.48xlarge", "Hrs")
    fee = ("SavingsPlanRecurringFee", "ComputeSP:1yrNoUpfront", "Hrs")
    rows = [  # line, unblended, SP effective, commitment, used, public
        (covered, "10", "7", None, None, "12"),
        (covered, "20", None, None, None, None),
        (covered, "30", "21", None, None, None),
        (fee, "100", None, "100", "80", None),
        (fee, "50", None, "50", None, None),
    ]

    def money(i: int) -> Any:
        cells = [r[i] for r in rows]
        if pa.types.is_decimal(money_type):
            return pa.array([None if c is None else Decimal(c) for c in cells], money_type)
        if pa.types.is_floating(money_type):
            return pa.array([None if c is None else float(c) for c in cells], money_type)
        return pa.array(cells, money_type)

    n = len(rows)
    table = pa.table({
        "bill_billing_period_start_date": ["2026-04-01T00:00:00.000Z"] * n,
        "bill_billing_period_end_date": ["2026-05-01T00:00:00.000Z"] * n,
        "line_item_usage_start_date": ["2026-04-02T00:00:00.000Z"] * n,
        "line_item_currency_code": ["USD"] * n,
        "line_item_line_item_type": [r[0][0] for r in rows],
        "line_item_product_code": ["AmazonEC2"] * n,
        "line_item_usage_type": [r[0][1] for r in rows],
        "pricing_unit": [r[0][2] for r in rows],
        "line_item_usage_amount": [1.0] * n,
        "savings_plan_savings_plan_a_r_n": [arn] * n,
        "line_item_unblended_cost": money(1),
        "savings_plan_savings_plan_effective_cost": money(2),
        "savings_plan_total_commitment_to_date": money(3),
        "savings_plan_used_commitment": money(4),
        "pricing_public_on_demand_cost": money(5),
    })  # fmt: skip
    path = tmp_path / "cur.parquet"
    pq.write_table(table, path)
    s = read_bill(path)
    assert (s.rows, s.billed_cost, s.effective_cost, s.list_cost) == (5, 210.0, 118.0, 212.0)


def _focus_with_nan(path: Path, column: str) -> Path:
    """Three FOCUS rows with DOUBLE costs 1, 2, 3 and ``column`` (a DOUBLE) NaN in row 2.

    pyarrow writes min/max statistics without the NaN (the Parquet rule), so the footer
    claims the column lies within [1, 3]."""
    _focus(path, ["1", "2", "3"], pa.float64())
    table = pq.read_table(path)
    nan = pa.array([1.0, float("nan"), 3.0])
    if column in table.column_names:
        table = table.set_column(table.column_names.index(column), column, nan)
    else:
        table = table.append_column(column, nan)
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
@pytest.mark.parametrize("column", ["BilledCost", "ConsumedQuantity"])
def test_nan_double_is_refused_naming_the_row(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str, column: str
) -> None:
    """DuckDB trusted the footer's range and failed with its SQL ("Conversion Error … CASE
    WHEN ABS(…"); Spark took the NaN for an empty cell (cost 0, no hours). Both name it."""
    if engine == "spark":
        request.getfixturevalue("spark_available")
    path = _focus_with_nan(tmp_path / "bill.parquet", column)
    with pytest.raises(
        BillError, match=rf"bill\.parquet: row 2: column {column}: 'nan' is not a number \(1 "
    ):
        read_bill(path, engine=engine)
