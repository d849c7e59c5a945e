"""Fixtures for the bill reader: paths to the checked-in samples and one Spark check per session."""

from __future__ import annotations

import gc
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "bills"
FOCUS_SAMPLE = DATA / "focus_sample.csv"
CUR_MONTH = DATA / "cur2_gpu_month.csv"
CUR_EXPORT = DATA / "cur2-export"


@pytest.fixture(scope="session")
def spark_available() -> Iterator[None]:
    """Skip unless PySpark and Java are present; stop the one cached session at the end.

    py4j leaves its sockets to the garbage collector, so the session is stopped and collected
    with ResourceWarning ignored: otherwise the warning fires in whichever later test GCs them.
    """
    pytest.importorskip("pyspark")
    pytest.importorskip("ibis")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime for PySpark")
    yield
    from trainbill.bills import _engine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        if _engine._SPARK is not None:
            _engine._SPARK.stop()
            _engine._SPARK = None
        gc.collect()


@pytest.fixture(autouse=True)
def _sql_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """One temporary cache for the whole session (the root conftest gives each test an empty
    one): bills tests share compiled SQL, so each schema is compiled by Ibis once, not per test."""
    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def staged_queries(path: Path, kind: str | None = None, tag: str | None = None) -> dict[str, Any]:
    """The DuckDB read's Ibis expressions for ``path`` as ``read_bill`` stages them
    (``scan:…`` and ``table:…`` steps, then the summary and the breakdown)."""
    from trainbill.bills import summary
    from trainbill.bills._engine import open_engine
    from trainbill.bills._files import detect, discover

    eng = open_engine("duckdb")
    try:
        fmt = detect(discover([path]))
        eng.register(fmt)
        return summary._queries(eng, fmt, kind, tag, staged=True)
    finally:
        eng.close()
