"""Plans in and out of text: a mapping, a TOML file or text, and TOML written back.

Every way in goes through ``plan_from_dict``, so files, flags and JSON bodies share one schema
and one set of error messages; files are read through the input gate (``trainbill._io``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from trainbill.errors import SpecError, too_deep_message
from trainbill.spec.messages import _spec_error
from trainbill.spec.reading import _validate
from trainbill.spec.sections import Plan


def plan_from_dict(data: Mapping[str, Any], *, source: str = "plan") -> Plan:
    """Validate a plan mapping; raise ``SpecError`` naming the source, field and allowed values."""
    errors: list[dict[str, Any]] = []
    plan = _validate(Plan, dict(data), (), errors)
    if errors or plan is None:
        raise _spec_error(errors, source)
    return plan


def load_plan(path: Path | str) -> Plan:
    """Read and validate a plan TOML file (through the input gate, ``trainbill._io``: a regular
    file under the plan size cap). Malformed TOML reports line and column."""
    from trainbill._io import read_input_text

    p = Path(path)
    text = read_input_text(p, kind="plan", what="plan file")
    return plan_from_toml(text, source=str(p))


def read_plan_toml(text: str, *, source: str = "plan") -> dict[str, Any]:
    """Parse plan TOML text into a mapping (not yet validated); ``SpecError`` names the source
    and the line and column of malformed TOML, a nesting or number past the input gate's caps
    (``trainbill._io.parse_toml``). The web calculator's upload reads files here, so a file and
    an upload get the same messages."""
    from trainbill._io import parse_toml

    return parse_toml(text, source=source)


def plan_from_toml(text: str, *, source: str = "plan") -> Plan:
    """Parse and validate plan TOML text (a file's contents, an upload)."""
    data = read_plan_toml(text, source=source)
    try:
        return plan_from_dict(data, source=source)
    except RecursionError:  # validation recurses per nesting level
        raise SpecError(too_deep_message(), source=source) from None


def _toml_value(v: Any) -> str:
    """A TOML literal: every control character escaped, so a name with a newline or a quote
    cannot break out of its string (the web page writes plans whose names came from a URL)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, date):
        return v.isoformat()
    text = str(v).replace("\\", "\\\\").replace('"', '\\"')
    text = "".join(f"\\u{ord(ch):04x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch for ch in text)
    return f'"{text}"'


def plan_to_toml(plan: Plan, *, header: str = "") -> str:
    """Serialise a plan as TOML that ``load_plan`` reads back to an equal plan."""
    data = plan.model_dump(exclude_none=True)
    lines = [f"# {h}" if h else "#" for h in header.splitlines()] if header else []
    for section, values in data.items():
        scalars = {k: v for k, v in values.items() if not isinstance(v, list | tuple | dict)}
        groups = {
            k: v
            for k, v in values.items()
            if isinstance(v, list | tuple) and v and isinstance(v[0], dict)
        }
        if scalars:
            lines += ["", f"[{section}]"] + [f"{k} = {_toml_value(v)}" for k, v in scalars.items()]
        for key, items in groups.items():
            for item in items:
                lines += ["", f"[[{section}.{key}]]"]
                lines += [f"{k} = {_toml_value(v)}" for k, v in item.items() if v is not None]
    return "\n".join(lines).lstrip("\n") + "\n"


def merge_plan_dicts(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge two plan mappings section by section; ``override`` wins (flags over file)."""
    out: dict[str, Any] = {k: dict(v) if isinstance(v, Mapping) else v for k, v in base.items()}
    for key, val in override.items():
        if isinstance(val, Mapping) and isinstance(out.get(key), dict):
            out[key].update(val)
        else:
            out[key] = dict(val) if isinstance(val, Mapping) else val
    return out
