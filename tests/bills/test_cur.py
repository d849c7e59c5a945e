"""AWS CUR 2.0: the hand-written GPU training month, with every sum worked out by hand.

The 24 rows of ``tests/data/bills/cur2_gpu_month.csv`` (prices: REFERENCE §4.4):

compute on-demand  p5.48xlarge 100 h × 55.04 = 5,504.00; m5.xlarge 720 h × 0.192 = 138.24
compute spot       USE2-SpotUsage:p5.48xlarge 50 h × 24.00 = 1,200.00
compute committed  SP-covered 200 h = 11,008.00, negation −11,008.00, SP fee 720 h × 10 = 7,200.00
storage            EBS gp3 80.00 + FSx 174.00 + S3 PUT 10.00 + GET 4.00 + S3 GB-mo 115.00
                   + refund of S3 storage −15.00 (a refund keeps its category) = 368.00
data_transfer      inter-AZ out 30.00 + in 30.00 + internet egress 9.00 = 69.00
networking         NAT hours 32.40 + NAT GB 9.00 + public IPv4 14.40 = 55.80
monitoring         CloudWatch metrics 30.00 + logs ingest 10.00 = 40.00
orchestration      EKS 720 h × 0.10 = 72.00
discount −50.00, credit −500.00, tax 100.00
"""

from __future__ import annotations

import pytest
from tests.bills.conftest import CUR_EXPORT, CUR_MONTH

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import read_bill

ON_DEMAND = 5504.00 + 138.24
SPOT = 1200.00
COMMITTED = 11008.00 - 11008.00 + 7200.00
COMPUTE = ON_DEMAND + SPOT + COMMITTED  # 14,042.24
TOTAL = COMPUTE + 368.00 + 69.00 + 55.80 + 40.00 + 72.00 - 50.00 - 500.00 + 100.00  # 14,197.04


@pytest.fixture(scope="module")
def month():  # type: ignore[no-untyped-def]
    """The CSV read once."""
    return read_bill(CUR_MONTH)


def test_categories_by_hand(month) -> None:  # type: ignore[no-untyped-def]
    """Every category equals the hand sum in the module docstring."""
    assert month.format == "cur-2.0"
    assert month.rows == 24
    expected = {
        "compute": COMPUTE,
        "storage": 368.00,
        "data_transfer": 69.00,
        "networking": 55.80,
        "monitoring": 40.00,
        "orchestration": 72.00,
        "support": 0.0,
        "discount": -50.00,
        "credit": -500.00,
        "tax": 100.00,
        "other": 0.0,
    }
    assert dict(month.by_category) == pytest.approx(expected, abs=1e-9)
    assert month.billed_cost == pytest.approx(TOTAL, abs=1e-9)
    assert month.billed_cost == pytest.approx(14197.04, abs=1e-9)
    assert month.uncategorized_rows == 0


def test_compute_split_by_purchase_option(month) -> None:  # type: ignore[no-untyped-def]
    """On-demand 5,642.24; spot 1,200.00 (USE2- prefix stripped); committed nets to the SP fee."""
    assert dict(month.compute_by_option) == pytest.approx(
        {"on_demand": 5642.24, "spot": 1200.00, "committed": 7200.00}, abs=1e-9
    )


def test_gpu_compute_hours_and_multiplier(month) -> None:  # type: ignore[no-untyped-def]
    """GPU compute = 5,504 + 1,200 + (11,008 − 11,008) + the SP fee 7,200 (it covered only
    p5 usage) = 13,904; hours 100 + 50 + 200 = 350 (the negation's 200 h are not counted
    twice); multiplier 14,197.04 / 13,904."""
    assert month.gpu_compute_cost == pytest.approx(13904.00, abs=1e-9)
    assert month.gpu_instance_hours == pytest.approx(350.0, abs=1e-12)
    assert month.hidden_multiplier == pytest.approx(14197.04 / 13904.00, rel=1e-12)


def test_effective_and_list_cost(month) -> None:  # type: ignore[no-untyped-def]
    """Effective: SP-covered usage at its SP cost 7,000, negation 0, fee's unused part
    7,200 − 7,000 = 200; so committed compute is 7,200 amortised as well.
    List: public on-demand cost, or the billed cost where empty (credit, discount, refund,
    tax: −500 − 50 − 15 + 100): 5,504 + 2,752 + 11,008 + 0 + 0 + 138.24 + 80 + 174 + 10 + 4
    + 115 + 30 + 30 + 9 + 32.40 + 9 + 14.40 + 30 + 10 + 72 − 465 = 19,557.04."""
    assert month.effective_by_category["compute"] == pytest.approx(
        5504.00 + 1200.00 + 7000.00 + 0.0 + 200.00 + 138.24, abs=1e-9
    )
    assert month.list_cost == pytest.approx(19557.04, abs=1e-9)


def test_period_from_billing_columns(month) -> None:  # type: ignore[no-untyped-def]
    """The billing period comes from bill_billing_period_start/end_date ('…T00:00:00.000Z')."""
    assert (month.period_start, month.period_end) == ("2026-04-01", "2026-05-01")


def test_tag_breakdown_uses_the_user_prefix() -> None:
    """``tag:project`` finds CUR 2.0's ``user_project`` key: p5 rows 5,504 + 1,200 + 11,008
    − 11,008, EBS 80, FSx 174 = 6,958.00 over 6 rows."""
    s = read_bill(CUR_MONTH, by="tag:project")
    llm = next(r for r in s.breakdown if r.key == "llm")
    assert (llm.rows, llm.billed_cost) == (6, pytest.approx(6958.00, abs=1e-9))
    none = next(r for r in s.breakdown if r.key == "(none)")
    assert none.rows == 18


def test_export_folder_with_manifest_equals_the_csv(month) -> None:  # type: ignore[no-untyped-def]
    """A Data Exports folder (manifest + two csv.gz parts) reads as the same 24 rows."""
    s = read_bill(CUR_EXPORT)
    assert len(s.files) == 2
    assert all(f.endswith(".csv.gz") for f in s.files)
    assert s.rows == 24
    assert dict(s.by_category) == pytest.approx(dict(month.by_category), abs=1e-9)


def test_explaining_lines(month) -> None:  # type: ignore[no-untyped-def]
    """The largest storage line is FSx 174.00, and lines keep their region-stripped usage type."""
    storage = month.lines_for("storage")
    assert storage[0].service == "AmazonFSx"
    assert storage[0].billed_cost == pytest.approx(174.00)
    assert storage[0].item == "lustre-persistentssd-125-storage"


def _with_net_cost(tmp_path, net_of):  # type: ignore[no-untyped-def]
    """The month with a ``line_item_net_unblended_cost`` column (``net_of(row)`` -> text)."""
    import csv

    with CUR_MONTH.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["line_item_net_unblended_cost"] = net_of(r)
    out = tmp_path / "net.csv"
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return out, rows


def test_net_unblended_cost_is_the_billed_cost(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Was: the net column was ignored, so an account whose EDP discount CUR 2.0 puts in the
    net columns (not in discount rows) read its gross cost as the invoice. BilledCost is the
    net unblended cost where a row has one, else the unblended cost (FOCUS converter,
    REFERENCE §1.6). A 5% discount on the on-demand p5 hours only (5,504.00 → 5,228.80), the
    other rows' net cost empty: billed 14,197.04 − 275.20 = 13,921.84; on-demand compute
    5,228.80 + 138.24 = 5,367.04; effective follows the billed cost on that row."""
    path, _ = _with_net_cost(
        tmp_path, lambda r: "5228.80" if r["line_item_unblended_cost"] == "5504.00" else ""
    )
    s = read_bill(path)
    assert s.billed_cost == pytest.approx(TOTAL - 275.20, abs=1e-9)
    assert s.compute_by_option["on_demand"] == pytest.approx(5228.80 + 138.24, abs=1e-9)
    assert s.effective_by_category["compute"] == pytest.approx(
        5228.80 + 1200.00 + 7000.00 + 0.0 + 200.00 + 138.24, abs=1e-9
    )


def test_net_unblended_cost_on_every_row_sums_to_the_net_total(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every row with a net cost of 90% of its unblended cost (tax, credit and negation
    included, to test the sum, not AWS's discount rules): billed = 0.9 × 14,197.04."""
    from decimal import Decimal

    path, rows = _with_net_cost(
        tmp_path, lambda r: str(Decimal(r["line_item_unblended_cost"]) * Decimal("0.9"))
    )
    assert len(rows) == 24
    assert read_bill(path).billed_cost == pytest.approx(0.9 * TOTAL, abs=1e-9)


def test_search_streaming_gr6_and_ebs_optimized_rows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Four rows added to the month, each once misfiled:

    * ``AmazonES`` (OpenSearch's product code) ``ESInstance:r6g.large`` 10.00 and ``AmazonMSK``
      ``USE1-Kafka.m5.large`` 7.00 were compute: they are other (databases and streaming).
    * ``BoxUsage:gr6.4xlarge`` (NVIDIA L4) 20 h, 25.00, was not a GPU instance: GPU compute
      13,904 + 25 = 13,929, hours 350 + 20 = 370.
    * ``EBSOptimized:p3.2xlarge`` 20 h, 0.50, was storage ("EBS" in its description): it is
      the instance's surcharge, compute (GPU compute 13,929.50) whose hours are the instance's
      own BoxUsage rows, so it adds none.
    Compute 14,042.24 + 25.00 + 0.50 = 14,067.74; other 17.00.
    """
    import csv

    with CUR_MONTH.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    first = rows[0]
    added = [
        ("AmazonES", "ESInstance:r6g.large", "", "10", "10.00", "$1 per r6g.large hour"),
        ("AmazonMSK", "USE1-Kafka.m5.large", "", "10", "7.00", "$0.70 per Kafka m5.large hour"),
        ("AmazonEC2", "BoxUsage:gr6.4xlarge", "gr6.4xlarge", "20", "25.00",
         "$1.25 per On Demand Linux gr6.4xlarge Instance Hour"),
        ("AmazonEC2", "EBSOptimized:p3.2xlarge", "p3.2xlarge", "20", "0.50",
         "$0.025 per hour for EBS Optimized p3.2xlarge Instance"),
    ]  # fmt: skip
    for code, usage_type, instance, hours, cost, desc in added:
        rows.append({
            **first,
            "line_item_product_code": code,
            "line_item_usage_type": usage_type,
            "product_instance_type": instance,
            "line_item_usage_amount": hours,
            "line_item_unblended_cost": cost,
            "pricing_public_on_demand_cost": cost,
            "line_item_line_item_description": desc,
            "resource_tags": "",
        })  # fmt: skip
    path = tmp_path / "more.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(first))
        w.writeheader()
        w.writerows(rows)
    s = read_bill(path)
    assert s.by_category["other"] == pytest.approx(17.00, abs=1e-9)
    assert s.by_category["compute"] == pytest.approx(COMPUTE + 25.00 + 0.50, abs=1e-9)
    assert s.gpu_compute_cost == pytest.approx(13904.00 + 25.00 + 0.50, abs=1e-9)
    assert s.gpu_instance_hours == pytest.approx(370.0, abs=1e-12)
