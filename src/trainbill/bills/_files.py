"""Find bill files, read their headers and decide which format they are in.

This is the only part of ``trainbill.bills`` that looks at files with plain Python (the csv
module; a Parquet footer through DuckDB): a header is enough to tell FOCUS from CUR 2.0, and
doing it before any engine starts lets us refuse a bad file in milliseconds with a message that
names the file and the columns we expected. The same module walks files row by row on the
*error path only* (a non-numeric cost, a second currency) to name the exact file and row, which
a SQL engine cannot do cheaply.
"""

from __future__ import annotations

import csv
import decimal
import functools
import gzip
import hashlib
import io
import json
import math
import os
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from trainbill._io import check_input_file, note_input, read_input_text
from trainbill.bills._formats import (
    CUR2_REQUIRED,
    FOCUS_11_COLUMNS,
    FOCUS_12_COLUMNS,
    FOCUS_REQUIRED,
    BillFile,
    BillFormat,
    canonical_column,
    detect,
)
from trainbill.errors import BillError, UnsupportedBillError

#: ``CUR2_REQUIRED`` … ``canonical_column``: the format rules (``_formats``), read from here
#: as before the split.
__all__ = [
    "CUR2_REQUIRED",
    "FOCUS_11_COLUMNS",
    "FOCUS_12_COLUMNS",
    "FOCUS_REQUIRED",
    "BillFile",
    "BillFormat",
    "canonical_column",
    "detect",
    "discover",
    "find_bad_number",
    "find_other_value",
    "find_ragged_row",
    "remote_kind",
    "remote_uri",
]

#: A legacy CUR billing period's folder (``20240101-20240201``), holding one folder per report
#: version (assembly).
_LEGACY_PERIOD = re.compile(r"^\d{8}-\d{8}$")


_CSV_SUFFIXES = (".csv", ".csv.gz")
_PARQUET_SUFFIXES = (".parquet",)


#: URI schemes of remote bill files (Spark's S3 connector, ``hadoop-aws``); ``s3://`` is read
#: as ``s3a://``, the connector's scheme outside EMR.
REMOTE_SCHEMES: tuple[str, ...] = ("s3a://", "s3://")


def remote_uri(raw: str | Path) -> str | None:
    """``raw`` as the ``s3a://`` URI Spark reads, or ``None`` for a local path."""
    if not isinstance(raw, str):  # a ``Path`` is local (and has folded ``//`` already)
        return None
    scheme, sep, rest = raw.partition("://")
    if not sep or scheme.lower() + "://" not in REMOTE_SCHEMES:
        return None
    return "s3a://" + rest


def remote_kind(uri: str) -> str:
    """A remote file's kind by its name: CSV for ``.csv``/``.csv.gz``, else Parquet (a file or
    a Data Exports folder of Parquet parts, the format CUR 2.0 and FOCUS exports default to)."""
    return _kind(Path(uri.rstrip("/"))) or "parquet"


def _kind(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(_CSV_SUFFIXES):
        return "csv"
    if name.endswith(_PARQUET_SUFFIXES):
        return "parquet"
    return None


def _open_text(path: Path) -> io.TextIOBase:
    """Open a CSV or gzip-compressed CSV as text (gzip is detected by magic bytes, not name)."""
    with path.open("rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return path.open(encoding="utf-8-sig", newline="")


@functools.cache
def duckdb_database() -> Any:
    """This process's in-memory DuckDB database; header reads and the engine take cursors of it.

    Opening a DuckDB database costs 20-40 ms, a tenth of a bare scan of a 5-million-row bill
    (the benchmark ``bill summary`` is held to), so the process opens one. Each cursor is its own
    connection (own temp views and settings) over the shared database and buffer pool.
    """
    import duckdb

    return duckdb.connect()


def _parquet_columns(path: Path) -> tuple[str, ...]:
    """Column names from a Parquet footer; DuckDB when present (already needed to read the
    bill, and 60 ms faster to import than ``pyarrow.parquet``), else PyArrow (Spark-only setups)."""
    try:
        import duckdb
    except ImportError:
        import pyarrow.parquet as pq

        return tuple(pq.read_schema(path).names)
    with duckdb_database().cursor() as con:
        try:
            cursor = con.execute("SELECT * FROM read_parquet(?) LIMIT 0", [str(path)])
        except duckdb.Error as exc:
            raise ValueError(str(exc).splitlines()[0]) from None
        return tuple(str(d[0]) for d in cursor.description or ())


_PARQUET_MAGIC = b"PAR1"


def _content_kind(path: Path) -> str | None:
    """What the first bytes say the file is (``parquet``, ``gzip``), whatever its name."""
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError:
        return None  # the caller's read reports it
    if magic == _PARQUET_MAGIC:
        return "parquet"
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    return None


def _first_line(path: Path) -> str:
    """The header line decoded as UTF-8, read alone so a bad byte further down is not blamed
    on the header (the query reports those with their line)."""
    if _content_kind(path) == "gzip":
        with gzip.open(path, "rb") as gz:
            line = gz.readline()
    else:
        with path.open("rb") as fh:
            line = fh.readline()
    # A file with classic-Mac CR-only line endings has no LF: the "line" is the whole file.
    # The header ends at the first CR or LF whichever the file uses (a header never holds one).
    return str(line.split(b"\r", 1)[0].decode("utf-8-sig"))


def _header(path: Path, kind: str) -> tuple[str, ...]:
    content = _content_kind(path)
    if kind == "csv" and content == "parquet":
        raise UnsupportedBillError(
            f"{path}: this is a Parquet file with a CSV name; rename it to end in .parquet"
        )
    gz_name = path.name.lower().endswith(".gz")
    if kind == "csv" and (content == "gzip") != gz_name:
        # The header reader goes by content, the engines by name: they must agree.
        fix = "rename it to end in .csv.gz" if content == "gzip" else "rename it to end in .csv"
        what = "gzip-compressed" if content == "gzip" else "not gzip-compressed"
        raise UnsupportedBillError(f"{path}: the file is {what} but named {path.name!r}; {fix}")
    if kind == "parquet" and content != "parquet":
        what = "gzip-compressed" if content == "gzip" else "not Parquet (perhaps CSV)"
        raise UnsupportedBillError(
            f"{path}: the file is {what}; a .parquet file must start with the Parquet magic "
            "bytes 'PAR1'; give a CSV bill a .csv or .csv.gz name"
        )
    try:
        if kind == "parquet":
            columns = _parquet_columns(path)
        else:
            row = next(csv.reader(io.StringIO(_first_line(path))), None)
            if not row or row == [""]:
                raise UnsupportedBillError(f"{path}: the file is empty (no header row)")
            columns = tuple(c.strip() for c in row)
    except UnicodeDecodeError as exc:
        raise BillError(
            f"{path}: the header is not UTF-8 text (byte {exc.object[exc.start : exc.end]!r} at "
            f"offset {exc.start}); export the bill as UTF-8"
        ) from None
    except (OSError, EOFError, ValueError, csv.Error) as exc:
        raise BillError(f"{path}: cannot read the header: {exc}") from None
    _refuse_duplicates(path, columns)
    return columns


def _refuse_duplicates(path: Path, columns: Sequence[str]) -> None:
    """Two columns whose names differ at most in case: which one holds the cost is a guess
    (and DuckDB, whose names are case-insensitive, would rename one), so refuse the file."""
    first: dict[str, int] = {}
    for i, name in enumerate(columns, start=1):
        key = name.lower()
        if key in first:
            j = first[key]
            raise UnsupportedBillError(
                f"{path}: column {name!r} (column {i}) duplicates {columns[j - 1]!r} "
                f"(column {j}); column names must be unique, ignoring case"
            )
        first[key] = i


def _manifest_files(manifest: Path) -> list[Path]:
    """Data files listed in a CUR 2.0 ``*-Manifest.json`` (``dataFiles``) or a legacy CUR one
    (``reportKeys``), resolved inside its export folder.

    The manifest names S3 objects (``s3://bucket/prefix/export/data/BILLING_PERIOD=…/x.csv.gz``);
    a downloaded export keeps the key's tail, so we match the longest key suffix that exists.
    """
    text = read_input_text(manifest, kind="manifest", what="manifest", error=_bill_error)
    try:
        doc = json.loads(text)
        field = "dataFiles" if "dataFiles" in doc or "reportKeys" not in doc else "reportKeys"
        entries = doc[field]
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise BillError(f"{manifest}: not a readable Data Exports manifest ({exc})") from None
    if not isinstance(entries, list) or not all(isinstance(e, str) and e for e in entries):
        raise BillError(
            f"{manifest}: {field}: expected a list of data file keys (s3://…/x.csv.gz), "
            f"got {entries!r:.80}"
        )
    if not entries:
        raise BillError(
            f"{manifest}: {field} is empty: the export lists no data files for this period"
        )
    roots = [manifest.parent, *manifest.parents]
    found: list[Path] = []
    for entry in entries:
        key = str(entry).split("://", 1)[-1]
        parts = key.split("/")
        hit = None
        for start in range(len(parts)):
            tail = Path(*parts[start:])
            for root in roots[:4]:
                candidate = root / tail
                if candidate.is_file():
                    hit = candidate
                    break
            if hit is not None:
                break
        if hit is None:
            raise BillError(
                f"{manifest}: {field} entry {entry!r} is not in the folder; "
                "download the whole export (manifest and data/ folder) together"
            )
        if _kind(hit) is None:
            raise UnsupportedBillError(
                f"{manifest}: {field} entry {entry!r} is not a .csv, .csv.gz or .parquet file"
            )
        found.append(hit)
    return found


def _refuse_export_versions(folder: Path, files: Sequence[Path]) -> None:
    """Refuse a Data Exports folder, read without its manifests, holding one billing period in
    several versions.

    An export set to "create new data export version" writes each refresh of a month to its own
    ``BILLING_PERIOD=YYYY-MM/<execution>/`` folder; without the ``metadata/`` manifests (which
    name the current version) every version would be summed: the month counted twice or more.
    A legacy CUR report does the same: ``yyyymmdd-yyyymmdd/<assemblyId>/`` per version.
    """
    versions: dict[str, set[Path]] = defaultdict(set)
    for f in files:
        for i, part in enumerate(f.parts):
            if part.upper().startswith("BILLING_PERIOD=") or _LEGACY_PERIOD.match(part):
                # The period's own folder (files directly in it) or its execution subfolder.
                versions[part].add(Path(*f.parts[: i + 2]) if i + 2 < len(f.parts) else f.parent)
                break
    for period, dirs in sorted(versions.items()):
        subfolders = sorted(dirs)
        if len(subfolders) > 1:
            names = ", ".join(d.name for d in subfolders)
            raise BillError(
                f"{folder}: {period} holds {len(subfolders)} export versions ({names}); summing "
                "them would count the month more than once: include the export's manifests "
                "(a *-Manifest.json names the current version) or keep only one version"
            )


def _current_manifests(manifests: Sequence[Path]) -> list[Path]:
    """The manifests that name a period's current files. A legacy CUR period folder
    (``20240101-20240201/``) holds the period's manifest, naming the current assembly, and each
    assembly folder under it its own copy: an older assembly's would add a superseded version."""
    periods = {m.parent for m in manifests if _LEGACY_PERIOD.match(m.parent.name)}
    return [m for m in manifests if m.parent.parent not in periods]


def _period_folder(file: Path) -> Path | None:
    """The billing period folder ``file`` lies in (``…/BILLING_PERIOD=2026-09``, legacy CUR's
    ``…/20240101-20240201``), or ``None``."""
    for i, part in enumerate(file.parts):
        if part.upper().startswith("BILLING_PERIOD=") or _LEGACY_PERIOD.match(part):
            return Path(*file.parts[: i + 1]).resolve()
    return None


def _expand(path: Path) -> list[Path]:
    """One argument's data files: a Data Export (manifests) or any other folder, a manifest, a
    file.

    In a Data Exports folder where only some periods have a manifest (one not downloaded, or
    not yet written), each other period is read as in a folder without manifests: every
    file in it, refused if it holds several export versions. Reading only the
    manifests' files silently dropped those periods (a two-month folder read as one month);
    refusing would make the user delete data to read a bill that is not ambiguous.
    """
    if path.is_dir():
        manifests = _current_manifests(sorted(path.rglob("*-Manifest.json")))
        files = sorted(p for p in path.rglob("*") if p.is_file() and _kind(p) is not None)
        if manifests:
            listed = [f for manifest in manifests for f in _manifest_files(manifest)]
            covered = {_period_folder(f) for f in listed} - {None}
            unlisted = [f for f in files if (period := _period_folder(f)) and period not in covered]
            _refuse_export_versions(path, unlisted)
            return listed + unlisted
        if not files:
            raise BillError(f"{path}: folder holds no .csv, .csv.gz or .parquet bill files")
        _refuse_export_versions(path, files)
        return files
    if path.is_file() and path.name.endswith("-Manifest.json"):
        return list(_manifest_files(path))
    if path.is_file():
        if _kind(path) is None:
            raise UnsupportedBillError(
                f"{path}: unknown file type; expected .csv, .csv.gz or .parquet "
                "(or a Data Exports *-Manifest.json)"
            )
        return [path]
    if not os.path.lexists(path):
        raise BillError(f"{path}: no such file or folder")
    # It exists but is no file or folder: say what it is (a FIFO, a device, a link loop).
    check_input_file(path, what="bill file", error=_bill_error)
    raise BillError(f"{path}: not a regular file or folder")  # pragma: no cover - raised above


def _bill_error(message: str, source: str) -> BillError:
    """The input gate's error factory for bills (``trainbill._io.ErrorFactory``)."""
    return BillError(f"{source}: {message}")


_BOM = b"\xef\xbb\xbf"


def _content_key(path: Path) -> tuple[int, str]:
    """(size without a byte-order mark, hash of the bytes after it): one bill saved twice, once
    by a spreadsheet that added a BOM, has one key. Only computed for files of equal size."""
    h = hashlib.blake2b(digest_size=16)
    with path.open("rb") as fh:
        head = fh.read(len(_BOM))
        size = 0
        if head != _BOM:
            h.update(head)
            size += len(head)
        while chunk := fh.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return size, h.hexdigest()


def _refuse_same_content(paths: Sequence[Path]) -> None:
    """Refuse two names holding the same bill (a copy, or a copy with a BOM): read twice, every
    charge was counted twice. Files of different sizes (BOM aside) are never read for this."""
    by_size: dict[int, list[Path]] = {}
    for p in paths:
        st = p.stat()
        with p.open("rb") as fh:
            bom = len(_BOM) if fh.read(len(_BOM)) == _BOM else 0
        by_size.setdefault(st.st_size - bom, []).append(p)
    for group in by_size.values():
        if len(group) < 2:
            continue
        seen: dict[tuple[int, str], Path] = {}
        for p in group:
            first = seen.setdefault(_content_key(p), p)
            if first is not p:
                msg = (
                    f"{p}: the same bill as {first} (identical content); give each bill once, "
                    "or it is counted twice"
                )
                raise BillError(msg)


def discover(paths: Sequence[str | Path]) -> tuple[BillFile, ...]:
    """Expand files and folders into data files with their headers.

    A folder holding ``*-Manifest.json`` files is read as a CUR 2.0 Data Export: exactly the
    files its manifests list. Any other folder contributes every CSV, CSV.gz and Parquet file
    under it.

    Raises:
        BillError: a path does not exist, a folder holds no bill files, or a file's type is unknown.
    """
    if not paths:
        raise BillError("no bill files given; pass one or more FOCUS or CUR 2.0 files or folders")
    out = [p for raw in paths for p in _expand(Path(raw))]
    seen: set[tuple[int, int]] = set()
    unique: list[Path] = []
    for p in out:
        st = p.stat()
        note_input(p, st)  # the output gate will not write over a bill this command reads
        key = (st.st_dev, st.st_ino)  # a link (symbolic or hard) to one file is that file
        if key in seen:
            continue
        seen.add(key)
        unique.append(p)
    # Two files named on the command line holding one bill. (Inside a folder, parts of one
    # export may be byte-identical across periods in tests' fixtures; the export-version rule
    # guards folders.)
    named = {
        (st.st_dev, st.st_ino): p for p in map(Path, paths) if p.is_file() and (st := p.stat())
    }
    _refuse_same_content(list(named.values()))
    result: list[BillFile] = []
    for p in unique:
        kind = _kind(p) or "csv"
        result.append(BillFile(path=p, kind=kind, columns=_header(p, kind)))
    if not result:  # pragma: no cover - every branch above adds a file or raises
        raise BillError("no bill files found in " + ", ".join(str(p) for p in paths))
    return tuple(result)


def _iter_column(file: BillFile, column: str) -> Iterator[Any]:
    """Yield one column's raw values in file order (error path only)."""
    if file.kind == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(file.path)
        # The file's own spelling: ``column`` may come from another file of the bill (a CSV
        # saying ``billingcurrency``), and DuckDB matches names case-insensitively.
        spelled = next((c for c in pf.schema_arrow.names if c.lower() == column.lower()), column)
        for batch in pf.iter_batches(columns=[spelled], batch_size=65536):
            yield from batch.column(0).to_pylist()
        return
    with _open_text(file.path) as fh:
        reader = csv.reader(fh)
        header = next(reader)
        idx = [h.strip().lower() for h in header].index(column.lower())
        for row in reader:
            if row:  # blank lines are not rows, to the engines either
                yield row[idx] if idx < len(row) else None


def find_ragged_row(file: BillFile) -> tuple[int, int] | None:
    """First (1-based data row, cell count) of a CSV row whose cell count differs from the
    header's (blank lines are skipped, as the engines do), or ``None`` (error path only)."""
    if file.kind != "csv":
        return None
    with _open_text(file.path) as fh:
        reader = csv.reader(fh)
        width = len(next(reader, []))
        for i, row in enumerate((r for r in reader if r), start=1):
            if len(row) != width:
                return i, len(row)
    return None


def _is_null(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().upper() in {"", "NULL"})


#: Largest absolute cost a row may carry (money is summed in int64 nano-units; see ``_expr``).
MAX_AMOUNT = 9e9


#: What the queries accept as a number written as text (``_expr.money``/``quantity``): ASCII
#: digits, an optional sign, point and exponent. Python's ``float`` alone would also take
#: ``1_000`` and non-ASCII digits, so the error path would miss the row the query refused.
_NUMBER_RE = re.compile(
    r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:nan|inf|infinity)",
    re.IGNORECASE,
)


#: What the queries trim from a text value before reading it as a number.
_TRIMMED = " \t\n"
#: Text money is parsed at 12 decimal places (``_expr.MONEY``), rounded half away from zero.
_MONEY_PLACES = decimal.Decimal(1).scaleb(-12)


def _exact(value: Any) -> decimal.Decimal | None:
    """``value`` as the exact number the queries compare with the limit (``_expr.money``):
    a DECIMAL or a double as it is, text rounded to 12 places as it is parsed; ``None``
    when it is not finite."""
    if isinstance(value, float):
        return decimal.Decimal(value) if math.isfinite(value) else None
    number = decimal.Decimal(value) if isinstance(value, int | decimal.Decimal) else None
    if number is None:
        number = decimal.Decimal(str(value).strip())
        places = number.as_tuple().exponent
        # Rounding only matters near the limit; a 60-digit number is beyond it either way.
        if number.is_finite() and places < -12 and number.adjusted() < 40:  # type: ignore[operator]
            with decimal.localcontext(prec=80):
                number = number.quantize(_MONEY_PLACES, rounding=decimal.ROUND_HALF_UP)
    return number if number.is_finite() else None


def find_bad_number(
    files: Sequence[BillFile], column: str, *, limit: float | None = MAX_AMOUNT
) -> tuple[Path, int, str, str] | None:
    """First (file, 1-based data row, value, what is wrong) whose ``column`` is not a finite
    number (below ``limit`` in absolute value, when given), or ``None``.

    What is wrong reads "is not a number" (``abc``, ``NaN``, ``inf``) or, for a number written
    out past ``limit`` (``10000000000.5``, ``1e400``), "is beyond the exact ±9 billion range":
    it is a number, only too large to sum exactly. Without a limit, ``1e400`` is not finite.
    The limit is compared exactly, as the queries compare it: through ``float``, a valid
    ``8999999999.9999999999`` rounded up to 9e9 and was blamed instead of the row beyond it.
    """
    bound = None if limit is None else decimal.Decimal(repr(limit))
    for file in files:
        if not file.local or column.lower() not in {c.lower() for c in file.columns}:
            continue  # a Trino/Athena table or an S3 file cannot be walked row by row from here
        for i, value in enumerate(_iter_column(file, column), start=1):
            if _is_null(value):
                continue
            if isinstance(value, int | float | decimal.Decimal):
                literal = not isinstance(value, float) or math.isfinite(value)  # NaN, inf
            else:
                # The blanks the queries trim (Ibis ``strip``: space, tab, newline), not every
                # Unicode space: a no-break space passed here but failed the query, whose error
                # then named no row.
                text = str(value).strip(_TRIMMED)
                if not _NUMBER_RE.fullmatch(text):
                    return file.path, i, str(value), "is not a number"
                literal = text.lstrip("+-")[:1] not in ("n", "N", "i", "I")  # 1e400, not NaN/inf
            number = _exact(value) if literal else None
            # Quantities are doubles in the queries: ``1e400`` is not finite there.
            finite = number is not None and (bound is not None or math.isfinite(float(number)))
            if not finite and not (literal and bound is not None):
                return file.path, i, str(value), "is not a number"
            if bound is not None and (number is None or not abs(number) < bound):
                return (
                    file.path,
                    i,
                    str(value),
                    f"is beyond the exact ±{bound.scaleb(-9).normalize()} billion range",
                )
    return None


def find_other_value(
    files: Sequence[BillFile], column: str, expected: str
) -> tuple[Path, int, str] | None:
    """First (file, 1-based data row, value) whose ``column`` is set and differs from
    ``expected``."""
    for file in files:
        if not file.local or column.lower() not in {c.lower() for c in file.columns}:
            continue  # a Trino/Athena table or an S3 file cannot be walked row by row from here
        for i, value in enumerate(_iter_column(file, column), start=1):
            if _is_null(value):
                continue
            if str(value).strip() != expected:
                return file.path, i, str(value).strip()
    return None
