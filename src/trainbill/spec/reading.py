"""Reading one value against its ``FieldSpec``, and a whole section against its table.

Numbers may be written as text ("10", "1e3", "70B" for counts), dates as ISO text; anything
else is refused with the message pydantic used to give, collected as error dicts that
``messages._format_error`` turns into the one line the user sees.
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import re
from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Any, TypeVar

from trainbill.errors import is_unicode_text, not_unicode_message
from trainbill.spec.caps import ORCHESTRATORS, orchestrator_on

if TYPE_CHECKING:
    from trainbill.spec.fields import FieldSpec, _Section

#: A section class read by ``_validate`` (bound by name: the sections import this module).
_S1 = TypeVar("_S1", bound="_Section")


# --- reading one value -----------------------------------------------------------------------

_Loc = tuple[int | str, ...]
#: Numbers written as text (a JSON body's "10", TOML's "1e3"), read as Python reads them
#: (digit groups may be separated by "_"), but ASCII digits only: full-width "１２" is no number.
_DIGITS = r"[0-9](?:_?[0-9])*"
_FLOAT_TEXT = re.compile(
    rf"[+-]?(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?"
    r"|[+-]?(?:inf|infinity|nan)",
    re.IGNORECASE,
)
_INT_TEXT = re.compile(rf"[+-]?{_DIGITS}")
_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: A date-time (accepted on a date field only at midnight): ISO 8601 extended form only, so
#: "20260115" or "2026-W03-1", which Python would read, are not taken as days.
_DATETIME_TEXT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
    r"(?:Z|[+-][0-9]{2}:[0-9]{2})?"
)


def _error(
    errors: list[dict[str, Any]], loc: _Loc, kind: str, msg: str, value: Any, **ctx: Any
) -> None:
    errors.append({"loc": loc, "type": kind, "msg": msg, "input": value, "ctx": ctx})


def _bound_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def _quoted_choices(choices: tuple[str, ...]) -> str:
    """``'aws', 'gcp' or 'azure'``: the allowed values as a sentence."""
    quoted = [repr(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _refused_as_typed(spec: FieldSpec, value: Any) -> str | None:
    """What lax reading used to accept and must not: a boolean as a number (``nodes = true``
    priced one node), a word or number as a switch, a number as a date (``date = 0`` became
    1970-01-01) and text that is not Unicode (half a UTF-16 pair, which crashed printing)."""
    if _is_boolean(value):
        if spec.kind != "bool":
            return f"expected a number or text, not the boolean {str(bool(value)).lower()}"
    elif spec.kind == "bool" and value is not None:
        return f"expected true or false, not {value!r}"
    if spec.kind == "date" and _is_number(value):
        return f"expected a date like 2026-01-15, not the number {value!r}"
    if isinstance(value, str) and not is_unicode_text(value):
        return not_unicode_message(value)
    return None


def _is_boolean(value: Any) -> bool:
    """``True``/``False``, or NumPy's boolean scalar (``numpy.bool_``, ``numpy.bool`` in 2.x)."""
    kind = type(value)
    return isinstance(value, bool) or (
        kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool")
    )


def _is_number(value: Any) -> bool:
    """A real number of any numeric type (int, float, Decimal, Fraction, NumPy scalars); never
    a boolean or a complex number."""
    if _is_boolean(value):
        return False
    return isinstance(value, numbers.Number) and not isinstance(value, complex)


#: Counts a plan may write as papers and model cards do, and as the command line takes them
#: ("70B" parameters, "15T" tokens, "4M" tokens per batch): K, M, B, T.
_COUNT_FIELDS = frozenset({"params", "active_params", "tokens", "global_batch_tokens"})
_COUNT_SUFFIX = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def _to_float(value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> float | None:
    number: Any = value
    if isinstance(value, str):
        text = value.strip()
        scale = _COUNT_SUFFIX.get(text[-1:].lower()) if loc and loc[-1] in _COUNT_FIELDS else None
        if scale is not None and _FLOAT_TEXT.fullmatch(text[:-1].strip()):
            return _to_float(float(text[:-1].strip()) * scale, loc, errors)
        if not _FLOAT_TEXT.fullmatch(text):
            msg = "Input should be a valid number, unable to parse string as a number"
            _error(errors, loc, "float_parsing", msg, value)
            return None
        number = float(text)
    if not _is_number(number):
        _error(errors, loc, "float_type", "Input should be a valid number", value)
        return None
    try:
        number = float(number)
    except (OverflowError, TypeError, ValueError):  # past the largest float; not a real number
        _error(errors, loc, "float_type", "Input should be a valid number", value)
        return None
    if not math.isfinite(number):
        _error(errors, loc, "finite_number", "Input should be a finite number", value)
        return None
    return float(number)


def _int_text(value: str, loc: _Loc, errors: list[dict[str, Any]]) -> int | None:
    """A whole number written as text: ``"10"``, ``"1_000"`` or ``"10.0"``; digits past what
    Python converts (4,300) are refused as too long, not a crash."""
    text = value.strip()
    try:
        if _INT_TEXT.fullmatch(text):
            return int(text)
        if _FLOAT_TEXT.fullmatch(text):
            number = float(text)
            if math.isfinite(number) and number.is_integer():
                return int(number)
    except ValueError:
        msg = "Unable to parse input string as an integer, exceeded maximum size"
        _error(errors, loc, "int_parsing_size", msg, value)
        return None
    msg = "Input should be a valid integer, unable to parse string as an integer"
    _error(errors, loc, "int_parsing", msg, value)
    return None


def _to_int(value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> int | None:
    if isinstance(value, str):
        return _int_text(value, loc, errors)
    if isinstance(value, numbers.Integral) and _is_number(value):
        return int(value)
    if not _is_number(value):
        _error(errors, loc, "int_type", "Input should be a valid integer", value)
        return None
    try:
        number = float(value)
    except (OverflowError, TypeError, ValueError):
        _error(errors, loc, "int_type", "Input should be a valid integer", value)
        return None
    if not math.isfinite(number):
        _error(errors, loc, "finite_number", "Input should be a finite number", value)
        return None
    if not number.is_integer():
        msg = "Input should be a valid integer, got a number with a fractional part"
        _error(errors, loc, "int_from_float", msg, value)
        return None
    return int(number)


def _in_bounds(
    spec: FieldSpec, number: float, raw: Any, loc: _Loc, errors: list[dict[str, Any]]
) -> bool:
    if spec.le is not None and not number <= spec.le:
        msg = f"Input should be less than or equal to {_bound_text(spec.le)}"
        _error(errors, loc, "less_than_equal", msg, raw, le=spec.le)
        return False
    if spec.ge is not None and not number >= spec.ge:
        msg = f"Input should be greater than or equal to {_bound_text(spec.ge)}"
        _error(errors, loc, "greater_than_equal", msg, raw, ge=spec.ge)
        return False
    if spec.gt is not None and not number > spec.gt:
        msg = f"Input should be greater than {_bound_text(spec.gt)}"
        _error(errors, loc, "greater_than", msg, raw, gt=spec.gt)
        return False
    return True


def _to_date(value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> date | None:
    parsed: Any = value
    if isinstance(value, str):
        text = value.strip()
        is_date, is_datetime = _DATE_TEXT.fullmatch(text), _DATETIME_TEXT.fullmatch(text)
        why = ""
        if is_date or is_datetime:
            try:
                parsed = date.fromisoformat(text) if is_date else dt.datetime.fromisoformat(text)
            except ValueError as exc:  # well formed, out of range: say which part
                why = f" ({exc})"
        if why or not (is_date or is_datetime):
            msg = f"Input should be a valid date in the format YYYY-MM-DD{why}"
            _error(errors, loc, "date_format", msg, value)
            return None
    if isinstance(parsed, dt.datetime):
        if parsed.time() != dt.time(0):
            msg = "Datetimes provided to dates should have zero time - e.g. be exact dates"
            _error(errors, loc, "date_from_datetime_inexact", msg, value)
            return None
        return parsed.date()
    if not isinstance(parsed, date):
        _error(errors, loc, "date_type", "Input should be a valid date", value)
        return None
    return parsed


def _to_text(spec: FieldSpec, value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> Any:
    if not isinstance(value, str):
        _error(errors, loc, "string_type", "Input should be a valid string", value)
        return None
    if spec.min_length is not None and len(value) < spec.min_length:
        unit = "character" if spec.min_length == 1 else "characters"
        msg = f"String should have at least {spec.min_length} {unit}"
        _error(errors, loc, "string_too_short", msg, value)
        return None
    if spec.max_length is not None and len(value) > spec.max_length:
        msg = f"String should have at most {spec.max_length} characters"
        _error(errors, loc, "string_too_long", msg, value)
        return None
    return value


def _to_choice(spec: FieldSpec, value: Any, loc: _Loc, errors: list[dict[str, Any]]) -> Any:
    if isinstance(value, str) and value in spec.choices:
        return value
    expected = _quoted_choices(spec.choices)
    _error(errors, loc, "literal_error", f"Input should be {expected}", value, expected=expected)
    return None


def _orchestrator(
    spec: FieldSpec, value: Any, provider: str, loc: _Loc, errors: list[dict[str, Any]]
) -> Any:
    """Default and alias resolution by provider (validated before the orchestrator)."""
    offered = ORCHESTRATORS[provider]
    if value is None:
        return offered[0]
    if isinstance(value, str):
        value = orchestrator_on(provider, value)
        if value not in offered and value in ORCHESTRATORS["aws"]:
            msg = (
                f"{value!r} is an AWS service, not offered on {provider}; allowed values for "
                f"{provider}: {', '.join(offered)}"
            )
            _error(errors, loc, "value_error", msg, value)
            return None
    return _to_choice(spec, value, loc, errors)


def _read(
    spec: FieldSpec, value: Any, loc: _Loc, errors: list[dict[str, Any]], got: dict[str, Any]
) -> tuple[bool, Any]:
    """(valid, value) of one field; a problem is appended to ``errors``. ``got`` holds the
    section's fields read so far (the orchestrator needs the provider)."""
    before = len(errors)
    refused = _refused_as_typed(spec, value)
    if refused is not None:
        _error(errors, loc, "value_error", refused, value)
        return False, None
    if spec.kind == "orchestrator":
        out = _orchestrator(spec, value, str(got.get("provider", "aws")), loc, errors)
    elif value is None and spec.optional:
        return True, None
    elif spec.kind in ("float", "int"):
        out = (_to_float if spec.kind == "float" else _to_int)(value, loc, errors)
        if out is not None and not _in_bounds(spec, out, value, loc, errors):
            out = None
    elif spec.kind == "str":
        out = _to_text(spec, value, loc, errors)
    elif spec.kind == "bool":
        out = bool(value) if _is_boolean(value) else None
        if out is None:
            _error(errors, loc, "bool_type", "Input should be a valid boolean", value)
    elif spec.kind == "date":
        out = _to_date(value, loc, errors)
    elif spec.kind == "choice":
        out = _to_choice(spec, value, loc, errors)
    elif spec.kind == "section":
        assert spec.section is not None
        out = _validate(spec.section, value, loc, errors)
    else:  # groups
        assert spec.section is not None
        out = _groups(spec.section, value, loc, errors)
    return len(errors) == before, out


def _groups(
    section: type[_Section], value: Any, loc: _Loc, errors: list[dict[str, Any]]
) -> tuple[Any, ...] | None:
    if not isinstance(value, list | tuple):
        _error(errors, loc, "tuple_type", "Input should be a valid tuple", value)
        return None
    items = [_validate(section, item, (*loc, i), errors) for i, item in enumerate(value)]
    return tuple(items)


def _shown_key(key: Any) -> str:
    """A key as the error names it: as typed when it is printable Unicode text, else its
    escaped form (a key with a newline, a terminal escape or half a UTF-16 pair would break
    the one-line message or the JSON reply)."""
    if isinstance(key, str) and key.isprintable() and is_unicode_text(key):
        return key
    return ascii(key)


def _validate(cls: type[_S1], data: Any, loc: _Loc, errors: list[dict[str, Any]]) -> _S1 | None:
    """``data`` as a ``cls`` section: every field read in order, unknown keys refused, then
    the section's own cross-field rule; None (problems in ``errors``) when anything failed."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        msg = f"Input should be a valid dictionary or instance of {cls.__name__}"
        _error(errors, loc, "model_type", msg, data)
        return None
    before = len(errors)
    got: dict[str, Any] = {}
    for name, spec in cls.model_fields.items():
        if name in data:
            ok, value = _read(spec, data[name], (*loc, name), errors, got)
            if ok:
                got[name] = value
        elif spec.required:
            _error(errors, (*loc, name), "missing", "Field required", data)
        elif spec.kind == "orchestrator":
            provider = str(got.get("provider", "aws"))
            got[name] = _orchestrator(spec, None, provider, (*loc, name), errors)
        else:
            got[name] = spec.default
    for key in data:
        if key not in cls.model_fields:
            _error(errors, (*loc, _shown_key(key)), "extra_forbidden",
                   "Extra inputs are not permitted", data[key])  # fmt: skip
    if len(errors) > before:
        return None
    section = cls._made(got)
    problem = section._check()
    if problem is not None:
        _error(errors, loc, "value_error", problem, data)
        return None
    return section
