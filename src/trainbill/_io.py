"""The one way trainbill writes a file: atomically, so nothing the user owns is half-written.

A temp file in the destination's folder is written, flushed to disk and renamed over the
destination (``os.replace`` is atomic on POSIX and Windows). A crash or an error leaves either
the old file or the new one, never a mixture, and never a stray temp file. Callers turn the
``OSError`` into their own error type, naming what could not be written.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

__all__ = ["atomic_write_text"]


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


def atomic_write_text(path: Path | str, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8), creating missing parent folders.

    Raises:
        OSError: the folder cannot be created or the file cannot be written.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path()
    directory.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).chmod(mode)  # before the rename, so the new file never exists with 0600
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
