"""forecast --calibration: measured MFU and bill-fitted overheads replace modelled values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import BILLS_CALIBRATION_HEAD, EXAMPLES, PROFILE_TOML, REPO, SEED, TODAY, run_argv
from trainbill.calibration import calibrate_catalog, forecast_calibrated, read_calibration_file
from trainbill.catalog import Catalog, Provenance
from trainbill.costs import price_arrays
from trainbill.errors import SpecError
from trainbill.forecasting import CautionKind, forecast
from trainbill.ledger import CATEGORIES
from trainbill.spec import load_plan, plan_from_dict

BILLS_TOML = (
    BILLS_CALIBRATION_HEAD
    + """
[calibration.factors_usd_per_node_hour]
storage = 2.0
networking = 0.5
orchestration = 1.0

[calibration.totals_usd]
storage = 200.0
networking = 50.0
orchestration = 100.0
"""
)


def _plan() -> dict[str, object]:
    return {
        "model": {"params": 7e9, "tokens": 1e11, "layers": 32, "d_model": 4096, "seq_len": 4096},
        "cluster": {"instance": "p5.48xlarge", "nodes": 8},
    }


def test_profile_mfu_sets_compute_hours(tmp_path: Path, catalog: Catalog) -> None:
    """Compute hours = (6·7e9·1e11 + 12·32·4096·4096·1e11) / (64 × 989e12 × 0.40) / 3600."""
    cal_file = tmp_path / "p.toml"
    cal_file.write_text(PROFILE_TOML)
    fc = forecast_calibrated(
        plan_from_dict(_plan()), catalog, [read_calibration_file(cal_file)], today=TODAY
    )
    flops = 6 * 7e9 * 1e11 + 12 * 32 * 4096 * 4096 * 1e11  # 4.844e21
    assert fc.usage.compute.hours == pytest.approx(flops / (64 * 989e12 * 0.40) / 3600)
    assert any("measured MFU 40.0%" in v for _, v in fc.usage.time.factors)


def test_profile_at_another_seq_len_is_read_at_the_plans(tmp_path: Path, catalog: Catalog) -> None:
    """A step measured at seq 1024 (MFU 40%, 7e9 params) applied to the plan at seq 4096: the
    same kernel speed on the work executed (causal attention at half its count).

    Per token, 32 layers × 4096: dense 6 · 7e9 = 4.2e10; attention 12 · 32 · 4096 · s counted,
    half of it executed. At s = 1024: counted 4.2e10 + 1.61061e9 = 4.361061e10, executed
    4.2e10 + 8.05306e8 = 4.280531e10, share 0.981535. At s = 4096: counted 4.2e10 + 6.44245e9
    = 4.844245e10, executed 4.2e10 + 3.22123e9 = 4.522123e10, share 0.933504. So the plan reads
    MFU 0.40 × 0.981535 / 0.933504 = 0.420581, and the hours are the counted 4.844245e21 FLOPs
    over 64 × 989e12 × 0.420581: the executed 4.522123e21 at 0.40 × 0.981535 of the peak.
    """
    cal_file = tmp_path / "p.toml"
    cal_file.write_text(PROFILE_TOML + "model_params = 7000000000\nseq_len = 1024\n")
    fc = forecast_calibrated(
        plan_from_dict(_plan()), catalog, [read_calibration_file(cal_file)], today=TODAY
    )
    share_1024 = (4.2e10 + 0.5 * 12 * 32 * 4096 * 1024) / (4.2e10 + 12 * 32 * 4096 * 1024)
    share_4096 = (4.2e10 + 0.5 * 12 * 32 * 4096 * 4096) / (4.2e10 + 12 * 32 * 4096 * 4096)
    assert (share_1024, share_4096) == (pytest.approx(0.981535, abs=1e-6),
                                        pytest.approx(0.933504, abs=1e-6))  # fmt: skip
    executed = (6 * 7e9 + 0.5 * 12 * 32 * 4096 * 4096) * 1e11
    hours = executed / (64 * 989e12 * 0.40 * share_1024) / 3600
    assert fc.usage.compute.hours == pytest.approx(hours)
    assert any("40.0% at seq 1,024, 42.1% at the plan's seq 4,096" in v for v in fc.warnings)


def test_profile_for_other_gpu_is_ignored(tmp_path: Path, catalog: Catalog) -> None:
    """A calibration measured on H100 does not change an A100 plan, and says so."""
    cal_file = tmp_path / "p.toml"
    cal_file.write_text(PROFILE_TOML)
    plan = _plan()
    plan["cluster"] = {"instance": "p4de.24xlarge", "nodes": 8}
    fc = forecast_calibrated(
        plan_from_dict(plan), catalog, [read_calibration_file(cal_file)], today=TODAY
    )
    assert any("profile calibration ignored" in w for w in fc.warnings)


def test_bill_factors_replace_overheads(tmp_path: Path, catalog: Catalog) -> None:
    """Storage = node-hours × $2.00, networking × $0.50; raw EC2 keeps no orchestration fee."""
    cal_file = tmp_path / "b.toml"
    cal_file.write_text(BILLS_TOML)
    plan = load_plan(SEED)
    fc = forecast_calibrated(plan, catalog, [read_calibration_file(cal_file)], today=TODAY)
    node_hours = fc.usage.nodes * fc.usage.wall_hours
    by = fc.ledger.by_category()
    assert by["storage"] == pytest.approx(2.0 * node_hours)
    assert by["networking"] == pytest.approx(0.5 * node_hours)
    assert by["orchestration"] == 0.0
    # Checkpoint S3 storage gives way to the bill's storage; the stall (time) stays.
    assert all(line.service_category != "Storage" for line in fc.ledger.in_category("checkpoint"))
    assert fc.ledger.in_category("checkpoint")
    assert sum(line.cost_usd for line in fc.ledger.lines) == pytest.approx(fc.total_usd)
    # The fitted lines say they come from bills, as a field; the modelled ones keep their prices'.
    fitted = [ln for ln in fc.ledger.lines if ln.provenance is Provenance.BILLS]
    assert {ln.category for ln in fitted} == {"storage", "networking"}
    assert all(ln.item.endswith("(calibrated from bills)") for ln in fitted)


def test_bill_rates_are_a_pricing_input_the_array_path_sees(
    tmp_path: Path, catalog: Catalog
) -> None:
    """On the calibrated catalog the plain forecast and the array pricing (what simulate and
    optimize run) give the calibrated bill: storage = node-hours × $2.00 in all three."""
    cal_file = tmp_path / "b.toml"
    cal_file.write_text(BILLS_TOML)
    cal = read_calibration_file(cal_file)
    plan = load_plan(SEED)
    calibrated = forecast_calibrated(plan, catalog, [cal], today=TODAY)
    priced = calibrate_catalog(catalog, [cal])
    plain = forecast(plan, priced, today=TODAY)
    assert plain.total_usd == pytest.approx(calibrated.total_usd, rel=1e-12)
    assert plain.cautions_of(CautionKind.CALIBRATION) == calibrated.cautions_of(
        CautionKind.CALIBRATION
    )
    total, cats = price_arrays(calibrated.usage, priced, by_category=True)
    assert cats is not None
    assert float(total) == pytest.approx(calibrated.total_usd, rel=1e-12)
    node_hours = calibrated.usage.nodes * calibrated.usage.wall_hours
    assert float(cats[CATEGORIES.index("storage")]) == pytest.approx(2.0 * node_hours)
    uncalibrated, _ = price_arrays(calibrated.usage, catalog)
    assert float(uncalibrated) != pytest.approx(calibrated.total_usd)


def test_a_later_bill_calibration_wins_for_the_categories_it_names(
    tmp_path: Path, catalog: Catalog
) -> None:
    """First file: storage $2.00, networking $0.50; second: storage $3.00 only. Storage is
    node-hours × $3.00, networking node-hours × $0.50, and each file gets its note."""
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text(BILLS_TOML)
    second.write_text(
        BILLS_TOML.replace("storage = 2.0\nnetworking = 0.5\norchestration = 1.0", "storage = 3.0")
        .replace("period_start = 2026-04-01", "period_start = 2026-06-01")
        .replace("period_end = 2026-05-01", "period_end = 2026-07-01")
    )
    cals = [read_calibration_file(first), read_calibration_file(second)]
    fc = forecast_calibrated(load_plan(SEED), catalog, cals, today=TODAY)
    node_hours = fc.usage.nodes * fc.usage.wall_hours
    by = fc.ledger.by_category()
    assert by["storage"] == pytest.approx(3.0 * node_hours)
    assert by["networking"] == pytest.approx(0.5 * node_hours)
    notes = [c.text for c in fc.cautions_of(CautionKind.CALIBRATION)]
    assert notes == [
        (
            "overheads calibrated from bills for 2026-04-01 to 2026-05-01: networking, storage "
            "replaced"
        ),
        "overheads calibrated from bills for 2026-06-01 to 2026-07-01: storage replaced",
    ]


def test_unknown_kind_is_an_error(tmp_path: Path) -> None:
    """A file whose [calibration].kind is unknown names the allowed kinds."""
    bad = tmp_path / "x.toml"
    bad.write_text('[calibration]\nkind = "magic"\n')
    with pytest.raises(SpecError, match="allowed values: profile, bills"):
        read_calibration_file(bad)


def test_cli_round_trip_from_bills(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`trainbill calibrate` output feeds `trainbill forecast --calibration` (HyperPod keeps
    orchestration)."""
    pytest.importorskip("duckdb")
    pytest.importorskip("ibis")
    cal = tmp_path / "cal.toml"
    bill = REPO / "tests" / "data" / "bills" / "cur2_gpu_month.csv"
    code, _out, _err = run_argv(["calibrate", str(bill), "-o", str(cal)], capsys)
    assert code == 0
    code, out, _err = run_argv(
        [
            "forecast",
            str(EXAMPLES / "hyperpod-finetune.toml"),
            "--calibration",
            str(cal),
            "--json",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    items = {line["item"] for line in data["lines"]}
    assert "orchestration (calibrated from bills)" in items
    assert "storage (calibrated from bills)" in items


def test_calibrate_is_the_step_forecast_and_simulate_share(
    tmp_path: Path, catalog: Catalog
) -> None:
    """No calibrations: the catalog itself, no measured MFU, nothing to say. A profile and a bill
    file: the measured MFU (0.40, the file's own) and the bill rates on the catalog; the
    cautions are the forecast's bill note, then the profile note."""
    from trainbill.calibration import calibrate, calibration_cautions
    from trainbill.usage import usage_for

    plan = plan_from_dict(_plan())
    none = calibrate(plan, catalog, [])
    assert none.catalog is catalog
    assert none.measured_mfu is None
    assert none.cautions == ()
    (tmp_path / "p.toml").write_text(PROFILE_TOML)
    (tmp_path / "b.toml").write_text(BILLS_TOML)
    cals = [read_calibration_file(tmp_path / "p.toml"), read_calibration_file(tmp_path / "b.toml")]
    both = calibrate(plan, catalog, cals)
    assert both.measured_mfu == pytest.approx(0.40)
    assert len(both.catalog.bill_rates) == len(catalog.bill_rates) + 1
    usage = usage_for(plan, both.catalog, today=TODAY, measured_mfu=both.measured_mfu)
    texts = [c.text for c in calibration_cautions(usage, both, today=TODAY)]
    # EC2 is self-managed: the bills' orchestration rate does not carry over.
    assert texts == [
        (
            "overheads calibrated from bills for 2026-04-01 to 2026-05-01: networking, "
            "storage replaced"
        ),
        "time model uses the measured MFU 40.0% from hand-written test calibration",
    ]
    fc = forecast_calibrated(plan, catalog, cals, today=TODAY)
    assert [c.text for c in fc.cautions_of(CautionKind.CALIBRATION)] == texts


def test_a_calibrated_forecast_keeps_the_time_model_band(tmp_path: Path, catalog: Catalog) -> None:
    """With measured MFU 40% the training hours are the profile's, but a whole run's restarts,
    stalls and slow nodes are not: the calibrated forecast keeps the whole-run band
    (time.error_band ×0.70-×1.77 of the training hours), as the report does. Training hours
    ×0.7013 and ×1.7721 move the GPU-hours by more than the overheads alone can: the P10 sits
    below the point and the P90 above it, and with run.hours stated the band is the point."""
    cal_file = tmp_path / "p.toml"
    cal_file.write_text(PROFILE_TOML)
    cals = [read_calibration_file(cal_file)]
    fc = forecast_calibrated(plan_from_dict(_plan()), catalog, cals, today=TODAY)
    assert fc.band is not None
    point = fc.usage.wall_hours * fc.usage.gpus
    assert fc.band.gpu_hours_p10 < point < fc.band.gpu_hours_p90
    assert fc.band.total_usd_p10 < fc.total_usd < fc.band.total_usd_p90
    stated = plan_from_dict({**_plan(), "run": {"hours": 10}})
    bills = tmp_path / "b.toml"
    bills.write_text(BILLS_TOML)
    fixed = forecast_calibrated(stated, catalog, [read_calibration_file(bills)], today=TODAY)
    assert fixed.band is not None
    assert fixed.band.total_usd_p10 == fixed.band.total_usd_p90 == fixed.total_usd


def test_a_bills_calibration_prices_only_its_own_cloud(tmp_path: Path, catalog: Catalog) -> None:
    """A calibration from AWS bills (providers = ["aws"]) prices an AWS plan and refuses a GCP
    one; a file written before the clouds were recorded (no providers) is not checked."""
    aws_only = tmp_path / "aws.toml"
    files = 'source_files = ["april.csv"]'
    aws_only.write_text(BILLS_TOML.replace(files, files + '\nproviders = ["aws"]'))
    cal = read_calibration_file(aws_only)
    forecast_calibrated(plan_from_dict(_plan()), catalog, [cal], today=TODAY)
    gcp = plan_from_dict({**_plan(), "cluster": {"gpu": "h100", "gpus": 64, "provider": "gcp"}})
    with pytest.raises(SpecError, match=r"fitted from aws bills \(april\.csv\) cannot price a gcp"):
        forecast_calibrated(gcp, catalog, [cal], today=TODAY)
    unrecorded = tmp_path / "old.toml"
    unrecorded.write_text(BILLS_TOML)
    forecast_calibrated(gcp, catalog, [read_calibration_file(unrecorded)], today=TODAY)
