"""The plan's JSON Schema, built from the same field tables the validator reads: the web
API publishes it and editors validate plan files against it, so it cannot drift from what
trainbill accepts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainbill.spec.fields import _dumped
from trainbill.spec.sections import _SECTIONS, ExtraGroup, Plan

if TYPE_CHECKING:
    from trainbill.spec.fields import FieldSpec, _Section


def _json_type(spec: FieldSpec) -> dict[str, Any]:
    """One field's JSON Schema, before its default and whether it may be null."""
    if spec.kind in ("float", "int"):
        out: dict[str, Any] = {"type": "number" if spec.kind == "float" else "integer"}
        if spec.ge is not None:
            out["minimum"] = spec.ge
        if spec.gt is not None:
            out["exclusiveMinimum"] = spec.gt
        if spec.le is not None:
            out["maximum"] = spec.le
        return out
    if spec.kind in ("choice", "orchestrator"):
        return {"type": "string", "enum": list(spec.choices)}
    if spec.kind == "date":
        return {"type": "string", "format": "date"}
    if spec.kind == "bool":
        return {"type": "boolean"}
    if spec.kind == "section":
        assert spec.section is not None
        return {"$ref": f"#/$defs/{spec.section.__name__}"}
    if spec.kind == "groups":
        assert spec.section is not None
        return {"type": "array", "items": {"$ref": f"#/$defs/{spec.section.__name__}"}}
    out = {"type": "string"}
    if spec.min_length is not None:
        out["minLength"] = spec.min_length
    if spec.max_length is not None:
        out["maxLength"] = spec.max_length
    return out


def _section_schema(section: type[_Section]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, spec in section.model_fields.items():
        kind = _json_type(spec)
        prop = {"anyOf": [kind, {"type": "null"}]} if spec.optional else dict(kind)
        if not spec.required and spec.kind != "section":
            default = _dumped(spec.default, "json", False, False)
            prop["default"] = default
        properties[name] = prop
    out: dict[str, Any] = {
        "type": "object",
        "title": section.__name__,
        "additionalProperties": False,
        "properties": properties,
    }
    if section.__doc__:
        out["description"] = section.__doc__.split("\n\n")[0].strip()
    required = [name for name, spec in section.model_fields.items() if spec.required]
    if required:
        out["required"] = required
    return out


def plan_json_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of a plan, from the same field table that validates one: the
    body of ``/v1/forecast`` and the keys of a plan file, each number with its bounds."""
    defs = {s.__name__: _section_schema(s) for s in (*_SECTIONS.values(), ExtraGroup)}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **_section_schema(Plan),
        "$defs": dict(sorted(defs.items())),
    }
