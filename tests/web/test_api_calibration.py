"""HTTP API: ``POST /v1/forecast/calibrated`` answers what ``trainbill forecast --calibration``
prints, from the calibration files' TOML text, and refuses a bad document naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import BILLS_OVERHEADS_TOML, PROFILE_TOML, TODAY, run_argv

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from trainbill.web import create_app
from web.asgi_client import call

_APP = create_app(today=TODAY)

# Storage $2.00 and networking $0.50 per GPU node-hour, fitted from a bill.
_BILLS = BILLS_OVERHEADS_TOML
# 7e9 parameters, 1e11 tokens, 32 layers of width 4096 on 8 p5.48xlarge (64 H100s).
_PLAN: dict[str, Any] = {
    "model": {"params": 7e9, "tokens": 1e11, "layers": 32, "d_model": 4096, "seq_len": 4096},
    "cluster": {"instance": "p5.48xlarge", "nodes": 8},
    "prices": {"as_of": "2025-05-01"},
}


def _post(body: dict[str, Any]) -> Any:
    return call(_APP, "POST", "/v1/forecast/calibrated", json=body)


def test_profile_sets_the_compute_hours() -> None:
    """Measured MFU 40% on H100: compute hours = (6·7e9·1e11 + 12·32·4096·4096·1e11) /
    (64 × 989e12 × 0.40) / 3600, as the CLI's calibrated forecast computes them."""
    r = _post({"plan": _PLAN, "calibrations": [PROFILE_TOML]})
    assert r.status_code == 200, r.text
    d = r.json()
    flops = 6 * 7e9 * 1e11 + 12 * 32 * 4096 * 4096 * 1e11
    assert d["time"]["compute_hours"] == pytest.approx(flops / (64 * 989e12 * 0.40) / 3600)
    assert d["budget_usd"] >= d["total_usd"]
    # As the CLI: actions priced with the measured MFU (right-size by the node-count sweep).
    assert all(
        "priced with the measured MFU" in a["caveat"]
        for a in d["actions"]
        if a["kind"] == "right_size"
    )


def test_bill_rates_price_the_overheads() -> None:
    """Storage = GPU node-hours × $2.00 and networking × $0.50 (the bill's fitted rates)."""
    r = _post({"plan": _PLAN, "calibrations": [_BILLS]})
    assert r.status_code == 200, r.text
    d = r.json()
    node_hours = d["cluster"]["nodes"] * d["time"]["wall_hours"]
    by = d["by_category"]
    assert by["storage"] == pytest.approx(2.0 * node_hours)
    assert by["networking"] == pytest.approx(0.5 * node_hours)


def test_same_json_as_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The API and ``trainbill forecast PLAN --calibration A --calibration B --json`` agree on
    every figure (one parser, one calibrated forecast, one budget)."""
    import json

    plan = tmp_path / "plan.toml"
    plan.write_text(
        "[model]\nparams = 7e9\ntokens = 1e11\nlayers = 32\nd_model = 4096\nseq_len = 4096\n"
        '[cluster]\ninstance = "p5.48xlarge"\nnodes = 8\n[prices]\nas_of = 2025-05-01\n',
        encoding="utf-8",
    )
    files = []
    for name, text in (("p.toml", PROFILE_TOML), ("b.toml", _BILLS)):
        (tmp_path / name).write_text(text, encoding="utf-8")
        files += ["--calibration", str(tmp_path / name)]
    code, out, err = run_argv(["forecast", str(plan), *files, "--json"], capsys)
    assert code == 0, err
    cli = json.loads(out)
    api = _post({"plan": _PLAN, "calibrations": [PROFILE_TOML, _BILLS]}).json()
    for key in ("total_usd", "quote_usd", "budget_usd", "by_category", "warnings"):
        assert api[key] == cli[key], key


@pytest.mark.parametrize(
    ("calibrations", "words"),
    [
        (["[calibration\nkind = 'bills'\n"], ("calibrations[0]", "invalid TOML")),
        (["[calibration]\nkind = 'invoice'\n"], ("calibration.kind", "bills", "profile")),
        ([PROFILE_TOML, "[calibration]\nkind = 'bills'\n"], ("calibrations[1]", "schema_version")),
        ([], ("calibrations",)),
        ([PROFILE_TOML] * 9, ("calibrations",)),
    ],
    ids=["not-toml", "unknown-kind", "second-bad", "none", "too-many"],
)
def test_bad_calibration_is_a_422_naming_it(
    calibrations: list[str], words: tuple[str, ...]
) -> None:
    """A document that is not TOML, of an unknown kind or missing fields, or no or more than 8
    documents: 422 whose detail or field names which one and what is wrong."""
    r = _post({"plan": _PLAN, "calibrations": calibrations})
    assert r.status_code == 422, r.text
    body = r.json()
    text = f"{body.get('detail')} {body.get('field')}"
    for word in words:
        assert word in text, (word, body)


def test_simulate_is_calibrated_as_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/v1/simulate with a bill calibration samples the same trials as ``trainbill simulate
    PLAN --calibration FILE --trials 500 --seed 0 --json`` (same P50 and P90 to the cent),
    differs from the uncalibrated simulation, and names the rates that priced it."""
    import json

    plan = tmp_path / "plan.toml"
    plan.write_text(
        "[model]\nparams = 7e9\ntokens = 1e11\nlayers = 32\nd_model = 4096\nseq_len = 4096\n"
        '[cluster]\ninstance = "p5.48xlarge"\nnodes = 8\n[prices]\nas_of = 2025-05-01\n',
        encoding="utf-8",
    )
    (tmp_path / "b.toml").write_text(_BILLS, encoding="utf-8")
    argv = ["simulate", str(plan), "--calibration", str(tmp_path / "b.toml")]
    code, out, err = run_argv([*argv, "--trials", "500", "--seed", "0", "--json"], capsys)
    assert code == 0, err
    cli = json.loads(out)["cost_usd"]
    body: dict[str, Any] = {"plan": _PLAN, "trials": 500, "seed": 0}
    api = call(_APP, "POST", "/v1/simulate", json={**body, "calibrations": [_BILLS]}).json()
    plain = call(_APP, "POST", "/v1/simulate", json=body).json()
    assert (api["p50_usd"], api["p90_usd"]) == pytest.approx((cli["p50"], cli["p90"]), abs=0.005)
    assert api["p50_usd"] != plain["p50_usd"]
    assert "cautions" not in plain
    assert any("storage" in c for c in api["cautions"])


def test_optimize_prices_the_grid_with_bill_rates_and_refuses_a_profile() -> None:
    """/v1/optimize with a bill calibration prices every candidate on the fitted rates (the
    best plan's bill differs from the uncalibrated search's and its cautions name the rates);
    a profile calibration is a 422 naming it, as the CLI refuses it."""
    body: dict[str, Any] = {
        "plan": _PLAN,
        "space": {"instances": ["p5.48xlarge"], "nodes": [4, 8, 16]},
    }
    plain = call(_APP, "POST", "/v1/optimize", json=body)
    assert plain.status_code == 200, plain.text
    cal = call(_APP, "POST", "/v1/optimize", json={**body, "calibrations": [_BILLS]})
    assert cal.status_code == 200, cal.text
    assert cal.json()["best"]["total_usd"] != plain.json()["best"]["total_usd"]
    assert "cautions" not in plain.json()
    assert cal.json()["cautions"]
    r = call(_APP, "POST", "/v1/optimize", json={**body, "calibrations": [PROFILE_TOML]})
    assert r.status_code == 422, r.text
    text = f"{r.json()['detail']} {r.json()['field']}"
    assert "calibrations[0]" in text
    assert "profile calibration" in text


def _ledger_total(text: str) -> float:
    """The sum of the CSV ledger's cost_usd column (the csv module, not the app's parser)."""
    import csv
    import io

    return sum(float(r["cost_usd"]) for r in csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))


def test_report_and_ledger_take_bill_calibrations_and_refuse_a_profile() -> None:
    """``{"plan": …, "calibrations": […]}`` prices the ledger download with the bill's rates:
    its lines add up to the calibrated forecast's total (to the cent of each rounded line), not
    the uncalibrated one; the report says the rates priced it; a profile is a 422 naming it
    (as ``trainbill report --calibration``); the bare plan body works as before."""
    wrapped = {"plan": _PLAN, "calibrations": [_BILLS]}
    calibrated = _post(wrapped).json()["total_usd"]
    plain = call(_APP, "POST", "/v1/forecast", json=_PLAN).json()["total_usd"]
    csv_cal = call(_APP, "POST", "/v1/ledger.csv", json=wrapped)
    csv_plain = call(_APP, "POST", "/v1/ledger.csv", json=_PLAN)
    assert csv_cal.status_code == 200, csv_cal.text
    lines = csv_cal.text.count("\n") - 1  # each line's cost is rounded to the cent
    assert _ledger_total(csv_cal.text) == pytest.approx(calibrated, abs=0.005 * lines)
    assert _ledger_total(csv_plain.text) == pytest.approx(plain, abs=0.005 * lines)
    assert abs(calibrated - plain) > 1.0
    xlsx = call(_APP, "POST", "/v1/ledger.xlsx", json=wrapped)
    assert xlsx.status_code == 200, xlsx.text
    report = call(_APP, "POST", "/v1/report", json=wrapped)
    assert report.status_code == 200, report.text
    assert "april.csv" in report.text  # the bill the rates were fitted from
    r = call(_APP, "POST", "/v1/report", json={"plan": _PLAN, "calibrations": [PROFILE_TOML]})
    assert r.status_code == 422, r.text
    assert "calibrations[0]" in r.json()["detail"]
    bad = call(_APP, "POST", "/v1/ledger.csv", json={**wrapped, "seed": 1})
    assert bad.status_code == 422
    assert bad.json()["field"] == "seed"


def test_sizing_prices_every_node_count_with_the_calibrations() -> None:
    """``/v1/sizing`` with ``{"plan", "calibrations"}``: each point is what
    ``/v1/forecast/calibrated`` says of the plan at that node count (the measured MFU holds on
    the same instance; the bill's rates price the overheads), not the uncalibrated sweep; the
    bare plan body works as before; a bad document is a 422 naming it."""
    wrapped = {"plan": _PLAN, "calibrations": [PROFILE_TOML, _BILLS]}
    r = call(_APP, "POST", "/v1/sizing", json=wrapped)
    assert r.status_code == 200, r.text
    points = r.json()["points"]
    plain = call(_APP, "POST", "/v1/sizing", json=_PLAN).json()["points"]
    assert [pt["nodes"] for pt in points] == [pt["nodes"] for pt in plain]
    for pt, bare in zip(points, plain, strict=True):
        at = {**_PLAN, "cluster": {**_PLAN["cluster"], "nodes": pt["nodes"]}}
        one = _post({"plan": at, "calibrations": wrapped["calibrations"]}).json()
        assert pt["total_usd"] == pytest.approx(one["total_usd"], rel=1e-12)
        assert pt["wall_hours"] == pytest.approx(one["time"]["wall_hours"], rel=1e-12)
        assert pt["total_usd"] != pytest.approx(bare["total_usd"], rel=1e-3)
    bad = call(_APP, "POST", "/v1/sizing", json={"plan": _PLAN, "calibrations": ["[calibration"]})
    assert bad.status_code == 422, bad.text
    assert "calibrations[0]" in f"{bad.json()['detail']} {bad.json().get('field')}"
