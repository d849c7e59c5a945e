"""Where trainbill keeps its derived caches, and how an entry is written.

One rule for every cache that only saves time (compiled bill SQL, the parsed catalog
assumptions): ``$TRAINBILL_CACHE_DIR/<name>`` if set, else ``$XDG_CACHE_HOME/trainbill/<name>``
(``~/.cache/trainbill/<name>``). An entry is written atomically, so a reader never sees half a
file, and a failure to write is ignored: such a cache is an optimisation, never an error. (The
live price cache is data, not an optimisation, and has its own home: ``trainbill.prices``.)
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["cache_root", "store_text"]


def cache_root(name: str) -> Path:
    """The directory of the cache called ``name`` (``bill-sql``, ``catalog``)."""
    root = os.environ.get("TRAINBILL_CACHE_DIR")
    if root:
        return Path(root) / name
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "trainbill" / name


def store_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically; a failure to write is ignored."""
    import tempfile  # only when writing: its import is a few ms of every start-up otherwise

    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            Path(tmp).replace(path)
        except OSError:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
            raise
