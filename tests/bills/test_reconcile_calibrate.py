"""``compare`` (forecast vs bill) and ``fit_calibration`` (overheads per GPU node-hour)."""

from __future__ import annotations

import csv
import re
import tomllib
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from tests.bills.conftest import CUR_MONTH, FOCUS_SAMPLE

from trainbill.errors import BillError

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import (
    compare,
    fit_calibration,
    forecast_by_bill_category,
    read_bill,
    read_calibration,
    write_calibration,
)


@pytest.fixture(scope="module")
def month():  # type: ignore[no-untyped-def]
    """The hand-written CUR 2.0 GPU month (see test_cur.py for its sums)."""
    return read_bill(CUR_MONTH)


def test_compare_variances(month) -> None:  # type: ignore[no-untyped-def]
    """Forecast compute 10,000 + sync stall 2,000 vs actual 14,042.24: +2,042.24, +17.0%;
    storage forecast 400 vs 368: −32, −8%; largest gap is compute, then credit (−500)."""
    rec = compare({"compute": 10_000.0, "sync_stall": 2_000.0, "storage": 400.0}, month)
    rows = {r.category: r for r in rec.rows}
    assert rows["compute"].variance_usd == pytest.approx(2042.24, abs=1e-9)
    assert rows["compute"].variance_pct == pytest.approx(100 * 2042.24 / 12000, rel=1e-12)
    assert rows["storage"].variance_pct == pytest.approx(-8.0, abs=1e-9)
    assert rows["tax"].variance_pct is None  # nothing forecast
    assert [r.category for r in rec.largest] == ["compute", "credit", "tax"]
    assert rows["storage"].lines[0].service == "AmazonFSx"
    assert rec.actual_total == pytest.approx(14197.04, abs=1e-9)


def test_compare_warns_about_an_empty_bill(tmp_path: Path) -> None:
    """A header-only bill compares as actual 0 everywhere: said, not reported as -100%
    findings alone."""
    empty = tmp_path / "empty.csv"
    empty.write_text(CUR_MONTH.read_text(encoding="utf-8").splitlines()[0] + "\n")
    rec = compare({"compute": 1_000.0}, read_bill(empty))
    assert rec.actual_total == 0
    assert len(rec.warnings) == 1
    assert rec.warnings[0].startswith(f"{empty}: the bill has no rows")
    assert rec.as_dict()["warnings"] == list(rec.warnings)


def test_compare_warns_about_another_providers_rows(month) -> None:  # type: ignore[no-untyped-def]
    """The FOCUS sample mixes providers; counted here with the csv module, not the reader."""
    with FOCUS_SAMPLE.open(newline="", encoding="utf-8") as fh:
        providers = Counter(row["ProviderName"] for row in csv.DictReader(fh))
    bill = read_bill(FOCUS_SAMPLE)
    assert dict(bill.by_provider) == dict(providers)
    others = {k: n for k, n in providers.items() if k != "AWS"}  # Microsoft, Oracle
    (warning,) = compare({"compute": 1.0}, bill, provider="aws").warnings
    assert f"the plan is for aws but {sum(others.values())} of the bill's 1,000 rows" in warning
    for name, n in others.items():
        assert f"{name} ({n} rows)" in warning
    (warning,) = compare({"compute": 1.0}, bill, provider="gcp").warnings
    assert "the plan is for gcp but 1,000 of the bill's 1,000 rows" in warning
    assert compare({"compute": 1.0}, bill).warnings == ()  # no provider given: nothing to say
    # CUR is AWS's own format.
    assert compare({"compute": 1.0}, month, provider="aws").warnings == ()
    assert "but 24 of the bill's 24 rows" in compare({}, month, provider="azure").warnings[0]


def test_forecast_lines_fold_into_bill_categories() -> None:
    """Checkpoint stall is compute, checkpoint storage is storage, a discount nets into compute."""
    lines = [
        SimpleNamespace(category="compute", service_category="Compute", cost_usd=100.0),
        SimpleNamespace(category="checkpoint", service_category="Compute", cost_usd=5.0),
        SimpleNamespace(category="checkpoint", service_category="Storage", cost_usd=2.0),
        SimpleNamespace(category="discount", service_category="Compute", cost_usd=-30.0),
        SimpleNamespace(category="networking", service_category="Networking", cost_usd=1.5),
    ]
    out = forecast_by_bill_category(lines)
    assert out["compute"] == pytest.approx(100 + 5 - 30)
    assert out["storage"] == pytest.approx(2.0)
    assert out["networking"] == pytest.approx(1.5)


def test_calibration_factors_and_file(month, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Storage 368 / 350 GPU node-hours = 1.0514…; networking 55.80 / 350; the file round-trips
    and records the billing period 2026-04-01 → 2026-05-01."""
    now = datetime(2026, 5, 2, 10, 0, tzinfo=UTC)
    cal = fit_calibration([month], now=now)
    assert cal.factors_usd_per_node_hour["storage"] == pytest.approx(368 / 350, rel=1e-12)
    assert cal.factors_usd_per_node_hour["networking"] == pytest.approx(55.80 / 350, rel=1e-12)
    assert cal.factors_usd_per_node_hour["orchestration"] == pytest.approx(72 / 350, rel=1e-12)
    path = tmp_path / "calibration.toml"
    write_calibration(cal, path)
    raw = tomllib.loads(path.read_text(encoding="utf-8"))["calibration"]
    assert raw["kind"] == "bills"
    assert (raw["period_start"], raw["period_end"]) == (date(2026, 4, 1), date(2026, 5, 1))
    back = read_calibration(path)
    assert dict(back.factors_usd_per_node_hour) == pytest.approx(
        dict(cal.factors_usd_per_node_hour)
    )
    assert back.gpu_node_hours == 350.0
    # A CUR 2.0 bill is AWS's: the calibration records the cloud it may price.
    assert raw["providers"] == ["aws"]
    assert back.providers == ("aws",)
    with pytest.raises(BillError, match="already exists"):
        write_calibration(cal, path)
    assert read_calibration(path).created_at == now  # the refused write left the file intact


def test_calibration_needs_gpu_hours(tmp_path: Path) -> None:
    """A bill without GPU instance usage cannot calibrate per GPU node-hour."""
    path = tmp_path / "cpu.csv"
    lines = CUR_MONTH.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([lines[0], lines[6]]) + "\n", encoding="utf-8")  # m5.xlarge only
    with pytest.raises(BillError, match="no GPU instance-hours found"):
        fit_calibration([read_bill(path)])


def test_read_calibration_rejects_other_kinds(tmp_path: Path) -> None:
    """A profile calibration (top-level kind) is not a bills calibration."""
    path = tmp_path / "c.toml"
    path.write_text('kind = "profile"\nschema_version = 1\n', encoding="utf-8")
    with pytest.raises(BillError, match=r'calibration\.kind: expected "bills"'):
        read_calibration(path)


_VALID = """[calibration]
kind = "bills"
schema_version = 1
created_at = 2026-12-04T20:57:17Z
currency = "USD"
basis = "billed_cost"
gpu_node_hours = 350.0
gpu_compute_usd = 13904.0

[calibration.factors_usd_per_node_hour]
storage = 1.0514
"""


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        # 1 followed by 400 zeros is a TOML integer no float holds: was an OverflowError. The
        # input gate (trainbill._io.check_document) refuses it: its first 12 digits, 1 + 400 digits.
        ("gpu_node_hours = 350.0", "gpu_node_hours = 1" + "0" * 400,
         f"gpu_node_hours: 1{'0' * 11}… ({1 + 400} digits) is out of range"),
        ("storage = 1.0514", "storage = 1e300", "storage: must be <= 100,000"),
        ("storage = 1.0514", "", "factors_usd_per_node_hour: empty, so nothing to calibrate"),
        ("created_at = 2026-12-04T20:57:17Z", 'created_at = "yesterday"',
         "created_at: must be a TOML date-time"),
    ],
)  # fmt: skip
def test_a_broken_calibration_file_is_one_line(
    tmp_path: Path, old: str, new: str, said: str
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(_VALID, encoding="utf-8")
    assert read_calibration(path).factors_usd_per_node_hour["storage"] == 1.0514
    path.write_text(_VALID.replace(old, new), encoding="utf-8")
    with pytest.raises(BillError, match=re.escape(said)):
        read_calibration(path)


def test_a_calibration_pooling_several_clouds_says_so(tmp_path: Path) -> None:
    """The FOCUS sample holds AWS, Microsoft and Oracle rows (942 / 51 / 7): a calibration
    fitted from it pools their overheads. Allowed for an AWS plan (aws is among its clouds),
    but every forecast using it now says so (it was silent)."""
    from conftest import SEED
    from trainbill.calibration import calibrate
    from trainbill.catalog import load_catalog
    from trainbill.spec import load_plan

    cal = fit_calibration([read_bill(FOCUS_SAMPLE)])
    assert len(cal.providers) == 3
    c = calibrate(load_plan(SEED), load_catalog(), [cal])
    assert any("pools the overheads of" in x.text for x in c.cautions)
