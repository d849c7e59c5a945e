"""The calculator's plan files over HTTP: a TOML upload is read as ``trainbill forecast`` reads a
file, a download is a file it accepts (round trip), the report downloads as HTML, and the seed
scenario posted in the file's structure prices to the cent of the library's own forecast."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import SEED, TODAY, run_cli

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from trainbill.catalog import Catalog
from trainbill.forecasting import forecast
from trainbill.simulate import simulate
from trainbill.spec import load_plan
from trainbill.web import create_app
from web.asgi_client import call, seed_json

_APP = create_app(today=TODAY)


def _call(method: str, url: str, **kw: Any) -> Any:
    return call(_APP, method, url, **kw)


def _cents(x: float) -> str:
    return f"${x:,.2f}"


def test_uploaded_seed_file_prices_to_the_cent_of_the_library(catalog: Catalog) -> None:
    """The page's path: upload the seed file's text, post the plan it answers, get the library's
    real bill for the same file, to the cent (no field lost or defaulted on the way)."""
    expected = forecast(load_plan(SEED), catalog, today=TODAY).total_usd
    parsed = _call("POST", "/v1/plan/parse", json={"toml": SEED.read_text(encoding="utf-8")})
    assert parsed.status_code == 200
    plan = parsed.json()["plan"]
    assert plan["data"]["source"] == "s3"  # as the file says
    assert plan["prices"]["as_of"] == "2025-05-01"  # a TOML date, as ISO text
    r = _call("POST", "/v1/forecast", json=plan)
    assert r.status_code == 200
    assert _cents(r.json()["total_usd"]) == _cents(expected)


def test_downloaded_toml_is_the_same_plan_and_the_cli_prices_it_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Download the seed plan as TOML: ``load_plan`` reads back the seed's own plan, and
    ``trainbill forecast FILE --json`` prints the seed's real bill."""
    r = _call("POST", "/v1/plan/toml", json=seed_json())
    assert r.status_code == 200
    assert r.headers["content-disposition"] == 'attachment; filename="seed-70b-finetune.toml"'
    path = tmp_path / "downloaded.toml"
    path.write_bytes(r.content)
    assert load_plan(path) == load_plan(SEED)
    totals = []
    for file in (SEED, path):
        code, out, _err = run_cli(capsys, "forecast", str(file), "--json")
        assert code == 0
        totals.append(json.loads(out)["total_usd"])
    assert _cents(totals[0]) == _cents(totals[1])


def test_a_hostile_name_cannot_break_out_of_its_toml_string(tmp_path: Path) -> None:
    """A run name carrying a quote, a newline and a new section stays one string in the file,
    and the download's file name keeps only safe characters."""
    body = seed_json()
    name = 'x"\n[cluster]\nnodes = 1 # <script>alert(1)</script>\\'
    body["run"]["name"] = name
    r = _call("POST", "/v1/plan/toml", json=body)
    assert r.status_code == 200
    path = tmp_path / "hostile.toml"
    path.write_bytes(r.content)
    plan = load_plan(path)
    assert plan.run.name == name
    assert plan.cluster.nodes == 32  # the seed's, not the 1 smuggled in the name
    disposition = r.headers["content-disposition"]
    assert disposition == 'attachment; filename="x-cluster-nodes-1-script-alert-1-script.toml"'


@pytest.mark.parametrize(
    ("toml", "field", "words"),
    [
        ("[run\nhours = 1", None, "invalid TOML"),  # line and column from tomllib
        ("[cluster]\nnodez = 3", "cluster.nodez", "did you mean"),
        ('[cluster]\ninstance = "p5.48xlarge"\nnodes = 1e400', "cluster.nodes", "got"),
        ("[run]\nhours = 72", "plan", "cluster needs an instance"),
    ],
)
def test_upload_errors_name_the_file_and_field(toml: str, field: str | None, words: str) -> None:
    """A broken upload gets the file loader's own message, naming the file and the field."""
    r = _call("POST", "/v1/plan/parse", json={"toml": toml, "filename": "my plan.toml"})
    assert r.status_code == 422
    assert r.json()["field"] == field
    assert r.json()["detail"].startswith("my-plan.toml: ")
    assert words.lower() in r.json()["detail"].lower()


def test_report_downloads_as_html_without_scripts() -> None:
    """The report of ``trainbill report`` for the plan, as an attachment, with no script in it."""
    r = _call("POST", "/v1/report", json=seed_json())
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["content-disposition"] == 'attachment; filename="seed-70b-finetune.html"'
    assert "<script" not in r.text.lower()
    assert "seed-70b-finetune" in r.text


def test_simulate_is_the_library_simulation_with_deadline_odds(catalog: Catalog) -> None:
    """/v1/simulate answers trainbill.simulate's own P50/P90 and deadline odds for the plan."""
    body = seed_json()
    body["run"]["deadline_hours"] = 80
    r = _call("POST", "/v1/simulate", json={"plan": body, "trials": 500, "seed": 3})
    assert r.status_code == 200
    sim = simulate(
        load_plan(SEED).model_copy(
            update={"run": load_plan(SEED).run.model_copy(update={"deadline_hours": 80.0})}
        ),
        catalog,
        trials=500,
        rng=3,
        today=TODAY,
    )
    got = r.json()
    assert got["p50_usd"] == sim.cost_usd.p50
    assert got["p90_usd"] == sim.cost_usd.p90
    assert got["deadline_hours"] == 80
    assert got["p_miss_deadline"] == sim.deadline_miss_probability
    assert 0 <= got["p_miss_deadline"] <= 1


def test_ledger_downloads_as_csv_whose_lines_sum_to_the_forecast(catalog: Catalog) -> None:
    """The page's CSV is the report's export: one row per ledger line, the cost column summing
    to the library's total to the cent, served as a .csv attachment."""
    import csv
    import io

    res = _call("POST", "/v1/ledger.csv", json=seed_json())
    assert res.status_code == 200, res.text
    assert res.headers["content-disposition"].endswith('.csv"')
    rows = list(csv.DictReader(io.StringIO(res.content.decode("utf-8-sig"))))
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    assert len(rows) == len(fc.ledger.lines)
    # Each row's cost is rounded to the cent, so the sum may differ from the total by at most
    # half a cent per row.
    total = sum(float(r["cost_usd"]) for r in rows)
    assert abs(total - fc.total_usd) <= 0.005 * len(rows)


def test_ledger_downloads_as_an_xlsx_workbook() -> None:
    """The XLSX download is a real Office Open XML workbook (a zip holding xl/workbook.xml)."""
    import io
    import zipfile

    pytest.importorskip("xlsxwriter")
    res = _call("POST", "/v1/ledger.xlsx", json=seed_json())
    assert res.status_code == 200, res.text
    assert res.headers["content-disposition"].endswith('.xlsx"')
    with zipfile.ZipFile(io.BytesIO(res.content)) as z:
        assert "xl/workbook.xml" in z.namelist()
