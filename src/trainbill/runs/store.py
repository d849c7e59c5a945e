"""Where the registry lives and how each command opens it: one transaction per command.

* **Which database.** ``--db URL``, else ``TRAINBILL_DATABASE_URL``, else a SQLite file in the
  user's data directory (``default_path``, platformdirs). ``postgresql://`` URLs use psycopg 3
  (the ``registry-postgres`` extra); a bare path is a SQLite file.
* **Schema.** Alembic migrations shipped in ``migrations/`` run on first use, in the same
  transaction as the check before them; a database stamped with a revision this trainbill
  does not know was written by a newer one and is refused, naming the revision (never
  downgraded). PostgreSQL first uses are serialised by an advisory lock, SQLite's by the
  write lock every transaction takes.
* **Concurrency.** SQLite runs in WAL mode (readers never wait for the writer) with a busy
  timeout, and every transaction begins ``IMMEDIATE`` (takes the write lock at once, so two
  writers never deadlock upgrading a read lock); a transaction still refused as locked is
  retried a few times. Twenty ``runs record`` at once on one file all succeed.
* **Errors.** A server that cannot be reached is one line naming host and port; nothing has
  been written then, since nothing is written outside a transaction that commits.

SQLAlchemy and Alembic are imported here, and this module only by the ``runs`` use cases.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError
from sqlalchemy.orm import Session

from trainbill.errors import RegistryError, SchemaVersionError

__all__ = [
    "DATABASE_ENV",
    "MIGRATIONS",
    "Store",
    "database_url",
    "default_path",
    "open_store",
]

DATABASE_ENV = "TRAINBILL_DATABASE_URL"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: How long a SQLite writer waits for the lock before the driver gives up (then retried).
_BUSY_TIMEOUT_S = 30.0
_RETRIES = 8
#: Seconds a PostgreSQL connection attempt may take before "cannot reach".
_CONNECT_TIMEOUT_S = 5
#: Advisory-lock key that serialises first uses (migrations) on one PostgreSQL database.
_PG_LOCK = 0x7472_6E62  # "trnb"

T = TypeVar("T")


def default_path() -> Path:
    """The default SQLite file (``trainbill db path``): the user's data directory."""
    from platformdirs import user_data_path

    return user_data_path("trainbill", appauthor=False) / "runs.sqlite"


def database_url(db: str | None = None) -> str:
    """The SQLAlchemy URL of ``db`` (flag), else ``TRAINBILL_DATABASE_URL``, else the default
    file; ``postgresql://`` is given the psycopg 3 driver, a bare path becomes ``sqlite:///``."""
    raw = db or os.environ.get(DATABASE_ENV) or ""
    if not raw:
        return f"sqlite:///{default_path()}"
    if "://" not in raw:
        return f"sqlite:///{Path(raw).expanduser().resolve()}"
    for plain in ("postgresql://", "postgres://"):
        if raw.startswith(plain):
            return "postgresql+psycopg://" + raw.removeprefix(plain)
    return raw


def _where(url: Any) -> str:
    """Host and port of a server URL, or the file of a SQLite URL, for error lines."""
    if url.get_backend_name() == "sqlite":
        return f"SQLite file {url.database}"
    return f"{url.host or 'localhost'}:{url.port or 5432}"


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    lines = [x.strip() for x in str(orig).strip().splitlines() if x.strip()]
    return lines[0] if lines else type(orig).__name__


class Store:
    """An open registry: an engine whose schema is at this trainbill's head revision."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url
        self.backend = engine.url.get_backend_name()

    @property
    def where(self) -> str:
        """Host:port or file, for messages."""
        return _where(self.engine.url)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction: committed when the block ends, rolled back on any error."""
        with Session(self.engine, expire_on_commit=False) as s, s.begin():
            yield s

    def run(self, work: Callable[[Session], T]) -> T:
        """``work`` in one transaction, retried when SQLite reports the database locked
        (``work`` must not have effects outside the session)."""
        for attempt in range(_RETRIES):
            try:
                with self.session() as s:
                    return work(s)
            except OperationalError as exc:
                if "locked" not in str(exc).lower() or attempt == _RETRIES - 1:
                    raise RegistryError(
                        f"run database ({self.where}): {_first_line(exc)}"
                    ) from None
                time.sleep(0.05 * (attempt + 1) + random.random() * 0.05)
        raise AssertionError  # pragma: no cover - the loop returns or raises

    def close(self) -> None:
        """Release the engine's connections."""
        self.engine.dispose()


def _sqlite_engine(url: str) -> Engine:
    path = make_url(url).database
    if path and path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": _BUSY_TIMEOUT_S})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_con: Any, _record: Any) -> None:
        # The driver's own transaction handling is off; ``_on_begin`` issues BEGIN itself.
        dbapi_con.isolation_level = None
        cur = dbapi_con.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(con: Connection) -> None:
        con.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _engine(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise RegistryError(
            f"--db {url!r}: not a database URL; use postgresql://USER@HOST:PORT/DB or a "
            "SQLite file path"
        ) from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(url)
    if backend == "postgresql":
        try:
            return create_engine(url, connect_args={"connect_timeout": _CONNECT_TIMEOUT_S})
        except ImportError:
            raise RegistryError(
                "a PostgreSQL registry needs psycopg 3: pip install 'trainbill[registry-postgres]'"
            ) from None
    raise RegistryError(
        f"--db: unsupported database {backend!r}; allowed: sqlite (a file) or postgresql"
    )


def _alembic_config(connection: Connection) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The newest schema revision this trainbill ships."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head


def current_revision(connection: Connection) -> str | None:
    """The revision the database is stamped with (None: empty database)."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def _upgrade(connection: Connection) -> None:
    """Bring the schema to head inside the caller's transaction; refuse a newer one."""
    from alembic import command
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK})
    cfg = _alembic_config(connection)
    script = ScriptDirectory.from_config(cfg)
    current = current_revision(connection)
    if current is not None:
        try:
            script.get_revision(current)
        except CommandError:
            raise SchemaVersionError(
                f"the run database ({_where(connection.engine.url)}) has schema version "
                f"{current}, newer than this trainbill knows (up to {script.get_current_head()})"
                ": upgrade trainbill; it is never downgraded"
            ) from None
        if current == script.get_current_head():
            return
    command.upgrade(cfg, "head")


def open_store(db: str | None = None) -> Store:
    """Open the registry (``database_url``), migrating it to head on first use.

    Raises:
        RegistryError: an unreachable server (naming host and port), an unsupported URL.
        SchemaVersionError: a database written by a newer trainbill.
    """
    url = database_url(db)
    engine = _engine(url)
    for attempt in range(_RETRIES):
        try:
            with engine.begin() as con:
                _upgrade(con)
            break
        except OperationalError as exc:
            locked = "locked" in str(exc).lower()
            if not locked or attempt == _RETRIES - 1:
                engine.dispose()
                raise RegistryError(
                    f"cannot reach the run database at {_where(engine.url)}: {_first_line(exc)}"
                ) from None
            time.sleep(0.05 * (attempt + 1) + random.random() * 0.05)
        except DBAPIError as exc:
            engine.dispose()
            raise RegistryError(
                f"run database at {_where(engine.url)}: {_first_line(exc)}"
            ) from None
        except BaseException:
            engine.dispose()
            raise
    return Store(engine, url)
