"""Turning the validator's error dicts into one line naming the file, the field and its
allowed values or range (``SpecError``): the only message a user sees for a bad plan, whether
it came from a file, flags or a JSON body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from trainbill.errors import SpecError, suggest
from trainbill.spec.caps import _SANITY_BOUND, PLAN_CAPS
from trainbill.spec.sections import _SECTIONS, ExtraGroup, Plan

if TYPE_CHECKING:
    from trainbill.spec.fields import FieldSpec


def _describe(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc)


def _allowed_keys(loc: tuple[int | str, ...]) -> list[str]:
    if len(loc) == 1:
        return list(Plan.model_fields)
    if len(loc) >= 3 and loc[:2] == ("cluster", "extra_groups"):
        return list(ExtraGroup.model_fields)
    section = _SECTIONS.get(str(loc[0]))
    return list(section.model_fields) if section else []


def _fields() -> dict[str, FieldSpec]:
    """``section.field`` (``cluster.extra_groups.count`` for extra groups) → its rule."""
    out: dict[str, FieldSpec] = {}
    for name, section in _SECTIONS.items():
        out.update({f"{name}.{f}": spec for f, spec in section.model_fields.items()})
    out.update({f"cluster.extra_groups.{f}": s for f, s in ExtraGroup.model_fields.items()})
    return out


_FIELDS = _fields()


def _num(x: float) -> str:
    """1,000,000 or 1e+15 or 0.5, never 1000000000000000."""
    if float(x).is_integer() and abs(x) < 1e7:
        return f"{int(x):,}"
    return f"{x:.3g}"


def _allowed_range(path: str) -> str:
    """``0 to 1e+09 (an exabyte)`` for a bounded field, from its constraints and
    ``PLAN_CAPS``; empty when the field has no numeric bounds."""
    spec = _FIELDS.get(path)
    if spec is None:
        return ""
    bounds = {
        name: value
        for name, value in (("ge", spec.ge), ("gt", spec.gt), ("le", spec.le))
        if value is not None
    }
    low = (
        f"{_num(bounds['ge'])} to "
        if "ge" in bounds
        else f"above {_num(bounds['gt'])}, up to "
        if "gt" in bounds
        else "up to "
    )
    if "le" not in bounds:
        return ""
    cap = PLAN_CAPS.get(path)
    why = f" ({cap.why})" if cap is not None and cap.high >= _SANITY_BOUND else ""
    return f"{low}{_num(bounds['le'])}{why}"


def _shown(value: Any) -> str:
    """The offending value as typed, cut short: a 400-digit integer must not fill the screen."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:12]}...{text[-4:]}, {len(text)} characters"


def _format_error(err: Mapping[str, Any]) -> tuple[str, str]:
    loc = tuple(err.get("loc", ()))
    field = _describe(loc) or "plan"
    kind = err.get("type", "")
    got = _shown(err.get("input"))
    if kind == "extra_forbidden":
        keys = _allowed_keys(loc)
        last = str(loc[-1]) if loc else ""
        return field, f"unknown key.{suggest(last, keys)} Allowed: {', '.join(keys)}"
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return field, f"{got} is not allowed; allowed values: {expected}"
    allowed = _allowed_range(".".join(str(p) for p in loc if not isinstance(p, int)))
    allowed = f"; allowed: {allowed}" if allowed else ""
    if kind in {"less_than_equal", "less_than"}:
        bound = err.get("ctx", {}).get("le", err.get("ctx", {}).get("lt"))
        if isinstance(bound, int | float):
            op = "at most" if kind == "less_than_equal" else "below"
            if abs(bound) < _SANITY_BOUND:
                return field, f"must be {op} {_num(bound)}{allowed} (got {got})"
            return (
                field,
                (
                    f"must be {op} {_num(bound)}: too large for any real run, a typo? (got "
                    f"{got}{allowed})"
                ),
            )
        return field, f"{err['msg'].lower()}{allowed} (got {got})"
    if kind in {"greater_than", "greater_than_equal"}:
        return field, f"{err['msg'].lower()}{allowed} (got {got})"
    if kind.endswith(("_parsing", "_type")):
        return field, f"{err['msg'].lower()}{allowed} (got {got})"
    if kind == "value_error":
        message = str(err["msg"]).removeprefix("Value error, ")
        return field if loc else "plan", message
    return field, f"{err['msg']}{allowed} (got {got})"


def _spec_error(errors: list[dict[str, Any]], source: str) -> SpecError:
    """The first problem as one line, naming the field, with how many more there are."""
    field_name, message = _format_error(errors[0])
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return SpecError(message + more, source=source, field=field_name)
