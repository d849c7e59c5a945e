"""How a plan section declares its fields, and what every section shares.

A section's class body declares each field once (``_spec``, ``_number``, ``_choice``,
``_sub``); ``_Section.__init_subclass__`` turns the declarations into the ``FieldSpec`` table
the validator (``reading``), the JSON Schema (``schema``) and the error messages
(``messages``) all read. Why not pydantic or dataclasses: start-up (issue #21).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from types import MappingProxyType
from typing import Any, ClassVar, Self, get_args

from trainbill._record import record
from trainbill.errors import FrozenPlanError
from trainbill.spec.caps import _cap
from trainbill.spec.reading import _validate

# --- the schema: one table of fields per section, read by one validator ---------------------
#
# Why not pydantic: a one-shot ``trainbill forecast`` spent ~0.13 s of CPU importing pydantic and
# building its validators, over a third of the whole process (issue #21: at most half of
# llm-analysis's time). The plan is a dozen flat sections of numbers, words and dates: each
# field is declared once below (kind, default, bounds from ``PLAN_CAPS``), and ``_read`` applies
# one rule per kind, with the messages pydantic gave (``_format_error`` turns them into the
# one line the user sees, naming the field and its allowed range).


@record
class FieldSpec:
    """One plan field's rule: what it holds, its default and its bounds.

    ``kind`` is one of ``float``, ``int``, ``str``, ``bool``, ``date``, ``choice`` (one of
    ``choices``), ``orchestrator`` (a choice whose default and aliases depend on the provider),
    ``section`` (a nested section, ``section``) or ``groups`` (a list of ``section``).
    """

    name: str
    kind: str
    default: Any = None
    #: Whether ``None`` (a key left out of a JSON body as null) is accepted: it means "take the
    #: catalog's assumption" for the fields whose default is ``None``.
    optional: bool = True
    #: No default: the key must be given (an extra group's instance).
    required: bool = False
    gt: float | None = None
    ge: float | None = None
    le: float | None = None
    choices: tuple[str, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    section: type[Any] | None = None


@record
class _Declared:
    """A field as a section's class body declares it: kind, default and the rest of its rule.
    ``_Section.__init_subclass__`` turns each into the section's ``FieldSpec``."""

    kind: str
    default: Any
    rule: Mapping[str, Any]


def _spec(kind: str, default: Any = None, **rule: Any) -> Any:
    """Declare a field (typed ``Any`` so that ``hours: float | None = _spec(...)`` checks)."""
    return _Declared(kind=kind, default=default, rule=rule)


def _number(kind: str, path: str, *, gt: float | None = None, ge: float | None = None) -> Any:
    """An optional number with its lower bound and its cap from ``PLAN_CAPS`` (``path``)."""
    return _spec(kind, None, gt=gt, ge=ge, le=_cap(path))


def _choice(values: Any, default: str | None = None) -> Any:
    """One of a ``Literal``'s values; ``None`` (unset) is accepted only where the default is."""
    return _spec("choice", default, choices=get_args(values), optional=default is None)


def _sub(section: type[_Section]) -> Any:
    """A nested section, defaulting to the section with every field at its default (validated:
    the cluster's default orchestrator is the provider's self-managed VMs, not None)."""
    return _spec("section", section.model_validate({}), section=section, optional=False)


class _Section:
    """What every section (and the plan) shares: its field table, construction, comparison,
    copies and dumps.

    The class body declares each field once (``_spec`` and friends); ``__init_subclass__``
    collects them into ``model_fields``, and one generic ``__init__``/``__eq__``/``__hash__``
    serves every section. Why not dataclasses: generating those methods per class costs about
    a millisecond of start-up each, and a one-shot CLI run is mostly start-up (issue #21).
    Instances are immutable; the method names (``model_fields``, ``model_copy``,
    ``model_dump``, ``model_validate``) are those the rest of the package has always used, and
    behave as they did: a copy is not revalidated, a dump gives plain values (``mode="json"``:
    dates as text, groups as lists).
    """

    model_fields: ClassVar[Mapping[str, FieldSpec]] = MappingProxyType({})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A subclass keeps its parents' fields, then adds (or redeclares) its own.
        specs: dict[str, FieldSpec] = dict(cls.model_fields)
        for name, value in list(vars(cls).items()):
            if isinstance(value, _Declared):
                specs[name] = FieldSpec(name=name, kind=value.kind, default=value.default,
                                        **value.rule)  # fmt: skip
                delattr(cls, name)
        cls.model_fields = MappingProxyType(specs)

    def __init__(self, **values: Any) -> None:
        """Build a section from field values, validated like a plan file's (a wrong value is a
        ``SpecError`` naming the field; defaults are filled, the orchestrator by provider)."""
        errors: list[dict[str, Any]] = []
        made = _validate(type(self), values, (), errors)
        if errors or made is None:
            # The messages read the finished sections (a section's default is validated
            # while they are built): imported only for an error.
            from trainbill.spec.messages import _spec_error

            raise _spec_error(errors, type(self).__name__)
        self.__dict__.update(made.__dict__)

    @classmethod
    def _made(cls, values: Mapping[str, Any]) -> Self:
        """An instance of already-validated field values (the validator's own constructor)."""
        new = object.__new__(cls)
        new.__dict__.update(values)
        return new

    def _values(self) -> tuple[Any, ...]:
        return tuple(self.__dict__.get(name) for name in self.model_fields)

    def _carried(self) -> Any:
        """What an instance carries beside its fields (a plan's what-if), for equality."""
        return None

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Section)
        return self._values() == other._values() and self._carried() == other._carried()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.model_fields)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        msg = (
            f"{type(self).__name__}.{name} is frozen: derive a variant with model_copy(update=...)"
        )
        raise FrozenPlanError(msg)

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    def _check(self) -> str | None:
        """A rule across fields, checked once each field is valid: the message, or None."""
        return None

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with ``update``'s fields replaced (not revalidated, as before); whatever else
        the instance carries (a plan's what-if) comes along."""
        changes = dict(update or {})
        unknown = set(changes) - set(self.model_fields)
        if unknown:
            msg = f"{type(self).__name__} has no field {', '.join(sorted(unknown))}"
            raise TypeError(msg)
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    def model_dump(
        self, *, mode: str = "python", exclude_none: bool = False, exclude_defaults: bool = False
    ) -> dict[str, Any]:
        """The fields as a mapping; ``exclude_defaults`` leaves out what equals the field's
        default (a section equal to its default entirely), ``exclude_none`` the unset ones."""
        out: dict[str, Any] = {}
        for name, spec in self.model_fields.items():
            value = getattr(self, name)
            if (exclude_none and value is None) or (
                exclude_defaults and not spec.required and value == spec.default
            ):
                continue
            out[name] = _dumped(value, mode, exclude_none, exclude_defaults)
        return out

    @classmethod
    def model_validate(cls, data: Any) -> Self:
        """Validate ``data`` as this section; ``SpecError`` naming the first problem."""
        errors: list[dict[str, Any]] = []
        result = _validate(cls, data, (), errors)
        if errors or result is None:
            # The messages read the finished sections (a section's default is validated
            # while they are built): imported only for an error.
            from trainbill.spec.messages import _spec_error

            raise _spec_error(errors, "plan")
        return result


def _dumped(value: Any, mode: str, exclude_none: bool, exclude_defaults: bool) -> Any:
    if isinstance(value, _Section):
        return value.model_dump(
            mode=mode, exclude_none=exclude_none, exclude_defaults=exclude_defaults
        )
    if isinstance(value, tuple):
        items = [_dumped(v, mode, exclude_none, exclude_defaults) for v in value]
        return items if mode == "json" else tuple(items)
    if mode == "json" and isinstance(value, date):
        return value.isoformat()
    return value
