"""The one way trainbill reads a file the user names, and the one way it writes one.

**Reading: the input gate** (``read_input_text``, ``check_input_file``, ``parse_toml`` /
``parse_json`` / ``parse_yaml``). Every reader of a user's file (plan, cluster import, claims
and the plan they name, calibration, catalog overlay, usage CSV, profile script, bills) comes
through here, so one rule protects the process from what it is pointed at:

* **A regular file.** Symbolic links are followed; a loop is refused by name. A FIFO, a device
  (``/dev/zero``, ``/dev/urandom``), a socket or a directory is refused before a byte is read:
  a FIFO blocked forever and ``/dev/zero`` was read until memory ran out. The file is opened
  non-blocking and checked again by ``fstat`` on the open descriptor, so a name swapped for a
  FIFO between the check and the open cannot block either.
* **Of bounded size**, per kind (``INPUT_LIMITS``): the size is checked before reading, and no
  more than the cap (plus one byte) is ever read, so a file that grows meanwhile (or a
  ``/proc`` file that says 0 bytes) is refused too. Bills are exempt (gigabytes are normal):
  ``check_input_file`` only checks the kind and they are streamed by DuckDB.
* **Of bounded depth and range**: ``parse_*`` refuse a document nested deeper than
  ``MAX_DEPTH`` and an integer beyond ``MAX_MAGNITUDE`` before any arithmetic sees it (a
  400-digit integer overflowed a float conversion; 10,000 nested arrays were a
  ``RecursionError``), and a YAML mapping that repeats a key (the last one silently won).

Each refusal is one line naming the file and the limit, raised through the caller's error
factory (``SpecError`` by default) so each reader keeps its own exception type.

**Writing** follows. Every file a command writes goes through here, so one rule protects what
the user owns:

* **Atomic.** A temp file in the destination's folder is written, flushed to disk and then
  committed in one step. A crash or an error leaves either the old file or the new one, never a
  mixture, and never a stray temp file.
* **No clobber unless asked.** Without ``replace`` the commit is ``os.link(tmp, dest)``, which
  fails if ``dest`` exists *at that instant*: the existence check and the write are one
  operation, so a file created while a long report was being built is never silently replaced
  and of eight parallel writers exactly one wins. (A check at the start and a rename at the end
  leave a window of seconds in which another file can appear.)
* **Only regular files are replaced.** ``replace`` renames over an existing *regular* file; a
  FIFO, a device node, a socket or a symlink is refused (renaming over ``/dev/full`` as root
  deletes the device node; renaming over a symlink replaces the link, not what it points to).
* **Never a command's own input.** ``destination_problem`` compares by file identity
  (device and inode), so ``-o ./plan.toml`` for ``plan.toml`` or a hard link to it is refused
  however the path is spelled.

Callers turn the ``DestinationError`` / ``OSError`` into their own error type, naming the flag.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import stat
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from trainbill.errors import (
    DestinationError,
    SpecError,
    TrainbillError,
    unreadable_value_message,
)

__all__ = [
    "INPUT_LIMITS",
    "MAX_DEPTH",
    "MAX_MAGNITUDE",
    "DestinationError",
    "ErrorFactory",
    "atomic_write_all",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_document",
    "check_input_file",
    "check_number",
    "command_inputs",
    "destination_problem",
    "note_input",
    "parse_json",
    "parse_toml",
    "parse_yaml",
    "read_input_bytes",
    "read_input_text",
]

_MiB = 1024 * 1024
#: The largest file of each kind trainbill reads, in bytes. Each is far above any real file of
#: the kind (a plan is a few KB; the packaged ``prices.csv`` is under 1 MB; a Terraform plan's
#: JSON for a GPU cluster a few hundred KB) and low enough that parsing the largest takes
#: seconds, not minutes (PyYAML reads ~2.5 MB/s: a 100 MB SkyPilot YAML took ~42 s).
INPUT_LIMITS: dict[str, int] = {
    "plan": 1 * _MiB,
    "claims": 1 * _MiB,
    "import": 8 * _MiB,
    "calibration": 8 * _MiB,
    "catalog": 64 * _MiB,
    "usage": 4 * _MiB,
    "script": 4 * _MiB,
    "manifest": 16 * _MiB,
    "cache": 64 * _MiB,
}
#: Nesting levels a parsed document may have (a plan has 3; a Terraform plan's JSON ~12).
MAX_DEPTH = 64
#: The largest magnitude of a number read from a file or flag: the largest float. An integer
#: beyond it (Python's have no bound: TOML and JSON read a 400-digit one happily) raises
#: ``OverflowError`` in the first float conversion; below it each field's own validator gives
#: the field's range (a plan's node limit, say) in its own words.
MAX_MAGNITUDE = sys.float_info.max
_DEEP = f"nested too deeply (over {MAX_DEPTH} levels); no valid file of this kind nests that deep"
#: Builds the caller's exception from (message, file); the default is ``SpecError``.
ErrorFactory = Callable[[str, str], TrainbillError]


def _spec_error(message: str, source: str) -> TrainbillError:
    return SpecError(message, source=source)


def _size(n: int) -> str:
    return f"{n / _MiB:,.1f} MiB" if n >= _MiB else f"{n:,} bytes"


def _kind_of_mode(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _not_regular(mode: int, what: str) -> str:
    return f"cannot read {what}: {_kind_of_mode(mode)}, not a regular file"


def _stat_problem(exc: OSError, what: str) -> str:
    if exc.errno == errno.ELOOP:
        return f"cannot read {what}: a symbolic link loop (too many levels of symbolic links)"
    if isinstance(exc, FileNotFoundError):
        return f"{what} not found"
    if exc.errno == errno.ENAMETOOLONG:
        return "file name too long"
    return f"cannot read {what}: {exc.strerror or exc.__class__.__name__}"


#: Every file the input gate let through in this command, by identity (device, inode) → the
#: name it was read under. The output gate refuses to write over any of them, ``--force`` or
#: not: a calibration, an overlay's ``prices.csv``, the plan a claims file names are all inputs,
#: and a write discovered to name one only at the end is still refused before any byte lands.
_INPUTS_READ: dict[tuple[int, int], str] = {}


def note_input(path: Path | str, st: os.stat_result | None = None) -> None:
    """Record ``path`` as read by this command (the readers that stream files themselves)."""
    if not _TRACKING[0]:
        return
    try:
        st = st or Path(path).stat()
    except OSError:
        return
    _INPUTS_READ.setdefault((st.st_dev, st.st_ino), str(path))


#: Whether a command is running (``command_inputs``): only then are reads recorded. A program
#: using the library may read a calibration and later rewrite it on purpose.
_TRACKING: list[bool] = [False]


@contextlib.contextmanager
def command_inputs() -> Iterator[None]:
    """Run one command: the files it reads are recorded for the output gate, then forgotten
    (tests run many commands in one process, and a deleted file's inode number is reused)."""
    _INPUTS_READ.clear()
    _TRACKING[0] = True
    try:
        yield
    finally:
        _TRACKING[0] = False
        _INPUTS_READ.clear()


def _input_named(path: Path) -> str | None:
    """The name under which the command read the file at ``path`` (links and hard links
    resolved by identity), or None."""
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return _INPUTS_READ.get((st.st_dev, st.st_ino))


def check_input_file(
    path: Path | str, *, what: str = "file", error: ErrorFactory = _spec_error
) -> os.stat_result:
    """Refuse anything but an existing regular file (links followed, loops refused); the file's
    ``stat``. For files streamed by another reader (bills: DuckDB; a profile script: Python)."""
    source = str(path)
    try:
        st = Path(path).stat()
    except OSError as exc:
        raise error(_stat_problem(exc, what), source) from None
    except ValueError:  # an embedded NUL byte
        raise error(f"{what} name holds a NUL byte", source) from None
    if not stat.S_ISREG(st.st_mode):
        raise error(_not_regular(st.st_mode, what), source)
    note_input(path, st)
    return st


def read_input_bytes(
    path: Path | str, *, kind: str, what: str = "file", error: ErrorFactory = _spec_error
) -> bytes:
    """The bytes of a regular file of at most ``INPUT_LIMITS[kind]`` bytes (module docstring)."""
    limit = INPUT_LIMITS[kind]
    source = str(path)
    st = check_input_file(path, what=what, error=error)
    too_big = f"{what} is over the {_size(limit)} limit for a {kind} file"
    if st.st_size > limit:
        raise error(f"{too_big} ({_size(st.st_size)})", source)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(_stat_problem(exc, what), source) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped after the check
            raise error(_not_regular(mode, what), source)
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(limit + 1 - got, _MiB))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise error(
            f"cannot read {what}: {exc.strerror or exc.__class__.__name__}", source
        ) from None
    finally:
        os.close(fd)
    if got > limit:
        raise error(too_big, source)
    return b"".join(chunks)


def read_input_text(
    path: Path | str, *, kind: str, what: str = "file", error: ErrorFactory = _spec_error
) -> str:
    """``read_input_bytes`` decoded as UTF-8; a leading byte-order mark (Windows editors and
    spreadsheets write one) is dropped."""
    data = read_input_bytes(path, kind=kind, what=what, error=error)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        shown = exc.object[exc.start : exc.start + 1]
        msg = f"not UTF-8 text (byte {exc.start}: {shown!r}); save the {what} as UTF-8"
        raise error(msg, str(path)) from None


def check_number(value: Any, *, where: str, source: str, error: ErrorFactory = _spec_error) -> None:
    """Refuse an integer beyond ``MAX_MAGNITUDE`` (``where`` names it) before arithmetic: Python
    integers have no bound, and converting a 400-digit one to a float raised ``OverflowError``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return  # a float cannot overflow: each field's own validator gives its allowed range
    if abs(value) > MAX_MAGNITUDE:
        shown = str(value)
        shown = shown if len(shown) <= 24 else f"{shown[:12]}… ({len(shown):,} digits)"
        msg = f"{where}: {shown} is out of range; numbers are limited to ±{MAX_MAGNITUDE:.3g}"
        raise error(msg, source)


def check_document(doc: Any, *, source: str, error: ErrorFactory = _spec_error) -> Any:
    """``doc`` unchanged, or refused: nested deeper than ``MAX_DEPTH`` or holding a number
    beyond ``MAX_MAGNITUDE``. Iterative, so no document can exhaust the stack here."""
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, dict | list | tuple):
            if depth >= MAX_DEPTH:
                raise error(f"{_DEEP} (at {shown_path(where)})", source)
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, value in items:
                stack.append((value, f"{where}.{key}" if where else str(key), depth + 1))
        else:
            check_number(node, where=where or "value", source=source, error=error)
    return doc


def shown_path(where: str) -> str:
    """A dotted place in a document, cut to its last few steps for an error line."""
    parts = where.split(".") if where else ["top"]
    return where if len(parts) <= 6 else "….".join(["", ".".join(parts[-5:])])


def _too_deep(source: str, error: ErrorFactory) -> TrainbillError:
    return error(_DEEP, source)


def parse_toml(text: str, *, source: str, error: ErrorFactory = _spec_error) -> dict[str, Any]:
    """TOML text as a mapping, checked by ``check_document``; one error line otherwise."""
    try:
        doc = tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        raise error(f"invalid TOML: {exc}", source) from None
    except ValueError as exc:  # parsed, but a value cannot be built (a 5,000-digit integer)
        raise error(f"invalid TOML: {unreadable_value_message(exc)}", source) from None
    except RecursionError:  # tomllib recurses per nesting level
        raise _too_deep(source, error) from None
    check_document(doc, source=source, error=error)
    return doc


def parse_json(text: str, *, source: str, error: ErrorFactory = _spec_error) -> Any:
    """JSON text, checked by ``check_document``; one error line otherwise."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", source
        ) from None
    except ValueError as exc:  # parsed, but a value cannot be built (a 5,000-digit number)
        raise error(f"invalid JSON: {unreadable_value_message(exc)}", source) from None
    except RecursionError:
        raise _too_deep(source, error) from None
    return check_document(doc, source=source, error=error)


@functools.cache
def _yaml_loader() -> Any:
    """A safe loader that refuses a mapping repeating a key (PyYAML keeps the last silently:
    ``num_nodes: 4 … num_nodes: 999`` was priced at 999)."""
    import yaml

    class _Strict(yaml.SafeLoader):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the base class reports it
                    continue
                if first is not key_node:
                    mark = key_node.start_mark
                    line, first_line = mark.line + 1, first.start_mark.line + 1
                    msg = f"duplicate key {key!r} at line {line} (first at line {first_line})"
                    raise yaml.constructor.ConstructorError(None, None, msg, mark)
            return super().construct_mapping(node, deep=deep)

    return _Strict


def parse_yaml(text: str, *, source: str, error: ErrorFactory = _spec_error) -> Any:
    """YAML text (safe types only, no duplicate keys), checked by ``check_document``."""
    import yaml

    try:
        doc = yaml.load(text, Loader=_yaml_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc.__class__.__name__
        if "duplicate key" in str(problem):
            where = ""
        raise error(f"invalid YAML: {problem}{where}", source) from None
    except ValueError as exc:  # parsed, but a value cannot be built (2024-02-30, !!int x)
        raise error(f"invalid YAML: {unreadable_value_message(exc)}", source) from None
    except RecursionError:
        raise _too_deep(source, error) from None
    return check_document(doc, source=source, error=error)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _existing_kind(path: Path) -> str | None:
    """What is at ``path`` without following a symlink: None (nothing), "file" or a name."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    except OSError:
        return "unreadable entry"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device node"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def destination_problem(path: Path, *, replace: bool, inputs: Sequence[Path] = ()) -> str | None:
    """Why ``path`` cannot be written (a message without the path's flag), or None.

    Checked before any work so a long command fails at once; ``atomic_write_text`` checks the
    parts that can change meanwhile again at the moment of writing.
    """
    if str(path) in ("", "."):
        return (
            "give a file name (got an empty path)"
            if not str(path)
            else "give a file name, not the current folder '.'"
        )
    kind = _existing_kind(path)
    if kind == "directory":
        return f"{path} is a directory; give a file name inside it"
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{path}: {parent} is a file, not a folder"
            break
    for src in inputs:
        if kind is not None and _same_file(path, src):
            return f"{path} is the command's input file {src}; give another output path"
    read_as = _input_named(path) if kind is not None else None
    if read_as is not None:
        return f"{path} is the command's input file {read_as}; give another output path"
    if kind is None:
        return None
    if kind != "file":
        return f"{path} is a {kind}, not a regular file; trainbill writes only regular files"
    if not replace:
        return f"{path} already exists; pass --force to overwrite it"
    return None


def _mode_for(path: Path) -> int:
    """The replaced file's permissions, or 0666 minus the umask for a new file.

    ``mkstemp`` creates the temp file 0600; renamed as is, every file trainbill writes would be
    private and a shared 0644 calibration would silently turn 0600 when refreshed.
    """
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _commit_new(tmp: Path, path: Path) -> None:
    """Give ``tmp`` the name ``path`` only if nothing has that name now."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise DestinationError(f"{path} already exists; pass --force to overwrite it") from None
    except OSError as exc:
        # A file system without hard links (some FUSE/SMB mounts): O_EXCL creation of the name
        # is the next atomic claim; the content is then copied from the finished temp file.
        if exc.errno not in {
            getattr(os, "EPERM", -1),
            getattr(os, "ENOTSUP", -1),
            getattr(os, "EXDEV", -1),
        }:
            raise
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _mode_for(path))
        except FileExistsError:
            raise DestinationError(f"{path} already exists; pass --force to overwrite it") from None
        with os.fdopen(fd, "wb") as out:
            out.write(tmp.read_bytes())
            out.flush()
            os.fsync(out.fileno())


def atomic_write_text(
    path: Path | str, text: str, *, replace: bool = False, own_input: bool = False
) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path``: ``atomic_write_bytes``'s rules."""
    atomic_write_bytes(path, text.encode("utf-8"), replace=replace, own_input=own_input)


def atomic_write_bytes(
    path: Path | str, data: bytes, *, replace: bool = False, own_input: bool = False
) -> None:
    """Write ``data`` to ``path`` atomically, creating missing parent folders.

    Args:
        path: destination.
        data: the whole content.
        replace: allow replacing an existing regular file (``--force``); never anything else.
        own_input: the file may be one this command read (the price cache, refreshed by
            ``prices update``); every other input is refused, ``replace`` or not.

    Raises:
        DestinationError: ``path`` exists (without ``replace``), or is not a regular file.
        OSError: the folder cannot be created or the file cannot be written.
    """
    path = Path(path)
    tmp = _temp_copy(path, data)  # mode set before the commit: never a moment with 0600
    try:
        _commit(tmp, path, replace=replace, own_input=own_input)
    finally:
        tmp.unlink(missing_ok=True)


def _commit(tmp: Path, path: Path, *, replace: bool, own_input: bool = False) -> None:
    """Give the finished ``tmp`` the name ``path`` (the module docstring's rules)."""
    read_as = None if own_input else _input_named(path)
    if read_as is not None:
        msg = f"{path} is the command's input file {read_as}; give another output path"
        raise DestinationError(msg)
    if replace:
        kind = _existing_kind(path)
        if kind not in (None, "file"):
            msg = f"{path} is a {kind}, not a regular file; trainbill writes only regular files"
            raise DestinationError(msg)
        tmp.replace(path)
    else:
        _commit_new(tmp, path)


def _temp_copy(path: Path, data: bytes) -> Path:
    """``data`` in a finished temp file beside ``path`` with ``path``'s future permissions."""
    directory = path.parent if str(path.parent) else Path()
    directory.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.chmod(mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def atomic_write_all(files: Sequence[tuple[Path, bytes]], *, replace: bool = False) -> None:
    """Write every file or none (``report -o r.html --ledger-xlsx …``: a failed workbook left
    the HTML written).

    Every file's content is written to a temp file beside its destination first (a full disk
    or an unwritable folder fails here, before any destination changes); then each is
    committed by ``atomic_write_bytes``'s rules. If a commit fails, the ones already made are
    undone: a new file is removed, a replaced one put back from a hard link kept meanwhile.
    """
    temps: list[tuple[Path, Path]] = []
    try:
        for path, data in files:
            try:
                temps.append((Path(path), _temp_copy(Path(path), data)))
            except DestinationError:
                raise
            except OSError as exc:  # name the destination, not the temp file or its folder
                raise OSError(exc.errno, exc.strerror, str(path)) from None
        done: list[tuple[Path, Path | None]] = []
        try:
            for path, tmp in temps:
                backup = _backup(path) if replace else None
                _commit(tmp, path, replace=replace)
                done.append((path, backup))
        except BaseException:
            for path, backup in reversed(done):
                if backup is not None:
                    backup.replace(path)
                else:
                    path.unlink(missing_ok=True)
            raise
        for _, backup in done:
            if backup is not None:
                backup.unlink(missing_ok=True)
    finally:
        for _, tmp in temps:
            tmp.unlink(missing_ok=True)


def _backup(path: Path) -> Path | None:
    """A hard link to the file at ``path`` under a new temp name (None when there is none)."""
    if _existing_kind(path) != "file":
        return None
    directory = path.parent if str(path.parent) else Path()
    for n in range(100):
        name = directory / f".{path.name}.{os.getpid()}.{n}.bak"
        try:
            os.link(path, name)  # never replaces: a taken name is skipped
        except FileExistsError:
            continue
        return name
    msg = f"{path}: cannot keep a backup while writing (100 backup names taken)"
    raise DestinationError(msg)
