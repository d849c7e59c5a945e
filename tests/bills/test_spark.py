"""DuckDB and Spark run the same Ibis queries and must give identical results."""

from __future__ import annotations

import pytest
from tests.bills.conftest import CUR_EXPORT, FOCUS_SAMPLE

pytest.importorskip("ibis")
pytest.importorskip("duckdb")

from trainbill.bills import read_bill

# py4j (PySpark's bridge to the JVM) leaves sockets for the garbage collector to close.
pytestmark = [
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


@pytest.mark.spark
@pytest.mark.usefixtures("spark_available")
@pytest.mark.parametrize(("path", "by"), [(FOCUS_SAMPLE, "day"), (CUR_EXPORT, "tag:project")])
def test_duckdb_and_spark_agree_exactly(path, by) -> None:  # type: ignore[no-untyped-def]
    """Every field of the summary, breakdown included, is identical on both engines."""
    duck = read_bill(path, engine="duckdb", by=by).as_dict()
    spark = read_bill(path, engine="spark", by=by).as_dict()
    assert (duck.pop("engine"), spark.pop("engine")) == ("duckdb", "spark")
    assert spark == duck
