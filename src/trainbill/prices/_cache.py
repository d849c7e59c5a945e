"""The price cache: dated price points from ``trainbill prices update``, written atomically.

The cache is an ordinary catalog overlay directory (``prices.csv`` in the packaged schema plus a
``SCHEMA_VERSION`` file), so the catalog loader validates it exactly like a user's
``--catalog`` directory and nothing else needs to know where a price came from.

Writes go to a temporary file in the same directory, are flushed to disk and then renamed over
the old file (``os.replace`` is atomic on POSIX and Windows), so a crash or a failed fetch can
never leave a half-written cache: readers see the old file or the new one. Temporary names end
in ``.tmp`` (not ``.csv``) so a leftover never trips the loader's unknown-file check.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path

from trainbill._io import atomic_write_text
from trainbill._record import record
from trainbill.catalog import OPTIONS, PROVIDERS, SCHEMA_VERSION, PricePoint
from trainbill.errors import CatalogSchemaError

__all__ = ["COLUMNS", "CacheWrite", "read_cache", "write_atomic", "write_price_points"]

COLUMNS: tuple[str, ...] = (
    "provider", "region", "item", "option", "unit", "usd", "effective_from", "source",
)  # fmt: skip
_Key = tuple[str, str, str, str]


@record
class CacheWrite:
    """What an update changed: points added, points already known at the same price."""

    path: Path
    added: tuple[PricePoint, ...]
    unchanged: int
    total: int


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (``trainbill._io.atomic_write_text``)."""
    # The cache is trainbill's own file, read by this very command (it is an overlay).
    atomic_write_text(path, text, replace=True, own_input=True)


def read_cache(directory: Path) -> list[PricePoint]:
    """Price points already in a cache directory (empty when there is none yet).

    Validates like the catalog loader (same header, options, providers, numbers, dates) so a
    hand-edited cache fails here with file and line rather than being silently rewritten.
    """
    path = directory / "prices.csv"
    if not path.exists():
        return []
    try:
        return _read_cache_file(path)
    except UnicodeDecodeError as exc:
        msg = (
            f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}). To fix: delete the cache "
            "and re-run 'trainbill prices update'."
        )
        raise CatalogSchemaError(msg) from None
    except OSError as exc:
        msg = f"{path}: cannot read the price cache ({exc.strerror or exc.__class__.__name__})"
        raise CatalogSchemaError(msg) from None


def _read_cache_file(path: Path) -> list[PricePoint]:
    from trainbill._io import read_input_text

    out: list[PricePoint] = []

    def error(message: str, source: str) -> CatalogSchemaError:
        return CatalogSchemaError(f"{source}: {message}")

    text = read_input_text(path, kind="catalog", what="price cache", error=error)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        msg = (
            f"{path}: columns {reader.fieldnames} do not match {list(COLUMNS)}. To fix: "
            "delete the cache and re-run 'trainbill prices update'."
        )
        raise CatalogSchemaError(msg)
    for line, row in enumerate(reader, start=2):
        where = f"{path}, line {line}"
        try:
            point = PricePoint(
                provider=row["provider"],
                region=row["region"],
                item=row["item"],
                option=row["option"],
                unit=row["unit"],
                usd=float(row["usd"]),
                effective_from=date.fromisoformat(row["effective_from"]),
                source=row["source"],
            )
        except (TypeError, ValueError) as exc:
            msg = f"{where}: {exc}"
            raise CatalogSchemaError(msg) from None
        _validate(point, where)
        out.append(point)
    return out


def _validate(p: PricePoint, where: str) -> None:
    if p.provider not in PROVIDERS:
        msg = f"{where}, provider: {p.provider!r} not one of {', '.join(PROVIDERS)}"
        raise CatalogSchemaError(msg)
    if p.option not in OPTIONS:
        msg = f"{where}, option: {p.option!r} not one of {', '.join(OPTIONS)}"
        raise CatalogSchemaError(msg)
    if not math.isfinite(p.usd) or p.usd < 0:
        msg = f"{where}, usd: {p.usd} must be a finite number >= 0"
        raise CatalogSchemaError(msg)
    if not (p.region and p.item and p.unit and p.source):
        msg = f"{where}: region, item, unit and source are required"
        raise CatalogSchemaError(msg)


def _render(points: Iterable[PricePoint]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for p in sorted(
        points, key=lambda p: (p.provider, p.region, p.item, p.option, p.effective_from)
    ):
        writer.writerow(
            [p.provider, p.region, p.item, p.option, p.unit, repr(p.usd),
             p.effective_from.isoformat(), p.source]
        )  # fmt: skip
    return buf.getvalue()


def write_price_points(directory: Path, points: Sequence[PricePoint]) -> CacheWrite:
    """Merge freshly fetched points into the cache and write it atomically.

    A point is added unless the newest cached point for the same (provider, region, item,
    option) already has the same price: an unchanged price keeps its original date, so the
    history records *changes* rather than one row per update run. A point with the same key
    and date replaces the old one (a re-run on the same day after a price change wins).

    Everything is validated before anything is written; the ``SCHEMA_VERSION`` marker is
    written first so a reader never sees a new ``prices.csv`` without it.
    """
    for i, p in enumerate(points):
        _validate(p, f"fetched price point {i} ({p.item} {p.option})")
    existing = read_cache(directory)
    latest: dict[_Key, PricePoint] = {}
    for p in existing:
        key = (p.provider, p.region, p.item, p.option)
        if key not in latest or p.effective_from >= latest[key].effective_from:
            latest[key] = p
    merged = {(p.provider, p.region, p.item, p.option, p.effective_from): p for p in existing}
    added: list[PricePoint] = []
    unchanged = 0
    for p in points:
        key = (p.provider, p.region, p.item, p.option)
        prev = latest.get(key)
        if (
            prev is not None
            and prev.effective_from <= p.effective_from
            and math.isclose(prev.usd, p.usd, rel_tol=1e-9, abs_tol=1e-12)
        ):
            unchanged += 1
            continue
        merged[(*key, p.effective_from)] = p
        if prev is None or p.effective_from >= prev.effective_from:
            latest[key] = p
        added.append(p)
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(directory / "SCHEMA_VERSION", f"{SCHEMA_VERSION}\n")
    write_atomic(directory / "prices.csv", _render(merged.values()))
    return CacheWrite(
        path=directory / "prices.csv", added=tuple(added), unchanged=unchanged, total=len(merged)
    )
