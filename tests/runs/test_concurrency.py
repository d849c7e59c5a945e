"""Twenty ``trainbill runs record`` processes at once on one SQLite file all succeed (WAL,
IMMEDIATE transactions, busy timeout and retries in ``trainbill.runs.store``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SEED

pytest.importorskip("sqlalchemy")


def test_twenty_concurrent_records_on_one_sqlite_file(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.sqlite")  # fresh: the first uses also race to create the schema
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "trainbill", "runs", "record", str(SEED), "--db", db, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        for _ in range(20)
    ]
    results = [p.communicate(timeout=300) for p in procs]
    errors = [err for p, (_, err) in zip(procs, results, strict=True) if p.returncode != 0]
    assert errors == []
    ids = {json.loads(out)["id"] for out, _ in results}
    assert ids == {f"run-{i}" for i in range(1, 21)}  # every default id handed out once
    listed = subprocess.run(
        [sys.executable, "-m", "trainbill", "runs", "list", "--db", db, "--json"],
        capture_output=True, env=env, text=True, check=True,
    )  # fmt: skip
    assert len(json.loads(listed.stdout)) == 20
