"""The run registry's use cases: record a forecast as a run, close it with its bill, list,
show, delete, calibrate from closed runs, export, upgrade (``trainbill runs``, ``/v1/runs``).

They live in ``trainbill.runs.api`` (each one database transaction, SQLAlchemy imported only
there); this module is their place in the front door, so a front end imports use cases from
one package.
"""

from __future__ import annotations

from trainbill.runs.api import (
    calibrate,
    close,
    delete,
    export,
    list_runs,
    plan_text_of,
    record,
    show,
    tag_snippets,
    upgrade,
)

__all__ = [
    "calibrate",
    "close",
    "delete",
    "export",
    "list_runs",
    "plan_text_of",
    "record",
    "show",
    "tag_snippets",
    "upgrade",
]
