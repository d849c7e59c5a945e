"""The run registry end to end through the CLI, on SQLite and on PostgreSQL (``db_url``)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from tests.runs.conftest import focus_bill

from conftest import SEED, refused, run_cli


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code, out, err = run_cli(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


#: run-1's tagged rows and the rows that are not its: (cost, tag, kind).
_RUN1 = [
    {"cost": "5504.04", "run": "run-1", "kind": "gpu", "hours": "100"},
    {"cost": "123.457", "run": "run-1", "kind": "storage"},
    {"cost": "0.011", "run": "run-1", "kind": "network"},
    {"cost": "999.99", "run": "run-2", "kind": "gpu", "hours": "18"},
    {"cost": "42.00"},
]


def test_record_and_close_store_the_tagged_total(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seed example recorded as run-1, closed with a FOCUS file of which some rows carry
    its tag: the stored actual is the sum of exactly those rows' BilledCost, to the cent."""
    rec = _json(capsys, "runs", "record", str(SEED), "--id", "run-1", "--db", db_url)
    assert rec["id"] == "run-1"
    assert rec["tag"] == "trainbill-run=run-1"
    assert '"trainbill-run" = "run-1"' in rec["snippets"]["terraform"]
    assert "trainbill-run: run-1" in rec["snippets"]["skypilot"]
    assert json.loads(rec["snippets"]["hyperpod"]) == {
        "Tags": [{"Key": "trainbill-run", "Value": "run-1"}]
    }
    bill = focus_bill(tmp_path / "tagged.csv", _RUN1)
    closed = _json(capsys, "runs", "close", "run-1", str(bill), "--db", db_url)
    want = sum(Decimal(r["cost"]) for r in _RUN1 if r.get("run") == "run-1")  # 5,627.508
    assert closed["rows"] == 3
    assert round(Decimal(str(closed["actual_total_usd"])), 2) == round(want, 2)
    assert closed["by_category"]["compute"]["actual_usd"] == pytest.approx(5504.04)
    assert closed["by_category"]["storage"]["actual_usd"] == pytest.approx(123.457)
    shown = _json(capsys, "runs", "show", "run-1", "--db", db_url)
    assert round(Decimal(str(shown["actual"]["total_usd"])), 2) == round(want, 2)
    assert shown["actual"]["rows"] == 3
    assert shown["actual"]["gpu_instance_hours"] == pytest.approx(100.0)
    # What reproduces the forecast is stored: plan as written, inputs, lines, prices' date.
    assert shown["plan_text"] == SEED.read_text(encoding="utf-8")
    assert shown["plan"]["cluster"]["nodes"] == 32
    assert shown["prices_as_of"] == "2025-05-01"
    assert sum(ln["cost_usd"] for ln in shown["lines"]) == pytest.approx(
        shown["forecast_total_usd"]
    )
    assert shown["p10_usd"] <= shown["p50_usd"] <= shown["p90_usd"]
    listed = _json(capsys, "runs", "list", "--db", db_url)
    assert [r["id"] for r in listed] == ["run-1"]
    assert listed[0]["closed"] is True


def test_closing_twice_needs_replace(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _json(capsys, "runs", "record", str(SEED), "--id", "run-1", "--db", db_url)
    bill = str(focus_bill(tmp_path / "b.csv", _RUN1))
    _json(capsys, "runs", "close", "run-1", bill, "--db", db_url)
    refused(["runs", "close", "run-1", bill, "--db", db_url], capsys, "--replace", "run-1")
    again = _json(capsys, "runs", "close", "run-1", bill, "--db", db_url, "--replace")
    assert again["replaced"] is True


def test_a_bill_without_the_tag_stores_nothing(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _json(capsys, "runs", "record", str(SEED), "--id", "run-7", "--db", db_url)
    bill = str(focus_bill(tmp_path / "b.csv", _RUN1))
    refused(
        ["runs", "close", "run-7", bill, "--db", db_url], capsys, "no rows tagged", "nothing stored"
    )
    assert _json(capsys, "runs", "show", "run-7", "--db", db_url)["actual"] is None


def test_unknown_id_lists_the_nearest(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    for rid in ("run-1", "run-2", "llama-sft"):
        _json(capsys, "runs", "record", str(SEED), "--id", rid, "--db", db_url)
    refused(["runs", "show", "run-3", "--db", db_url], capsys, "no run 'run-3'", "run-1", "run-2")
    refused(["runs", "delete", "lama-sft", "--yes", "--db", db_url], capsys, "llama-sft")


def test_default_ids_count_up_and_delete_removes(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _json(capsys, "runs", "record", str(SEED), "--db", db_url)["id"] == "run-1"
    assert _json(capsys, "runs", "record", str(SEED), "--db", db_url)["id"] == "run-2"
    code, _out, err = run_cli(capsys, "runs", "delete", "run-1", "--yes", "--db", db_url)
    assert code == 0, err
    assert [r["id"] for r in _json(capsys, "runs", "list", "--db", db_url)] == ["run-2"]


def test_newer_schema_is_refused_with_its_version(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database stamped by a newer trainbill (revision 9999) is refused, not downgraded."""
    from sqlalchemy import create_engine, text

    from trainbill.runs.store import database_url

    _json(capsys, "db", "upgrade", "--db", db_url)
    engine = create_engine(database_url(db_url))
    with engine.begin() as con:
        con.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    refused(["runs", "list", "--db", db_url], capsys, "schema version 9999", "never downgraded")
    engine = create_engine(database_url(db_url))
    with engine.connect() as con:
        assert con.execute(text("SELECT version_num FROM alembic_version")).scalar() == "9999"
    engine.dispose()


def test_unreachable_server_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens on port 9 of 127.0.0.1: one line naming host and port, no traceback."""
    pytest.importorskip("psycopg")
    url = "postgresql://nobody@127.0.0.1:9/runs"
    refused(["runs", "record", str(SEED), "--db", url], capsys, "127.0.0.1:9")


def test_db_upgrade_and_path(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    from trainbill.runs.store import head_revision

    assert _json(capsys, "db", "upgrade", "--db", db_url)["version"] == head_revision()
    code, out, _ = run_cli(capsys, "db", "path")
    assert code == 0
    assert out.strip().endswith("runs.sqlite")


def test_forecast_start_up_does_not_import_the_registry() -> None:
    """SQLAlchemy and Alembic are the registry's: a forecast (and the CLI's start-up) never
    loads them (benchmarks/startup.py times that start-up)."""
    import subprocess
    import sys

    from conftest import REPO

    code = (
        "import sys, contextlib, io\n"
        "from trainbill.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main(['forecast', {str(SEED)!r}, '--json'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "found = {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(found & {'sqlalchemy', 'alembic', 'psycopg'}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": ""},
    )  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == "[]"
