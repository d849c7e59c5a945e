"""``/v1/runs`` and the runs page; writes beyond loopback need the bearer token."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from tests.runs.conftest import focus_bill
from tests.web.asgi_client import call

from conftest import SEED, run_cli


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A registry with run-1 (closed: 5,000 + 250 = 5,250 tagged) and run-2 (open)."""
    url = str(tmp_path / "runs.sqlite")
    for rid in ("run-1", "run-2"):
        assert run_cli(capsys, "runs", "record", str(SEED), "--id", rid, "--db", url)[0] == 0
    bill = focus_bill(
        tmp_path / "b.csv",
        [
            {"cost": "5000", "run": "run-1", "hours": "40"},
            {"cost": "250", "run": "run-1", "kind": "storage"},
        ],
    )
    assert run_cli(capsys, "runs", "close", "run-1", str(bill), "--db", url)[0] == 0
    return url


def _app(db: str, host: str = "127.0.0.1"):  # type: ignore[no-untyped-def]
    from trainbill.web import create_app

    return create_app(runs_db=db, listen_host=host)


def test_list_detail_and_page(db: str) -> None:
    app = _app(db)
    listed = call(app, "GET", "/v1/runs").json()
    assert [r["id"] for r in listed] == ["run-1", "run-2"]
    assert listed[0]["actual_total_usd"] == pytest.approx(5000 + 250)
    detail = call(app, "GET", "/v1/runs/run-1").json()
    assert detail["by_category"]["storage"]["actual_usd"] == pytest.approx(250)
    missing = call(app, "GET", "/v1/runs/run-9")
    assert missing.status_code == 404
    assert "run-1" in missing.json()["detail"]
    page = call(app, "GET", "/runs")
    assert page.status_code == 200
    assert "<svg" in page.text
    assert "5,250.00" in page.text  # run-1's actual total in its table


def test_writes_on_loopback_need_no_token(db: str) -> None:
    app = _app(db)
    assert call(app, "DELETE", "/v1/runs/run-2").json() == {"deleted": "run-2"}


def test_beyond_loopback_no_token_means_read_only(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRAINBILL_API_TOKEN", raising=False)
    app = _app(db, "0.0.0.0")
    r = call(app, "DELETE", "/v1/runs/run-2")
    assert r.status_code == 403
    assert "read-only" in r.json()["detail"]
    assert call(app, "GET", "/v1/runs/run-2").status_code == 200  # still there


def test_beyond_loopback_writes_need_the_bearer_token(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINBILL_API_TOKEN", "s3cret")
    app = _app(db, "0.0.0.0")
    assert call(app, "DELETE", "/v1/runs/run-2").status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert call(app, "DELETE", "/v1/runs/run-2", headers=wrong).status_code == 401
    ok = {"Authorization": "Bearer s3cret"}
    assert call(app, "DELETE", "/v1/runs/run-2", headers=ok).json() == {"deleted": "run-2"}
