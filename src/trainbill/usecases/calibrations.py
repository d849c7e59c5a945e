"""Calibration inputs of every front end: ``--calibration`` files and a request's documents.

One reader for both (``trainbill.calibration.parse_calibration``), so a file and a web request
accept and refuse exactly the same documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainbill.calibration import parse_calibration, read_calibration_file, refuse_profiles

__all__ = ["parse_calibration_texts", "read_calibration_files", "refuse_profiles"]


def read_calibration_files(
    paths: Sequence[Path] | None, *, command: str, measured_mfu: bool = True
) -> list[Any]:
    """The ``--calibration`` files of a command, each read and validated (a missing, non-TOML
    or wrong-kind file is a one-line error naming it).

    A profile calibration (measured MFU) is refused where it would be silently unused: by
    commands whose other plans have no measured MFU (``measured_mfu=False``: the planner's
    grid, the report).
    """
    if not paths:
        return []
    cals = [(p, read_calibration_file(p)) for p in paths]
    if not measured_mfu:
        named = [(str(p), c) for p, c in cals]
        refuse_profiles(named, command=f"'trainbill {command}'", field="--calibration")
    return [c for _, c in cals]


def parse_calibration_texts(
    texts: Sequence[str], *, profiles_refused_by: str | None = None
) -> list[tuple[str, Any]]:
    """Each calibration document of a request, parsed, named by its place (``calibrations[1]``)
    for errors; ``profiles_refused_by`` names the endpoint that cannot use a profile."""
    named = [
        (f"calibrations[{i}]", parse_calibration(text, source=f"calibrations[{i}]"))
        for i, text in enumerate(texts)
    ]
    if profiles_refused_by is not None:
        refuse_profiles(named, command=profiles_refused_by, field="calibrations")
    return named
