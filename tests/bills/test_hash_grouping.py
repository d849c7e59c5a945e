"""DuckDB groups the rows by one hash of the grouping keys (``_engine._hash_grouped``): the
groups, their labels and their sums must be exactly those of grouping by the columns.

A tiny CUR 2.0 Parquet file, built here, with the cases a careless hash key would get wrong:
two lines whose key strings differ only in where one column ends and the next begins
(``AmazonS3`` + ``Requests-Tier1`` against ``AmazonS`` + ``3Requests-Tier1``), and two
Savings-Plan-covered rows of one line, one with its effective cost and one without (the
"is it empty" flag is part of the key: summed in one group, the empty row's fallback to its
unblended cost would be lost).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import read_bill

_SP = "arn:aws:savingsplans::111122223333:savingsplan/0a1b"


def _bill(path: Path) -> Path:
    n = 5
    start = datetime(2026, 4, 1, tzinfo=UTC)
    table = pa.table({
        "bill_billing_period_start_date": [start] * n,
        "bill_billing_period_end_date": [datetime(2026, 5, 1, tzinfo=UTC)] * n,
        "bill_payer_account_id": ["111122223333"] * n,
        "line_item_line_item_type": ["Usage", "Usage", "Usage",
                                     "SavingsPlanCoveredUsage", "SavingsPlanCoveredUsage"],
        "line_item_product_code": ["AmazonS3", "AmazonS3", "AmazonS", "AmazonEC2", "AmazonEC2"],
        "line_item_usage_type": ["Requests-Tier1", "Requests-Tier1", "3Requests-Tier1",
                                 "BoxUsage:p5.48xlarge", "BoxUsage:p5.48xlarge"],
        "line_item_line_item_description": ["PUT requests"] * 3 + ["p5 covered by SP"] * 2,
        "line_item_usage_start_date": [start] * n,
        "line_item_usage_amount": [1.0, 1.0, 1.0, 2.0, 3.0],
        "line_item_currency_code": ["USD"] * n,
        "line_item_unblended_cost": [0.0000004, 1.5, 2.25, 0.0, 3.0],
        "savings_plan_savings_plan_a_r_n": [None, None, None, _SP, _SP],
        "savings_plan_savings_plan_effective_cost": [None, None, None, 7.0, None],
    })  # fmt: skip
    pq.write_table(table, path)
    return path


def _lines(summary) -> dict[tuple[str, str], tuple[int, float, float]]:  # type: ignore[no-untyped-def]
    return {
        (x.service, x.item): (x.rows, x.billed_cost, x.effective_cost) for x in summary.top_lines
    }


def test_hash_grouping_keeps_every_line_and_its_fallback(tmp_path: Path) -> None:
    """Billed: 0.0000004 + 1.5 + 2.25 + 0 + 3.0 = 6.7500004; effective: the same, except that
    the covered row with an effective cost counts 7.0 instead of its 0 billed, and the one
    without falls back to its 3.0 billed: 0.0000004 + 1.5 + 2.25 + 7.0 + 3.0 = 13.7500004."""
    s = read_bill(_bill(tmp_path / "bill.parquet"))
    assert s.rows == 5
    assert s.billed_cost == pytest.approx(6.7500004, abs=1e-12)
    assert s.effective_cost == pytest.approx(13.7500004, abs=1e-12)
    lines = _lines(s)
    # S3 PUTs: two rows, 0.0000004 + 1.5; the shifted key is a line of its own (2.25).
    assert lines[("AmazonS3", "requests-tier1")] == pytest.approx((2, 1.5000004, 1.5000004))
    assert lines[("AmazonS", "3requests-tier1")] == pytest.approx((1, 2.25, 2.25))
    # Covered p5: billed 0 + 3.0; effective 7.0 + 3.0 (fallback of the row without one).
    assert lines[("AmazonEC2", "boxusage:p5.48xlarge")] == pytest.approx((2, 3.0, 10.0))
    assert sum(rows for rows, _, _ in lines.values()) == 5


def test_hash_grouping_with_a_breakdown_key(tmp_path: Path) -> None:
    """``--by service`` adds the key to the hashed keys: AmazonS3 0.0000004 + 1.5, AmazonS
    2.25, AmazonEC2 0 + 3.0 billed and 7.0 + 3.0 effective."""
    s = read_bill(_bill(tmp_path / "bill.parquet"), by="service")
    got = {r.key: (r.rows, r.billed_cost, r.effective_cost) for r in s.breakdown}
    assert got == {
        "AmazonS3": pytest.approx((2, 1.5000004, 1.5000004)),
        "AmazonS": pytest.approx((1, 2.25, 2.25)),
        "AmazonEC2": pytest.approx((2, 3.0, 10.0)),
    }
