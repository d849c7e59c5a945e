"""``--calibration FILE`` on simulate, optimize and report: the same files as ``forecast
--calibration``, read by one helper (``cli._common.read_calibrations``), priced by the same
drivers, and every calibrated result says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import BILLS_CALIBRATION_HEAD, BILLS_OVERHEADS_TOML, PROFILE_TOML, refused, run_argv

#: 2 × p5.48xlarge, 10 h, all on demand (EC2: self-managed, so no orchestration fee carries over).
PLAN = """
[run]
hours = 10
[model]
params = 7e9
[cluster]
instance = "p5.48xlarge"
nodes = 2
"""

#: The same cluster with its hours derived from the time model (so a measured MFU can act).
DERIVED_PLAN = """
[model]
params = 7e9
tokens = 2e9
[cluster]
instance = "p5.48xlarge"
nodes = 2
"""


#: Hand-picked: $3.00 of data transfer per GPU node-hour. The plan models no data transfer
#: ($0, asserted below), so the calibrated line adds exactly nodes × wall hours × $3.00.
DATA_TRANSFER_TOML = (
    BILLS_CALIBRATION_HEAD
    + """
[calibration.factors_usd_per_node_hour]
data_transfer = 3.0

[calibration.totals_usd]
data_transfer = 300.0
"""
)

#: Hand-picked: storage $2.00 and networking $0.50 per node-hour, replacing modelled lines.
OVERHEADS_TOML = BILLS_OVERHEADS_TOML

NOTE = "overheads calibrated from bills for 2026-04-01 to 2026-05-01"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text in (
        ("plan", PLAN),
        ("derived", DERIVED_PLAN),
        ("dt", DATA_TRANSFER_TOML),
        ("overheads", OVERHEADS_TOML),
        ("profile", PROFILE_TOML),
    ):
        p = tmp_path / f"{name}.toml"
        p.write_text(text, encoding="utf-8")
        out[name] = p
    return out


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code, out, err = run_argv([*argv, "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def _simulate(plan: Path, capsys: pytest.CaptureFixture[str], *cal: Path) -> dict[str, object]:
    argv = ["simulate", str(plan), "--trials", "20", "--seed", "1", "--study-trials", "0"]
    for c in cal:
        argv += ["--calibration", str(c)]
    return _json(argv, capsys)


def _forecast_total(plan: Path, capsys: pytest.CaptureFixture[str], cal: Path) -> float:
    data = _json(["forecast", str(plan), "--calibration", str(cal)], capsys)
    return float(data["total_usd"])  # type: ignore[arg-type]


def test_simulate_adds_the_calibrated_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Deterministic bill: plain + 2 nodes × W h × $3.00 (W: the plan's wall hours, which bills
    do not change), in the data_transfer category, which was $0 before."""
    plain = _simulate(files["plan"], capsys)
    cal = _simulate(files["plan"], capsys, files["dt"])
    wall = float(plain["deterministic_wall_hours"])  # type: ignore[arg-type]
    assert cal["deterministic_wall_hours"] == wall
    before = plain["deterministic_by_category_usd"]
    after = cal["deterministic_by_category_usd"]
    assert isinstance(before, dict)
    assert isinstance(after, dict)
    assert before["data_transfer"] == 0.0
    line = 2 * wall * 3.00  # about 2 × 10.65 × 3 = $63.9
    assert after["data_transfer"] == pytest.approx(line, rel=1e-12)
    assert cal["deterministic_total_usd"] == pytest.approx(
        float(plain["deterministic_total_usd"]) + line,  # type: ignore[arg-type]
        rel=1e-12,
    )
    assert plain["warnings"] == []
    assert cal["warnings"] == [f"{NOTE}: data_transfer replaced"]


def test_simulate_equals_forecast_calibrated(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """By construction: the same calibrated catalog prices both (storage and networking lines
    replaced, S3 checkpoint storage with them)."""
    sim = _simulate(files["plan"], capsys, files["overheads"])
    assert sim["deterministic_total_usd"] == pytest.approx(
        _forecast_total(files["plan"], capsys, files["overheads"]), rel=1e-12
    )
    assert sim["warnings"] == [f"{NOTE}: networking, storage replaced"]


def test_simulate_uses_a_profile_measured_mfu(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A profile calibration is the measured MFU, as in forecast: same total, same note."""
    plain = _simulate(files["derived"], capsys)
    sim = _simulate(files["derived"], capsys, files["profile"])
    assert sim["deterministic_wall_hours"] != plain["deterministic_wall_hours"]
    assert sim["deterministic_total_usd"] == pytest.approx(
        _forecast_total(files["derived"], capsys, files["profile"]), rel=1e-12
    )
    warnings = sim["warnings"]
    assert isinstance(warnings, list)
    assert any("time model uses the measured MFU 40.0%" in w for w in warnings), warnings


def test_simulate_table_shows_the_calibration(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["simulate", str(files["plan"]), "--trials", "20", "--study-trials", "0"]
    code, out, err = run_argv([*argv, "--calibration", str(files["dt"])], capsys)
    assert code == 0, err
    assert f"warning: {NOTE}: data_transfer replaced" in out


def _optimize(capsys: pytest.CaptureFixture[str], plan: Path, *cal: Path) -> dict[str, object]:
    argv = ["optimize", str(plan), "--instances", "p5.48xlarge", "--nodes", "2"]
    for c in cal:
        argv += ["--calibration", str(c)]
    return _json(argv, capsys)


def test_optimize_prices_candidates_with_bill_rates(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's plan and the best candidate each gain 2 nodes × their wall hours × $3.00
    (the grid keeps the same configurations: data transfer is the same per node-hour for all)."""
    plain = _optimize(capsys, files["plan"])
    cal = _optimize(capsys, files["plan"], files["dt"])
    for key in ("user", "best"):
        p, c = plain[key], cal[key]
        assert isinstance(p, dict)
        assert isinstance(c, dict)
        assert c["wall_hours"] == p["wall_hours"]
        assert c["nodes"] == p["nodes"] == 2
        line = 2 * p["wall_hours"] * 3.00
        assert c["total_usd"] == pytest.approx(p["total_usd"] + line, rel=1e-12), key
    assert "cautions" not in plain  # the uncalibrated contract is the web API's
    # "plain": the text for a finance reader (issue #42); it has no flag or key to leave out.
    text = f"{NOTE}: data_transfer replaced"
    assert cal["cautions"] == [{"kind": "calibration", "text": text, "plain": text}]
    user = cal["user"]
    assert isinstance(user, dict)
    assert user["total_usd"] == pytest.approx(
        _forecast_total(files["plan"], capsys, files["dt"]), rel=1e-12
    )


def test_optimize_refuses_a_profile_calibration(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The planner's other plans have no measured MFU: refused, not silently ignored."""
    argv = ["optimize", str(files["derived"]), "--calibration", str(files["profile"])]
    refused(argv, capsys, "profile.toml", "--calibration", "trainbill optimize")


def test_report_is_priced_with_bill_rates_and_says_so(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "r.html"
    argv = ["report", str(files["plan"]), "-o", str(out_file), "--trials", "0"]
    code, out, err = run_argv([*argv, "--calibration", str(files["overheads"])], capsys)
    assert code == 0, err
    assert f"note: {NOTE}: networking, storage replaced" in out
    html = out_file.read_text(encoding="utf-8")
    assert f"{NOTE}: networking, storage replaced" in html
    assert "storage (calibrated from bills)" in html


def test_report_refuses_a_profile_calibration(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", str(files["derived"]), "-o", str(tmp_path / "r.html")]
    refused([*argv, "--calibration", str(files["profile"])], capsys, "profile.toml")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("command", ["forecast", "simulate", "optimize", "report"])
@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (None, ("missing.toml", "not found")),
        ("[calibration\nkind = 'bills'\n", ("missing.toml", "invalid TOML")),
        ("[calibration]\nkind = 'invoice'\n", ("missing.toml", "calibration.kind", "bills")),
        (
            BILLS_CALIBRATION_HEAD.replace("schema_version = 1\n", ""),
            ("missing.toml", "schema_version"),
        ),
    ],
    ids=["missing", "malformed", "wrong-kind", "no-schema-version"],
)
def test_bad_calibration_file_is_one_line(
    command: str,
    text: str | None,
    needles: tuple[str, ...],
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every command reads the file with the one reader: one line naming the file and field."""
    bad = tmp_path / "missing.toml"
    if text is not None:
        bad.write_text(text, encoding="utf-8")
    argv = [command, str(files["plan"])]
    if command == "report":
        argv += ["-o", str(tmp_path / "r.html")]
    refused([*argv, "--calibration", str(bad)], capsys, *needles)
