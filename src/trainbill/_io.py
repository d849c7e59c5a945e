"""The one way trainbill writes a file: atomically, and never over something it must not replace.

Every file a command writes goes through here, so one rule protects what the user owns:

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

import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from trainbill.errors import DestinationError

__all__ = ["DestinationError", "atomic_write_bytes", "atomic_write_text", "destination_problem"]


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


def atomic_write_text(path: Path | str, text: str, *, replace: bool = False) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path``: ``atomic_write_bytes``'s rules."""
    atomic_write_bytes(path, text.encode("utf-8"), replace=replace)


def atomic_write_bytes(path: Path | str, data: bytes, *, replace: bool = False) -> None:
    """Write ``data`` to ``path`` atomically, creating missing parent folders.

    Args:
        path: destination.
        data: the whole content.
        replace: allow replacing an existing regular file (``--force``); never anything else.

    Raises:
        DestinationError: ``path`` exists (without ``replace``), or is not a regular file.
        OSError: the folder cannot be created or the file cannot be written.
    """
    path = Path(path)
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
        tmp.chmod(mode)  # before the commit, so the new file never exists with 0600
        if replace:
            kind = _existing_kind(path)
            if kind not in (None, "file"):
                msg = f"{path} is a {kind}, not a regular file; trainbill writes only regular files"
                raise DestinationError(msg)
            tmp.replace(path)
        else:
            _commit_new(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
