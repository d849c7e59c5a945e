"""Cache of the DuckDB SQL that Ibis compiles for a bill schema.

Importing Ibis and compiling the classification query costs about a second, several times the
DuckDB scan of a 5-million-row bill. The SQL depends only on the files' columns and types (the
views have fixed names), the ``--by`` option, this package's code and the Ibis and DuckDB
versions, so it is compiled once per such key and stored as JSON; later runs of a bill with the
same schema (next month's export) execute it directly. The key hashes the source of every
module that shapes the SQL, so editing the rules never reuses stale SQL.

Location: ``$TRAINBILL_CACHE_DIR/bill-sql`` if set, else ``$XDG_CACHE_HOME/trainbill/bill-sql``
(``~/.cache/trainbill/bill-sql``). The cache is an optimisation only: an unreadable,
unwritable or corrupt entry means the SQL is compiled again, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from trainbill._cache import cache_root, store_text

__all__ = ["cache_dir", "load_sql", "store_sql"]

#: Modules whose source determines the SQL (``summary.py`` was once all of the last four).
_SOURCES = (
    "_classify.py",
    "_engine.py",
    "_expr.py",
    "cur.py",
    "focus.py",
    "summary.py",
    "_queries.py",
    "_duckdb_read.py",
    "_totals.py",
    "_sqlcache.py",
)


def cache_dir() -> Path:
    """Where compiled SQL is kept (see the module docstring)."""
    return cache_root("bill-sql")


@cache
def _code_version() -> str:
    """Hash of the SQL-shaping source plus the Ibis and DuckDB versions."""
    from importlib import metadata

    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in _SOURCES:
        h.update(name.encode())
        h.update((here / name).read_bytes())
    for dist in ("ibis-framework", "duckdb"):
        try:
            h.update(f"{dist}={metadata.version(dist)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist}=none".encode())
    return h.hexdigest()


def _path(key: Any) -> Path:
    digest = hashlib.sha256(json.dumps([_code_version(), key], sort_keys=True).encode()).hexdigest()
    return cache_dir() / f"{digest}.json"


def load_sql(key: Any) -> dict[str, str] | None:
    """The SQL statements stored for ``key`` (JSON-serialisable), or None."""
    from trainbill._io import read_input_text
    from trainbill.errors import TrainbillError

    with contextlib.suppress(OSError, ValueError, RecursionError, TrainbillError):
        doc = json.loads(read_input_text(_path(key), kind="cache"))
        if isinstance(doc, dict) and all(isinstance(v, str) for v in doc.values()):
            return doc
    return None


def store_sql(key: Any, sql: dict[str, str]) -> None:
    """Store ``sql`` for ``key``, atomically; a failure to write is ignored."""
    store_text(_path(key), json.dumps(sql))
