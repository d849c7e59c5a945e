"""The real FOCUS 1.0 sample (FinOps Foundation, CC BY 4.0), checked with the csv module."""

from __future__ import annotations

import csv
import re
from decimal import Decimal

import pytest
from tests.bills.conftest import FOCUS_SAMPLE

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import BILL_CATEGORIES, read_bill


def _rows() -> list[dict[str, str]]:
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _exact_sum(rows: list[dict[str, str]]) -> Decimal:
    """BilledCost summed exactly, as written (at most 11 decimals in the sample)."""
    return sum((Decimal(r["BilledCost"]) for r in rows), Decimal(0))


@pytest.fixture(scope="module")
def summary():  # type: ignore[no-untyped-def]
    """The sample read once with DuckDB."""
    return read_bill(FOCUS_SAMPLE)


def test_format_rows_and_currency(summary) -> None:  # type: ignore[no-untyped-def]
    """1,000 data rows of FOCUS 1.0 (no 1.1/1.2 columns), all in USD (sample README)."""
    assert summary.format == "focus-1.0"
    assert summary.rows == 1000
    assert summary.currency == "USD"


def test_total_reconciles_with_the_file(summary) -> None:  # type: ignore[no-untyped-def]
    """Billed total is the file's exact sum of BilledCost: text is parsed as a 12-place
    decimal and summed in whole 1e-12 units (README, "Money types"), and the sample's amounts
    have at most 11 decimals; computed here with Python's decimal module: 20.52022672899."""
    exact = _exact_sum(_rows())
    assert exact == Decimal("20.52022672899")
    assert summary.billed_cost == float(exact)
    assert sum(summary.by_category.values()) == pytest.approx(summary.billed_cost, abs=1e-9)
    assert sum(summary.rows_by_category.values()) == 1000
    assert set(summary.by_category) == set(BILL_CATEGORIES)


def test_gpu_compute_is_the_g5_and_g3_instance_hours(summary) -> None:  # type: ignore[no-untyped-def]
    """GPU compute = 8 g5.4xlarge rows + 2 g3.4xlarge rows, inspected by hand.

    g5.4xlarge: 5 full hours × $1.624 = 8.12, plus partial hours 0.480884264 (Id 2313096),
    1.110635736 (Id 3455150) and 0.492162944 (Id 4517260): 8.12 + 2.083682944 = 10.203682944.
    g3.4xlarge: 1.92280038 (the two rows' BilledCost, summed below with the csv module).
    """
    g3 = sum(
        (
            Decimal(r["BilledCost"])
            for r in _rows()
            if "g3.4xlarge Instance Hour" in r["ChargeDescription"]
        ),
        Decimal(0),
    )
    assert g3 == Decimal("1.92280038000")
    assert summary.gpu_compute_cost == pytest.approx(10.203682944 + 1.92280038, abs=1e-9)
    hours = sum(
        float(r["ConsumedQuantity"])
        for r in _rows()
        if r["ChargeDescription"].endswith(("g5.4xlarge Instance Hour", "g3.4xlarge Instance Hour"))
    )
    assert summary.gpu_instance_hours == pytest.approx(hours, abs=1e-9)
    assert summary.hidden_multiplier == pytest.approx(
        summary.billed_cost / (10.203682944 + 1.92280038), rel=1e-12
    )


def test_credit_row(summary) -> None:  # type: ignore[no-untyped-def]
    """The one ChargeCategory=Credit row (Id 2555992, -2.6137) is the credit category."""
    assert summary.rows_by_category["credit"] == 1
    assert summary.by_category["credit"] == pytest.approx(-2.6137, abs=1e-12)


def test_monitoring_is_every_cloudwatch_row(summary) -> None:  # type: ignore[no-untyped-def]
    """CloudWatch has 63 rows in the sample (README profile); all and only those are monitoring."""
    cw = [r for r in _rows() if r["ServiceName"] == "AmazonCloudWatch"]
    assert len(cw) == 63
    assert summary.rows_by_category["monitoring"] == 63
    # Each row rounded to 1e-9 (nano-units), so within 63 × 5e-10 of the exact sum.
    assert summary.by_category["monitoring"] == float(_exact_sum(cw))


def test_data_transfer_matches_descriptions(summary) -> None:  # type: ignore[no-untyped-def]
    """Transfer rows are those whose description says data transfer/bandwidth, or names a transfer
    usage type (the sample has no x_UsageType: "USD 0.02 per GB for EUN1-AWS-Out-Bytes"), counted
    from the CSV: 547 by the words and 8 more by the usage-type names (ELB, EC2, S3, VPC, Step
    Functions), which were classified under their service before."""
    words = ("data transfer", "bandwidth", "transfer out")
    named = re.compile(r"datatransfer-|-(out|in)-bytes\b|interzone-(in|out)\b")
    usage = [r for r in _rows() if r["ChargeCategory"] == "Usage"]
    by_words = [r for r in usage if any(w in r["ChargeDescription"].lower() for w in words)]
    by_name = [
        r for r in usage if r not in by_words and named.search(r["ChargeDescription"].lower())
    ]
    assert (len(by_words), len(by_name)) == (547, 8)
    assert summary.rows_by_category["data_transfer"] == len(by_words) + len(by_name)


def test_nat_and_ipv4_are_networking(summary) -> None:  # type: ignore[no-untyped-def]
    """NAT gateway hours/GB and public IPv4 hours land in networking, not compute or transfer."""
    nat_ip = [
        r
        for r in _rows()
        if any(w in r["ChargeDescription"] for w in ("NAT Gateway", "public IPv4"))
    ]
    assert len(nat_ip) == 4 + 9 + 4 + 38  # NAT GB, NAT hours, idle IPv4, in-use IPv4
    items = {(x.category, x.item) for x in summary.top_lines}
    assert ("networking", "$0.045 per nat gateway hour") in items
    assert summary.by_category["networking"] >= sum(float(r["BilledCost"]) for r in nat_ip) - 1e-9


def test_uncategorized_rows_are_counted_in_other(summary) -> None:  # type: ignore[no-untyped-def]
    """Rows no rule recognises are reported and included in ``other``, never dropped."""
    assert summary.uncategorized_rows > 0
    assert summary.uncategorized_cost <= summary.by_category["other"] + 1e-12


def test_container_registry_storage_is_storage(summary) -> None:  # type: ignore[no-untyped-def]
    """The sample's 5 ECR rows ("$0.10 per GB-month of data storage", ServiceCategory "Other")
    were uncategorized; they are the training images' storage. Of the ServiceCategory "Other"
    rows, the ECS ones are transfer or Fargate compute and EKS is orchestration, so the one row
    nothing identifies is the Red Hat OpenShift marketplace fee."""
    ecr = [r for r in _rows() if "Container Registry" in r["ServiceName"]]
    assert len(ecr) == 5
    assert {r["ServiceCategory"] for r in ecr} == {"Other"}
    (marketplace,) = [r for r in _rows() if r["ServiceName"] == "Red Hat OpenShift Service on AWS"]
    assert summary.uncategorized_rows == 1
    assert summary.uncategorized_cost == pytest.approx(float(marketplace["BilledCost"]), abs=1e-9)


def test_breakdown_by_day_sums_to_total() -> None:
    """``by='day'`` groups on the date part of 'YYYY-MM-DD HH:MM:SS' timestamps."""
    s = read_bill(FOCUS_SAMPLE, by="day")
    days = {r["ChargePeriodStart"][:10] for r in _rows()}
    assert {b.key for b in s.breakdown} == days
    assert sum(b.rows for b in s.breakdown) == 1000
    assert sum(b.billed_cost for b in s.breakdown) == pytest.approx(s.billed_cost, abs=1e-9)


def test_breakdown_by_tag_reads_the_json_tags() -> None:
    """``tag:application`` reads the key from the Tags JSON column; untagged rows are '(none)'."""
    s = read_bill(FOCUS_SAMPLE, by="tag:application")
    tagged = [r for r in _rows() if '"application": "BrightLensMatrix"' in r["Tags"]]
    row = next(b for b in s.breakdown if b.key == "BrightLensMatrix")
    assert row.rows == len(tagged)
    assert sum(b.rows for b in s.breakdown) == 1000


def test_parquet_gives_the_same_summary(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The same rows as typed Parquet (doubles, nulls) classify identically to the CSV."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = _rows()
    numeric = {"BilledCost", "EffectiveCost", "ListCost", "ConsumedQuantity", "PricingQuantity"}

    def val(c: str, v: str) -> object:
        if v in ("NULL", ""):
            return None
        return float(v) if c in numeric else v

    table = pa.table({c: [val(c, r[c]) for r in rows] for c in rows[0]})
    path = tmp_path / "focus.parquet"
    pq.write_table(table, path)
    a, b = read_bill(FOCUS_SAMPLE), read_bill(path)
    assert b.rows == a.rows == 1000
    assert dict(b.rows_by_category) == dict(a.rows_by_category)
    for cat in BILL_CATEGORIES:
        # The text is summed exactly; a double is rounded to 1e-9 per row (README, "Money
        # types"): at most 5e-10 a row apart, plus the floats' last digit.
        bound = a.rows_by_category[cat] * 5e-10 + 1e-12
        assert b.by_category[cat] == pytest.approx(a.by_category[cat], abs=bound)
