"""One exception tree for everything trainbill refuses to do.

Every message says what was wrong, which value caused it and how to fix it, because the
people reading it are running a CLI, not a debugger. The CLI turns any ``TrainbillError``
into a one-line message and exit status 1; anything else is a bug and keeps its traceback.

::

    TrainbillError
    ├── SpecError (also ValueError)          invalid plan: names file, field and allowed values
    │   ├── ClusterImportError               a cluster file (HyperPod, SkyPilot, Terraform) at fault
    │   ├── CalibrationError                 a calibration file is missing or invalid
    │   └── FrozenPlanError                  a plan field was assigned; derive with model_copy
    ├── CatalogError
    │   ├── CatalogSchemaError               catalog data does not match the schema
    │   ├── PriceNotFoundError (LookupError) no price for (item, option, region, date); suggests
    │   └── PriceUpdateError                 fetching live prices failed; the cache is untouched
    ├── BillError
    │   └── UnsupportedBillError             unknown columns/format; says which were expected
    ├── SimulationError (also ValueError)    bad rates, trial counts
    ├── InfeasibleError                      nothing satisfies the constraints; names the binding
one
    ├── MemoryFitError                       the model does not fit in accelerator memory at all
    ├── MixedBranchError                     internal: a node sweep's step branches both ways
    ├── ProfileError                         a profile cannot be taken (arguments, script, no torch)
    ├── DestinationError (also OSError)      an output file exists or is not a regular file
    └── RequestRefusedError                  the web guard turns a request away (status, headers)

Every exception class defined anywhere in the package is defined here (pinned by
``tests/test_errors.py``); the modules that raise them re-export them under their old names,
so ``from trainbill.memory import MemoryFitError`` keeps working.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable

__all__ = [
    "BillError",
    "CalibrationError",
    "CatalogError",
    "CatalogSchemaError",
    "ClusterImportError",
    "DestinationError",
    "FrozenPlanError",
    "InfeasibleError",
    "MemoryFitError",
    "MixedBranchError",
    "PriceNotFoundError",
    "PriceUpdateError",
    "ProfileError",
    "RegistryError",
    "RequestRefusedError",
    "RunNotFoundError",
    "SchemaVersionError",
    "SimulationError",
    "SpecError",
    "TrainbillError",
    "UnsupportedBillError",
    "suggest",
]


class TrainbillError(Exception):
    """Base class: a problem the user can fix, reported without a traceback."""


def too_deep_message() -> str:
    """What to say when a document's nesting exhausts Python's recursion limit while parsing
    or walking it: no plan, cluster description or bill nests that deep, so the file is
    broken or hostile, and the user needs one line, not a ``RecursionError`` traceback."""
    import sys

    return (
        f"nested too deeply (over {sys.getrecursionlimit():,} levels); no valid file of this "
        "kind nests that deep"
    )


def unreadable_value_message(exc: ValueError) -> str:
    """What to say when a JSON, YAML or TOML parser fails with a bare ``ValueError`` instead of
    its own decode error: it read the syntax but could not build a value from it (an integer
    longer than Python converts, a YAML date like 2024-02-30, ``!!int x``). Without this the
    user got a traceback; the text names the problem without pointing at Python internals."""
    import sys

    text = str(exc)
    if "integer string conversion" in text:
        limit = sys.get_int_max_str_digits()
        return f"a number with more than {limit:,} digits; no valid file of this kind holds one"
    return f"a value that cannot be read: {text}"


def finite_number(value: object) -> float | None:
    """``value`` as a finite float, or None when it is no number (a boolean, text), not finite,
    or an integer too large for a float (TOML and JSON read ``1`` followed by 400 zeros as an
    int, and ``math.isfinite`` on it raised ``OverflowError``: a traceback, not an error)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        x = float(value)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def shown_value(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters, for an error line about a bad value."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_unicode_text(text: str) -> bool:
    """False for a string holding half a UTF-16 surrogate pair, which JSON and YAML escapes
    (``"\\ud800"``) can produce: it is no Unicode text and cannot be printed or written as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def not_unicode_message(text: str) -> str:
    """One line for a string ``is_unicode_text`` refuses, showing it escaped (and cut short)."""
    shown = ascii(text)
    shown = shown if len(shown) <= 40 else shown[:36] + "...'"
    return f"{shown} is not valid Unicode text (an unpaired surrogate escape such as \\ud800)"


class SpecError(TrainbillError, ValueError):
    """A plan (file, flags or JSON body) is invalid."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None):
        self.source = source
        self.field = field
        prefix = ""
        if source:
            prefix += f"{source}: "
        if field:
            prefix += f"{field}: "
        super().__init__(prefix + message)


class FrozenPlanError(SpecError):
    """A plan (or one of its sections) was assigned to: plans are immutable values, shared by
    the forecast, its what-ifs and the planner, so a variant is derived with ``model_copy``."""


class CatalogError(TrainbillError):
    """The price/hardware catalog cannot answer a question."""


class CatalogSchemaError(CatalogError):
    """Catalog data (packaged, cached or a user overlay) does not match the schema."""


class PriceNotFoundError(CatalogError, LookupError):
    """No price point exists for the requested item, option, region or date.

    ``field`` names the plan field that would fix it (``prices.as_of`` for a date before the
    first price or the instance's launch), so the web API's refusal can point at it as it does
    for a ``SpecError``; the message itself is unchanged (it already says what to change)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        super().__init__(message)


class BillError(TrainbillError):
    """A bill file cannot be read or reconciled."""


class UnsupportedBillError(BillError):
    """A bill file is in a format we do not recognise."""


class SimulationError(TrainbillError, ValueError):
    """Monte Carlo inputs are out of range."""


class InfeasibleError(TrainbillError):
    """The optimizer found no plan meeting the constraints."""

    def __init__(self, message: str, *, binding: str | None = None, shortfall: float | None = None):
        self.binding = binding
        self.shortfall = shortfall
        super().__init__(message)


class MemoryFitError(TrainbillError):
    """The plan cannot fit in accelerator memory, even with recompute and offload."""


class MixedBranchError(TrainbillError):
    """A step of ``usage_for`` run over a node sweep's arrays branches one way for some node
    counts and the other way for others (``timemodel._elementwise.uniform``). Never reaches a
    user: ``usage.usage_over_nodes`` catches it and builds each half of the sweep apart."""


class ClusterImportError(SpecError):
    """A cluster file cannot be imported: names the file and the element at fault."""


class ProfileError(TrainbillError):
    """A profile cannot be taken: bad arguments, a broken step script, or no PyTorch."""


class CalibrationError(SpecError):
    """A calibration file is missing, unreadable or fails validation.

    A calibration is user input like a plan, so it reports ``source: field: problem`` the
    same way (it is a ``SpecError``, hence also a ``ValueError``).
    """


class PriceUpdateError(CatalogError):
    """A price update failed (network, throttling, bad payload, missing key).

    Raised *before* the cache is touched, so the previous cache is always intact when the user
    sees this message.
    """


class DestinationError(TrainbillError, OSError):
    """The destination exists and must not be replaced (or is not a regular file).

    Also an ``OSError``: callers that write files handle it beside the operating system's own
    refusals, and turn it into their own error naming the flag or field.
    """


class RegistryError(TrainbillError):
    """The run registry cannot do what was asked: a database that cannot be reached, a run
    closed twice, a bill with no rows of the run. Raised before anything is written (each
    command is one transaction), so the registry is as it was."""


class RunNotFoundError(RegistryError, LookupError):
    """No run has the id asked for; the message lists the nearest ids."""


class SchemaVersionError(RegistryError):
    """The database was written by a newer trainbill (a schema version this one does not
    know): refused, never downgraded, so the newer tool's data stays intact."""


class RequestRefusedError(TrainbillError):
    """The web server's guard refuses a request before the app sees it (busy, too large,
    wrong host): carries the HTTP status and headers of the answer."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


def suggest(value: str, choices: Iterable[str], *, n: int = 3) -> str:
    """Return a " Did you mean …?" hint (or "") so typos are one retry away. Case is ignored
    when matching: ``P5.48XLARGE`` is one retry from ``p5.48xlarge``, not no match at all."""
    options = list(choices)
    by_folded = {c.casefold(): c for c in options}
    folded = difflib.get_close_matches(value.casefold(), list(by_folded), n=n, cutoff=0.6)
    matches = [by_folded[m] for m in folded]
    if not matches:
        return ""
    return " Did you mean " + " or ".join(repr(m) for m in matches) + "?"
