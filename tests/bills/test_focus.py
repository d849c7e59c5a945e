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


_GCP_HEADER = (
    "BilledCost,EffectiveCost,ListCost,BillingCurrency,ChargeCategory,ServiceCategory,"
    "ServiceName,ChargePeriodStart,ChargePeriodEnd,BillingPeriodStart,BillingPeriodEnd,"
    "BillingAccountId,ProviderName,ChargeDescription,ConsumedUnit,ConsumedQuantity,PricingUnit,"
    "PricingQuantity,PricingCategory,SkuId,ResourceName"
)


def _gcp_row(cost: str, service_category: str, service: str, desc: str, qty: str) -> str:
    return (
        f"{cost},{cost},{cost},USD,Usage,{service_category},{service},2025-03-05T00:00:00Z,"
        "2025-03-05T01:00:00Z,2025-03-01T00:00:00Z,2025-04-01T00:00:00Z,01AB-23CD-45EF,"
        f"Google Cloud,{desc},seconds,{float(qty) * 3600:g},hour,{qty},Standard,sku,vm-1"
    )


def test_google_cloud_gpu_skus_are_gpu_compute_without_instance_hours(tmp_path: Path) -> None:
    """Was: a Google Cloud bill's H100 rows were compute but not GPU compute ("no GPU instance
    usage"). Google Cloud bills an accelerator VM as SKUs: GPUs per GPU-hour and the A3
    machine's cores and memory per vCPU- and GB-hour. GPU compute = 80.00 (8 GPU-hours) +
    8.00 (208 vCPU-hours) + 2.00 (1,872 GB-hours) = 90.00; an N2 core (5.00) and storage (3.00)
    are not. Total 98.00, multiplier 98 / 90. None of those quantities is an instance-hour, so
    ``gpu_instance_hours`` stays 0 and a warning says why."""
    rows = [
        _gcp_row("80.00", "Compute", "Compute Engine", "Nvidia H100 80GB GPU running in Americas",
                 "8"),
        _gcp_row("8.00", "Compute", "Compute Engine", "A3 Instance Core running in Americas",
                 "208"),
        _gcp_row("2.00", "Compute", "Compute Engine", "A3 Instance Ram running in Americas",
                 "1872"),
        _gcp_row("5.00", "Compute", "Compute Engine", "N2 Instance Core running in Americas",
                 "32"),
        _gcp_row("3.00", "Storage", "Cloud Storage", "Standard Storage US Multi-region", "1"),
    ]  # fmt: skip
    path = tmp_path / "gcp.csv"
    path.write_text("\n".join([_GCP_HEADER, *rows]) + "\n", encoding="utf-8")
    s = read_bill(path)
    assert s.billed_cost == pytest.approx(98.00, abs=1e-9)
    assert s.gpu_compute_cost == pytest.approx(90.00, abs=1e-9)
    assert s.gpu_instance_hours == 0
    assert s.hidden_multiplier == pytest.approx(98.00 / 90.00)
    assert any("instance-hours cannot be read" in w for w in s.warnings)


def test_google_cloud_spot_tpu_and_mega_skus_are_gpu_compute(tmp_path: Path) -> None:
    """Was: only on-demand descriptions starting "Nvidia …" or "A3 Instance …" counted, so the
    Spot/Preemptible, A3 Mega and TPU SKUs of the same VMs were left out of GPU compute and
    inflated the multiplier. Six rows of 10.00 each, all GPU compute, plus storage 5.00:
    multiplier 65 / 60."""
    descs = [
        "Spot Preemptible Nvidia H100 80GB GPU running in Americas",
        "Nvidia Tesla A100 GPU attached to Spot Preemptible VMs running in Americas",
        "Spot Preemptible A3 Instance Core running in Americas",
        "A3Mega Instance Core running in Americas",
        "TPU v5p chip running in Americas",
        "Preemptible TPU v5p chip running in Americas",
    ]
    rows = [_gcp_row("10.00", "Compute", "Compute Engine", d, "1") for d in descs]
    rows.append(_gcp_row("5.00", "Storage", "Cloud Storage", "Standard Storage US", "1"))
    path = tmp_path / "gcp.csv"
    path.write_text("\n".join([_GCP_HEADER, *rows]) + "\n", encoding="utf-8")
    s = read_bill(path)
    assert s.gpu_compute_cost == pytest.approx(60.00, abs=1e-9)
    assert s.hidden_multiplier == pytest.approx(65.00 / 60.00)
