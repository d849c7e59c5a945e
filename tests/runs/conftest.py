"""Registry fixtures: a fresh database per test, on SQLite and on PostgreSQL.

PostgreSQL is the server whose URL ``TRAINBILL_TEST_POSTGRES_URL`` gives (``.ci/run`` starts a
throwaway cluster and exports it); each test gets a database of its own, dropped afterwards.
Without that variable, or when the server cannot be reached, the PostgreSQL cases skip and
say why.
"""

from __future__ import annotations

import csv
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")
pytest.importorskip("alembic")

PG_ENV = "TRAINBILL_TEST_POSTGRES_URL"


def _postgres_db() -> Iterator[str]:
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip(f"no PostgreSQL server: {PG_ENV} is not set (.ci/run starts one and sets it)")
    psycopg = pytest.importorskip("psycopg")
    name = f"tb_{uuid.uuid4().hex[:12]}"
    admin = base.replace("postgresql+psycopg://", "postgresql://")
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as con:
            con.execute(f"CREATE DATABASE {name}")
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL at {PG_ENV} cannot be reached: {str(exc).splitlines()[0]}")
    head, _, _ = admin.rpartition("/")
    try:
        yield f"{head}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as con:
            con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty registry: a SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.sqlite'}"
    else:
        yield from _postgres_db()


#: A FOCUS bill's columns the reader needs (``bills._files.FOCUS_REQUIRED``) plus usage.
_HEADER = [
    "BilledCost", "EffectiveCost", "ListCost", "BillingCurrency", "ChargeCategory",
    "ServiceCategory", "ServiceName", "SkuMeter", "ChargePeriodStart", "BillingPeriodStart",
    "BillingPeriodEnd", "ConsumedQuantity", "ConsumedUnit", "Tags",
]  # fmt: skip


def focus_bill(path: Path, rows: list[dict[str, str]]) -> Path:
    """A FOCUS CSV; each row gives ``cost`` and optionally ``run`` (the trainbill-run tag),
    ``kind`` (gpu, storage or network) and ``hours``."""
    kinds = {
        "gpu": ("Compute", "Amazon Elastic Compute Cloud", "BoxUsage:p5.48xlarge", "Hrs"),
        "storage": ("Storage", "Amazon Simple Storage Service", "TimedStorage-ByteHrs", "GB-Mo"),
        "network": ("Networking", "Amazon Virtual Private Cloud", "NatGateway-Hours", "Hrs"),
    }
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(_HEADER)
        for r in rows:
            cat, service, meter, unit = kinds[r.get("kind", "gpu")]
            tags = json.dumps({"trainbill-run": r["run"]}) if r.get("run") else ""
            w.writerow([
                r["cost"], r["cost"], r["cost"], "USD", "Usage", cat, service, meter,
                "2026-04-02T00:00:00Z", "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z",
                r.get("hours", "1"), unit, tags,
            ])  # fmt: skip
    return path
