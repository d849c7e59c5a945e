"""``runs calibrate`` and ``forecast --calibration history`` after three closed runs, on
SQLite and PostgreSQL. Expected factors are worked out here from the bills the test writes."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from tests.runs.conftest import focus_bill

from conftest import SEED, refused, run_cli

K = 2.0  # history.prior_runs in the packaged assumptions.toml


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code, out, err = run_cli(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


#: Per run: GPU instance-hours billed, GPU cost, storage cost.
_BILLS = {"run-1": (2600.0, 150000.0, 9000.0), "run-2": (2500.0, 140000.0, 7000.0),
          "run-3": (2900.0, 170000.0, 8000.0)}  # fmt: skip


def _shrunk(raw: float, n: int) -> float:
    return (n * raw + K) / (n + K)


def test_calibrate_and_forecast_with_history(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(
        ["forecast", str(SEED), "--calibration", "history", "--db", db_url], capsys, "no closed run"
    )
    rows = []
    for rid, (hours, gpu, storage) in _BILLS.items():
        _json(capsys, "runs", "record", str(SEED), "--id", rid, "--db", db_url)
        rows += [
            {"cost": str(gpu), "run": rid, "kind": "gpu", "hours": str(hours)},
            {"cost": str(storage), "run": rid, "kind": "storage"},
        ]
    bill = focus_bill(tmp_path / "bill.csv", rows)
    for rid in _BILLS:
        _json(capsys, "runs", "close", rid, str(bill), "--db", db_url)
    shown = _json(capsys, "runs", "show", "run-1", "--db", db_url)
    f_hours = shown["gpu_node_hours"]  # the model's node-hours (same plan for all three)
    f_cat = shown["forecast_by_category"]
    cal = _json(capsys, "runs", "calibrate", "--db", db_url)

    # Hours: mean of billed / modelled node-hours, shrunk by 3 runs against K.
    raw_h = statistics.fmean(h / f_hours for h, _, _ in _BILLS.values())
    assert cal["hours"]["raw"] == pytest.approx(raw_h)
    assert cal["hours"]["value"] == pytest.approx(_shrunk(raw_h, 3))
    # Storage per node-hour: (Σ storage / Σ hours) / (forecast storage / forecast node-hours).
    team = sum(s for _, _, s in _BILLS.values()) / sum(h for h, _, _ in _BILLS.values())
    raw_s = team / (f_cat["storage"] / f_hours)
    assert cal["categories"]["storage"]["value"] == pytest.approx(_shrunk(raw_s, 3))

    loo = cal["leave_one_out"]
    assert [r["id"] for r in loo["runs"]] == list(_BILLS)
    # run-1 predicted from run-2 and run-3 only.
    others = [v for k, v in _BILLS.items() if k != "run-1"]
    h2 = _shrunk(statistics.fmean(h / f_hours for h, _, _ in others), 2)
    team2 = sum(s for _, _, s in others) / sum(h for h, _, _ in others)
    cats = {c: v for c, v in f_cat.items() if v}
    pred = 0.0
    for c, v in cats.items():
        if c in ("discount", "credit", "tax", "support", "other"):
            pred += v
        elif c == "compute":
            pred += v * h2
        elif c == "storage":
            pred += v * h2 * _shrunk(team2 / (f_cat["storage"] / f_hours), 2)
        else:  # a category the bills never show: billed 0 against its forecast
            others_raw = 0.0
            pred += v * h2 * _shrunk(others_raw, 2)
    actual1 = _BILLS["run-1"][1] + _BILLS["run-1"][2]
    r1 = loo["runs"][0]
    assert r1["calibrated_usd"] == pytest.approx(pred)
    assert r1["calibrated_error"] == pytest.approx((pred - actual1) / actual1)
    assert r1["uncalibrated_error"] == pytest.approx((sum(cats.values()) - actual1) / actual1)
    assert loo["median_abs_error_calibrated"] is not None

    plain = _json(capsys, "forecast", str(SEED))
    hist = _json(capsys, "forecast", str(SEED), "--calibration", "history", "--db", db_url)
    changed = [(a, b) for a, b in zip(plain["lines"], hist["lines"], strict=True) if a != b]
    assert changed
    for a, b in changed:
        assert "calibrated from run history" in b["basis"]
        assert b["cost_usd"] != pytest.approx(a["cost_usd"])
    unchanged = [b for a, b in zip(plain["lines"], hist["lines"], strict=True) if a == b]
    assert all("run history" not in b["basis"] for b in unchanged)
    compute = [b for b in hist["lines"] if b["category"] == "compute"]
    plain_compute = [a for a in plain["lines"] if a["category"] == "compute"]
    assert sum(b["cost_usd"] for b in compute) == pytest.approx(
        sum(a["cost_usd"] for a in plain_compute) * _shrunk(raw_h, 3)
    )
