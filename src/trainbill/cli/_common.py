"""Helpers shared by command modules: catalog loading with overlays, output, atomic writes."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainbill._io import (
    DestinationError,
    atomic_write_bytes,
    atomic_write_text,
    destination_problem,
)

if TYPE_CHECKING:
    from rich.console import Console

    from trainbill.catalog import Catalog
    from trainbill.spec import Plan

    console: Console

__all__ = [
    "CALIBRATION_HELP",
    "atomic_write_text",
    "catalog_from_options",
    "check_output_path",
    "console",
    "finite_option",
    "named_by_plan",
    "print_json",
    "read_calibrations",
    "read_plan",
    "remember_plan_source",
    "write_output",
    "write_outputs",
]

#: The ``--calibration`` option's help, one text for every command that takes it.
CALIBRATION_HELP = (
    "Calibration file from `trainbill profile -o` (measured MFU) or `trainbill calibrate` "
    "(overheads fitted from bills) (repeatable)."
)


def __getattr__(name: str) -> Any:
    """``console`` is made on first use (PEP 562): ``bill summary --json`` never draws, and
    importing Rich's console is a measurable part of its start-up (benchmarked, issue #6)."""
    if name != "console":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from rich.console import Console

    made = Console(highlight=False)
    if not made.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
        # Piped or captured output: wide enough that ledger rows do not wrap into towers;
        # COLUMNS, when set, is the width asked for (Rich reads it).
        made = Console(highlight=False, width=160)
    globals()["console"] = made
    return made


#: Where the command's plan came from (``read_plan``, ``_plan_flags.build_plan``): an error a
#: rule raises later about one of the plan's fields names it (``named_by_plan``).
_PLAN_SOURCE: list[str] = []
#: Plan sections: a field under one of them is the plan's (``SpecError.field``).
_PLAN_SECTIONS = (
    "run.", "model.", "cluster.", "purchase.", "prices.", "storage.", "data.", "checkpoint.",
    "evaluation.", "network.", "monitoring.", "reliability.",
)  # fmt: skip


def remember_plan_source(source: str) -> None:
    """Record where the command's plan came from (a file, or the command line's flags)."""
    _PLAN_SOURCE[:] = [source]


def read_plan(path: Path) -> Plan:
    """``spec.load_plan``, remembering the file for the errors the plan's rules raise later."""
    from trainbill.spec import load_plan

    remember_plan_source(str(path))
    return load_plan(path)


def named_by_plan(exc: Exception) -> str:
    """The error's line, with the plan's file in front when a rule about one of the plan's
    fields raised it without one (a gp3 volume AWS would not create, a data region that is the
    cluster's own): "pt.toml: storage.ebs_throughput_mibps: …", as the plan's reader words it.
    """
    from trainbill.errors import SpecError

    if (
        isinstance(exc, SpecError)
        and exc.source is None
        and exc.field is not None
        and (exc.field == "plan" or exc.field.startswith(_PLAN_SECTIONS))
        and _PLAN_SOURCE
    ):
        return f"{_PLAN_SOURCE[0]}: {exc}"
    return str(exc)


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


def finite_option(value: float | None, flag: str, *, positive: bool = True) -> float | None:
    """``value`` unchanged, or a ``SpecError`` naming ``flag`` when it is NaN, infinite or not > 0.

    Typer parses ``nan``, ``inf`` and ``1e999`` as floats; none of them is a usable limit.
    """
    from trainbill.errors import SpecError

    if value is None:
        return None
    if not math.isfinite(value):
        msg = f"must be a finite number (got {value!r})"
        raise SpecError(msg, source="command line", field=flag)
    if positive and not value > 0:
        msg = f"must be > 0 (got {value:g})"
        raise SpecError(msg, source="command line", field=flag)
    return value


def check_output_path(path: Path, *, flag: str, force: bool, inputs: Sequence[Path] = ()) -> None:
    """Refuse, before any work is done, an output path that cannot or must not be written.

    The rule is ``trainbill._io.destination_problem`` (a directory, a parent that is a file, a
    non-regular file, an existing file without ``--force``, or one of the command's own input
    files by identity); this only names ``flag``.
    """
    from trainbill.errors import SpecError

    problem = destination_problem(path, replace=force, inputs=inputs)
    if problem is not None:
        raise SpecError(problem, source="command line", field=flag)


def write_outputs(files: Sequence[tuple[Path, str | bytes, str]], *, force: bool) -> None:
    """Write every ``(path, content, flag)`` or none (``trainbill._io.atomic_write_all``); a
    refusal or ``OSError`` is one line naming the flag of the file at fault."""
    from trainbill._io import atomic_write_all
    from trainbill.errors import SpecError, TrainbillError

    if not files:
        return
    for path, _, flag in files:  # each named in its own words before anything is written
        check_output_path(path, flag=flag, force=force)
    encoded = [(p, c.encode("utf-8") if isinstance(c, str) else c) for p, c, _ in files]
    try:
        atomic_write_all(encoded, replace=force)
    except DestinationError as exc:
        flags = [f for p, _, f in files if str(p) in str(exc)] or ["--output"]
        raise SpecError(str(exc), source="command line", field=flags[0]) from None
    except OSError as exc:
        flag = next((f for p, _, f in files if str(p) == exc.filename), files[0][2])
        where = exc.filename or ", ".join(str(p) for p, _, _ in files)
        why = exc.strerror or exc.__class__.__name__
        msg = f"{flag}: cannot write {where}: {why}; no output was written"
        raise TrainbillError(msg) from None


def write_output(path: Path, text: str | bytes, *, flag: str, force: bool) -> None:
    """Write ``text`` (or bytes) atomically; without ``force`` a file that appeared meanwhile is
    kept and
    the command fails. An ``OSError`` becomes a one-line ``TrainbillError`` naming the file."""
    from trainbill.errors import SpecError, TrainbillError

    try:
        if isinstance(text, bytes):
            atomic_write_bytes(path, text, replace=force)
        else:
            atomic_write_text(path, text, replace=force)
    except DestinationError as exc:
        raise SpecError(str(exc), source="command line", field=flag) from None
    except OSError as exc:
        msg = f"{flag}: cannot write {path}: {exc.strerror or exc.__class__.__name__}"
        raise TrainbillError(msg) from None


def read_calibrations(
    paths: Sequence[Path] | None,
    *,
    command: str,
    measured_mfu: bool = True,
) -> list[Any]:
    """The ``--calibration`` files of any command, read and validated by one reader
    (``trainbill.usecases.calibrations``: a missing, non-TOML or wrong-kind file is
    a one-line error naming it).

    A profile calibration (measured MFU) is refused where it would be silently unused: by
    commands whose other plans have no measured MFU (``measured_mfu=False``: the planner's
    grid, the report).
    """
    from trainbill.usecases.calibrations import read_calibration_files

    return read_calibration_files(paths, command=command, measured_mfu=measured_mfu)
