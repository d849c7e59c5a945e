"""Output consistency of the bill reader: numbers checked against hand arithmetic or an
independent DuckDB query over the same file, never against trainbill's own output.

Each defect test builds a small FOCUS or CUR 2.0 file in ``tmp_path``.
"""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest
from tests.bills.conftest import CUR_MONTH, FOCUS_SAMPLE, staged_queries

pytest.importorskip("ibis")
duckdb = pytest.importorskip("duckdb")

from trainbill.bills import read_bill

_FOCUS_COLS = [
    "BilledCost", "EffectiveCost", "ListCost", "BillingCurrency", "ChargeCategory",
    "ServiceCategory", "ServiceName", "ChargePeriodStart", "BillingPeriodStart",
    "BillingPeriodEnd", "ChargeDescription", "PricingCategory", "CommitmentDiscountId",
    "ConsumedQuantity", "ConsumedUnit", "x_UsageType",
]  # fmt: skip
_CUR_COLS = [
    "bill_billing_period_start_date", "bill_billing_period_end_date",
    "line_item_usage_start_date", "line_item_line_item_type", "line_item_product_code",
    "line_item_usage_type", "line_item_line_item_description", "line_item_usage_amount",
    "line_item_currency_code", "line_item_unblended_cost", "pricing_public_on_demand_cost",
    "pricing_unit", "product_instance_type", "savings_plan_savings_plan_a_r_n",
    "reservation_reservation_a_r_n",
]  # fmt: skip


def _write(
    path: Path, columns: list[str], base: dict[str, str], rows: list[dict[str, str]]
) -> Path:
    """A bill CSV: each row is ``base`` overridden by the row's own values."""
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, restval="")
        w.writeheader()
        for r in rows:
            w.writerow({**base, **r})
    return path


def _focus(path: Path, rows: list[dict[str, str]]) -> Path:
    """FOCUS rows in USD for April 2026; EffectiveCost and ListCost default to BilledCost."""
    base = {
        "BillingCurrency": "USD",
        "ChargeCategory": "Usage",
        "ChargePeriodStart": "2026-04-02T00:00:00Z",
        "BillingPeriodStart": "2026-04-01T00:00:00Z",
        "BillingPeriodEnd": "2026-05-01T00:00:00Z",
        "PricingCategory": "Standard",
    }
    return _write(
        path,
        _FOCUS_COLS,
        base,
        [{"EffectiveCost": r["BilledCost"], "ListCost": r["BilledCost"], **r} for r in rows],
    )


def _cur(path: Path, rows: list[dict[str, str]]) -> Path:
    """CUR 2.0 usage rows in USD for April 2026."""
    base = {
        "bill_billing_period_start_date": "2026-04-01T00:00:00.000Z",
        "bill_billing_period_end_date": "2026-05-01T00:00:00.000Z",
        "line_item_usage_start_date": "2026-04-02T00:00:00.000Z",
        "line_item_currency_code": "USD", "line_item_line_item_type": "Usage",
    }  # fmt: skip
    return _write(path, _CUR_COLS, base, rows)


# --- defect 1: SageMaker GPU hours in FOCUS landed in orchestration --------------------------


def test_focus_sagemaker_gpu_training_is_gpu_compute(tmp_path: Path) -> None:
    """A FOCUS row with ``x_UsageType`` ``USE1-Train:ml.p5.48xlarge`` is SageMaker GPU training:
    rule 10 of ``_classify`` makes it compute (CUR already did). Before the fix the FOCUS map
    found no instance type (its patterns want ``…Usage:``), so the $200 went to orchestration
    and the multiplier had no GPU compute at all."""
    bill = _focus(
        tmp_path / "sm.csv",
        [
            {"ServiceName": "Amazon SageMaker", "ServiceCategory": "AI and Machine Learning",
             "x_UsageType": "USE1-Train:ml.p5.48xlarge", "ChargeDescription": "Training",
             "BilledCost": "200", "ConsumedQuantity": "2", "ConsumedUnit": "Hours"},
            {"ServiceName": "Amazon SageMaker", "ServiceCategory": "AI and Machine Learning",
             "x_UsageType": "USE1-Notebk:ml.t3.medium", "ChargeDescription": "Notebook",
             "BilledCost": "3", "ConsumedQuantity": "60", "ConsumedUnit": "Hours"},
            {"ServiceName": "Amazon Elastic Compute Cloud", "ServiceCategory": "Storage",
             "x_UsageType": "EBS:VolumeUsage.gp3", "ChargeDescription": "gp3",
             "BilledCost": "8"},
        ],
    )  # fmt: skip
    s = read_bill(bill)
    assert s.by_category["compute"] == pytest.approx(200.0)  # the ml.p5 hours
    assert s.by_category["orchestration"] == pytest.approx(3.0)  # the ml.t3 notebook only
    assert s.gpu_instance_hours == pytest.approx(2.0)
    assert s.gpu_compute_cost == pytest.approx(200.0)
    assert s.hidden_multiplier == pytest.approx((200 + 3 + 8) / 200)


# --- defect 2: commitment fees pooled across commitments --------------------------------------


def test_fee_attribution_is_per_commitment(tmp_path: Path) -> None:
    """A Savings Plan (fee 55) covers only p5 hours (list 110); an RI (fee 900) covers only m5
    (list 1000). GPU compute = GPU usage + the SP fee, none of the RI fee:
    usage 110 (covered) − 110 (negation) + 300 (on-demand p5) = 300; + 55 = 355.
    Before, one pooled share 110 / 1110 of all fees (955) was added: 300 + 94.64 = 394.64."""
    sp = "arn:aws:savingsplans::1:savingsplan/sp-1"
    ri = "arn:aws:ec2:us-east-1:1:reserved-instances/ri-1"
    bill = _cur(
        tmp_path / "cur.csv",
        [
            {
                "line_item_line_item_type": "SavingsPlanCoveredUsage",
                "line_item_product_code": "AmazonEC2",
                "line_item_usage_type": "BoxUsage:p5.48xlarge",
                "line_item_usage_amount": "2",
                "line_item_unblended_cost": "110",
                "pricing_public_on_demand_cost": "110",
                "pricing_unit": "Hrs",
                "product_instance_type": "p5.48xlarge",
                "savings_plan_savings_plan_a_r_n": sp,
            },
            {
                "line_item_line_item_type": "SavingsPlanNegation",
                "line_item_product_code": "AmazonEC2",
                "line_item_usage_type": "BoxUsage:p5.48xlarge",
                "line_item_usage_amount": "2",
                "line_item_unblended_cost": "-110",
                "pricing_public_on_demand_cost": "0",
                "pricing_unit": "Hrs",
                "product_instance_type": "p5.48xlarge",
                "savings_plan_savings_plan_a_r_n": sp,
            },
            {
                "line_item_line_item_type": "SavingsPlanRecurringFee",
                "line_item_product_code": "ComputeSavingsPlans",
                "line_item_usage_type": "ComputeSP:1yrNoUpfront",
                "line_item_usage_amount": "720",
                "line_item_unblended_cost": "55",
                "pricing_public_on_demand_cost": "0",
                "pricing_unit": "Hrs",
                "savings_plan_savings_plan_a_r_n": sp,
            },
            {
                "line_item_line_item_type": "DiscountedUsage",
                "line_item_product_code": "AmazonEC2",
                "line_item_usage_type": "BoxUsage:m5.large",
                "line_item_usage_amount": "1000",
                "line_item_unblended_cost": "0",
                "pricing_public_on_demand_cost": "1000",
                "pricing_unit": "Hrs",
                "product_instance_type": "m5.large",
                "reservation_reservation_a_r_n": ri,
            },
            {
                "line_item_line_item_type": "RIFee",
                "line_item_product_code": "AmazonEC2",
                "line_item_usage_type": "HeavyUsage:m5.large",
                "line_item_usage_amount": "1000",
                "line_item_unblended_cost": "900",
                "pricing_public_on_demand_cost": "0",
                "pricing_unit": "Hrs",
                "product_instance_type": "m5.large",
                "reservation_reservation_a_r_n": ri,
            },
            {
                "line_item_product_code": "AmazonEC2",
                "line_item_usage_type": "BoxUsage:p5.48xlarge",
                "line_item_usage_amount": "3",
                "line_item_unblended_cost": "300",
                "pricing_public_on_demand_cost": "300",
                "pricing_unit": "Hrs",
                "product_instance_type": "p5.48xlarge",
            },
        ],
    )
    s = read_bill(bill)
    assert s.billed_cost == pytest.approx(110 - 110 + 55 + 0 + 900 + 300)  # 1255
    assert s.gpu_instance_hours == pytest.approx(2 + 3)
    assert s.gpu_compute_cost == pytest.approx(355.0)
    assert s.hidden_multiplier == pytest.approx(1255 / 355)


def test_fee_without_covered_usage_uses_the_pooled_share(tmp_path: Path) -> None:
    """A fee whose commitment covered nothing on this bill is split like before, by all covered
    usage: SP-2 fee 40, SP-1 covers p5 list 100 and m5 list 100 → share 1/2 → 20; SP-1's own
    fee 60 × 100/200 = 30. GPU usage 0 (covered + negation): GPU compute 50."""
    sp1 = "arn:aws:savingsplans::1:savingsplan/sp-1"
    sp2 = "arn:aws:savingsplans::1:savingsplan/sp-2"

    def covered(it: str) -> list[dict[str, str]]:
        common = {"line_item_product_code": "AmazonEC2", "line_item_usage_type": f"BoxUsage:{it}",
                  "line_item_usage_amount": "1", "pricing_unit": "Hrs",
                  "product_instance_type": it, "savings_plan_savings_plan_a_r_n": sp1}  # fmt: skip
        return [
            {**common, "line_item_line_item_type": "SavingsPlanCoveredUsage",
             "line_item_unblended_cost": "100", "pricing_public_on_demand_cost": "100"},
            {**common, "line_item_line_item_type": "SavingsPlanNegation",
             "line_item_unblended_cost": "-100", "pricing_public_on_demand_cost": "0"},
        ]  # fmt: skip

    fee = {"line_item_line_item_type": "SavingsPlanRecurringFee",
           "line_item_product_code": "ComputeSavingsPlans", "line_item_usage_type": "ComputeSP",
           "pricing_unit": "Hrs"}  # fmt: skip
    bill = _cur(
        tmp_path / "cur.csv",
        [
            *covered("p5.48xlarge"),
            *covered("m5.large"),
            {**fee, "line_item_unblended_cost": "60", "savings_plan_savings_plan_a_r_n": sp1},
            {**fee, "line_item_unblended_cost": "40", "savings_plan_savings_plan_a_r_n": sp2},
        ],
    )
    assert read_bill(bill).gpu_compute_cost == pytest.approx(60 * 100 / 200 + 40 * 100 / 200)


# --- defect 3: CUR RIFee effective cost 0 when the unused-fee columns are absent -------------


def test_cur_rifee_effective_falls_back_to_unblended(tmp_path: Path) -> None:
    """REFERENCE §1.6 / cur.py: RIFee effective = unused upfront + unused recurring, and a
    missing input column falls back to the unblended cost. Without either column the fee's
    effective cost was 0: effective 100 (usage) + 0 instead of 100 + 900."""
    bill = _cur(
        tmp_path / "cur.csv",
        [
            {"line_item_product_code": "AmazonEC2", "line_item_usage_type": "BoxUsage:m5.large",
             "line_item_unblended_cost": "100", "pricing_unit": "Hrs"},
            {"line_item_line_item_type": "RIFee", "line_item_product_code": "AmazonEC2",
             "line_item_usage_type": "HeavyUsage:m5.large", "line_item_unblended_cost": "900",
             "reservation_reservation_a_r_n": "arn:aws:ec2:us-east-1:1:reserved-instances/ri-1"},
        ],
    )  # fmt: skip
    s = read_bill(bill)
    assert s.billed_cost == pytest.approx(1000.0)
    assert s.effective_cost == pytest.approx(100 + 900)


def test_cur_rifee_effective_uses_unused_columns_when_present(tmp_path: Path) -> None:
    """With the columns: unused upfront 30 + unused recurring 20 = 50 (one of them empty: the
    other alone)."""
    path = tmp_path / "cur.csv"
    cols = [*_CUR_COLS, "reservation_unused_amortized_upfront_fee_for_billing_period",
            "reservation_unused_recurring_fee"]  # fmt: skip
    base = {
        "bill_billing_period_start_date": "2026-04-01",
        "bill_billing_period_end_date": "2026-05-01",
        "line_item_usage_start_date": "2026-04-02",
        "line_item_currency_code": "USD",
        "line_item_line_item_type": "RIFee",
        "line_item_product_code": "AmazonEC2",
        "line_item_usage_type": "HeavyUsage:m5.large",
        "reservation_reservation_a_r_n": "arn:aws:ec2:us-east-1:1:reserved-instances/ri-1",
    }
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, restval="")
        w.writeheader()
        w.writerow({**base, "line_item_unblended_cost": "900",
                    "reservation_unused_amortized_upfront_fee_for_billing_period": "30",
                    "reservation_unused_recurring_fee": "20"})  # fmt: skip
        w.writerow({**base, "line_item_unblended_cost": "500",
                    "reservation_unused_recurring_fee": "7"})  # fmt: skip
    assert read_bill(path).effective_cost == pytest.approx(30 + 20 + 7)


# --- invariants (held before the fixes too) --------------------------------------------------


def _independent_totals(path: Path) -> tuple[int, Decimal, Decimal, Decimal]:
    con = duckdb.connect()

    def col(c: str) -> str:
        return f"sum(TRY_CAST(nullif(nullif(trim({c}), 'NULL'), '') AS DECIMAL(38, 12)))"

    row = con.execute(
        f"SELECT count(*), {col('BilledCost')}, {col('EffectiveCost')}, {col('ListCost')} "
        "FROM read_csv(?, all_varchar = true, header = true)",
        [str(path)],
    ).fetchone()
    con.close()
    return row[0], row[1], row[2], row[3]


def test_sample_totals_and_breakdowns_match_an_independent_query() -> None:
    rows, billed, effective, listed = _independent_totals(FOCUS_SAMPLE)
    s = read_bill(FOCUS_SAMPLE, by="day")
    assert s.rows == rows == sum(s.rows_by_category.values())
    assert s.billed_cost == pytest.approx(float(billed), abs=0.005)
    assert s.effective_cost == pytest.approx(float(effective), abs=0.005)
    assert s.list_cost == pytest.approx(float(listed), abs=0.005)
    assert sum(s.by_category.values()) == pytest.approx(s.billed_cost, abs=1e-9)
    assert s.uncategorized_rows <= s.rows_by_category["other"]
    assert abs(s.uncategorized_cost) <= abs(s.by_category["other"]) + 1e-9
    # --by day: keyed on ChargePeriodStart's date, every row once.
    con = duckdb.connect()
    per_day = dict(
        con.execute(
            "SELECT substr(ChargePeriodStart, 1, 10), count(*) "
            "FROM read_csv(?, all_varchar = true, header = true) GROUP BY 1",
            [str(FOCUS_SAMPLE)],
        ).fetchall()
    )
    con.close()
    assert {r.key: r.rows for r in s.breakdown} == per_day
    assert sum(r.billed_cost for r in s.breakdown) == pytest.approx(s.billed_cost, abs=1e-6)


def test_cur_month_hand_totals() -> None:
    """``cur2_gpu_month.csv`` by hand: compute = 5504 + 1200 + 11008 − 11008 + 7200 + 138.24;
    GPU compute = GPU usage (5504 + 1200 + 11008 − 11008) + the SP fee 7200 × 11008/11008."""
    s = read_bill(CUR_MONTH)
    assert s.by_category["compute"] == pytest.approx(14042.24)
    assert s.compute_by_option["committed"] == pytest.approx(7200.0)
    assert s.gpu_compute_cost == pytest.approx(6704 + 7200)
    assert s.gpu_instance_hours == pytest.approx(100 + 50 + 200)
    assert s.by_category["storage"] == pytest.approx(80 + 174 + 10 + 4 + 115 - 15)


# --- compare --basis effective explained lines by their billed cost -------------------------


def test_effective_basis_explains_lines_by_effective_cost(tmp_path: Path) -> None:
    """Savings-Plan-covered GPU hours bill $0 in FOCUS but carry $100 of effective (amortised)
    cost; on-demand CPU hours bill and cost $30. On the effective basis the compute category's
    largest line is the covered GPU usage at $100; before, lines were ranked and priced by billed
    cost, so it showed $0 (and a sixth-largest line could drop out entirely)."""
    bill = _focus(
        tmp_path / "sp.csv",
        [
            {
                "BilledCost": "0",
                "EffectiveCost": "100",
                "ListCost": "150",
                "ServiceCategory": "Compute",
                "ServiceName": "Amazon Elastic Compute Cloud",
                "PricingCategory": "Committed",
                "CommitmentDiscountId": "arn:aws:savingsplans::1:savingsplan/sp-1",
                "ChargeDescription": "p5.48xlarge covered by Savings Plan",
                "ConsumedQuantity": "2",
                "ConsumedUnit": "Hours",
                "x_UsageType": "USE1-BoxUsage:p5.48xlarge",
            },
            {
                "BilledCost": "30",
                "ServiceCategory": "Compute",
                "ServiceName": "Amazon Elastic Compute Cloud",
                "ChargeDescription": "$0.192 per On Demand Linux m5.xlarge Instance Hour",
                "ConsumedQuantity": "156",
                "ConsumedUnit": "Hours",
                "x_UsageType": "USE1-BoxUsage:m5.xlarge",
            },
        ],
    )
    s = read_bill(bill)
    billed = s.lines_for("compute")
    effective = s.lines_for("compute", "effective")
    assert billed[0].item.endswith("boxusage:m5.xlarge")  # the usage type, region prefix dropped
    assert billed[0].cost() == pytest.approx(30.0)
    assert effective[0].item.endswith("boxusage:p5.48xlarge")
    assert effective[0].cost("effective") == pytest.approx(100.0)  # 0 billed, 100 amortised


@pytest.mark.parametrize("by", ["day", "service", "resource", "tag:application"])
def test_a_breakdown_changes_nothing_else_and_reads_the_files_once(by: str) -> None:
    """With ``--by`` the summary is the breakdown's groups added up: every other field equals
    the plain read's, the breakdown adds up to the billed total exactly (money is whole
    1e-12 units; the FOCUS sample's text has at most 11 decimals, so exact: 20.52022672899),
    and the DuckDB plan scans the files once (it scanned them twice, doubling a CSV read)."""
    from trainbill.bills import summary as summary_mod

    plain = read_bill(FOCUS_SAMPLE).as_dict()
    split = read_bill(FOCUS_SAMPLE, by=by).as_dict()
    for key in ("breakdown", "by"):
        split.pop(key, None)
        plain.pop(key, None)
    assert split == plain
    s = read_bill(FOCUS_SAMPLE, by=by)
    total = sum((Decimal(repr(r.billed_cost)) for r in s.breakdown), Decimal(0))
    assert float(total) == pytest.approx(20.52022672899, abs=1e-9)
    assert s.billed_cost == 20.52022672899
    queries = staged_queries(FOCUS_SAMPLE, *summary_mod._parse_by(by))
    assert sum(name.startswith("scan:") for name in queries) == 1
    assert {"summary", "breakdown"} <= set(queries)
