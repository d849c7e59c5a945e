"""Helpers shared by command modules: catalog loading with overlays, output, atomic writes."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainbill._io import atomic_write_text

if TYPE_CHECKING:
    from rich.console import Console

    from trainbill.catalog import Catalog

    console: Console

__all__ = ["atomic_write_text", "catalog_from_options", "console", "print_json"]


def __getattr__(name: str) -> Any:
    """``console`` is made on first use (PEP 562): ``bill summary --json`` never draws, and
    importing Rich's console is a measurable part of its start-up (benchmarked, issue #6)."""
    if name != "console":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from rich.console import Console

    made = Console(highlight=False)
    if not made.is_terminal:
        # Piped or captured output: wide enough that ledger rows do not wrap into towers.
        made = Console(highlight=False, width=160)
    globals()["console"] = made
    return made


def catalog_from_options(catalog_dirs: Sequence[Path] | None = None) -> Catalog:
    """Packaged catalog + the price cache (if any) + TRAINBILL_CATALOG + ``--catalog`` dirs.

    The catalog is imported here, not at module level: ``bill`` commands share this module and
    never need it.
    """
    from trainbill.catalog import load_catalog

    overlays: list[Path] = []
    try:
        from trainbill.prices import overlays_from_env  # written by the prices feature

        overlays.extend(overlays_from_env())
    except ImportError:
        env = os.environ.get("TRAINBILL_CATALOG")
        if env:
            overlays.extend(Path(p) for p in env.split(os.pathsep) if p)
    overlays.extend(catalog_dirs or ())
    return load_catalog(overlays)


def _default(obj: Any) -> Any:
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if hasattr(obj, "item"):
        return obj.item()
    msg = f"not JSON serializable: {type(obj).__name__}"
    raise TypeError(msg)


def print_json(data: Any) -> None:
    """Write JSON to stdout (NaN/inf become null so every parser can read it)."""

    def clean(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list | tuple):
            return [clean(v) for v in x]
        return x

    sys.stdout.write(json.dumps(clean(data), indent=2, default=_default) + "\n")
