"""Frozen, keyword-only value records whose methods are written once, not generated per class.

Why: the engine's values (catalog rows, usage sub-records, ledger lines, results) were
``@dataclass(frozen=True, slots=True, kw_only=True)`` classes, and on Python 3.11 ``dataclasses``
writes six methods per class as source text and compiles each with ``exec`` (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) when the module is
imported. A ``trainbill forecast`` imports about seventy such classes: ~40 ms of a ~0.22 s
process (issue #21 asks for at most half of llm-analysis's time; ``benchmarks/startup.py``).

``record`` gives the same behaviour from shared functions driven by small per-class tables
computed at decoration. ``dataclasses`` still builds the fields and the slots (so
``dataclasses.fields``, ``replace`` and ``asdict`` work and mypy treats the class as a frozen,
keyword-only dataclass through ``dataclass_transform``), but compiles nothing. What a record keeps
from its dataclass form, pinned by ``tests/test_record.py``:

* keyword-only ``__init__`` with defaults and ``field(default_factory=...)``; ``field(init=False)``
  fields take their default, or are left for ``__post_init__`` (which sets them with
  ``object.__setattr__``, as for a frozen dataclass); unknown or missing keywords are the same
  ``TypeError``;
* frozen: assigning or deleting any attribute raises ``dataclasses.FrozenInstanceError``;
* ``==`` compares the ``compare=True`` fields of two instances of the same class (else
  ``NotImplemented``); ``hash`` hashes the same fields (``field(hash=...)`` honoured);
* ``repr`` shows the ``repr=True`` fields, ``Name(a=1, b='x')``, safe on recursion;
* slots, and pickling / ``copy`` through ``__getstate__`` / ``__setstate__``.

A method the class defines itself (``__eq__``, ``__repr__``, ...) is kept, as ``dataclass``
keeps it. Not supported: ``InitVar`` fields (the constructor refuses their keyword as
unknown), and a record subclassing a class that is not a record or ``object`` (refused at
decoration; none exist, and a mixed hierarchy would need the frozen dataclass's rules about
which base may be mutable).

The generic ``__init__`` costs ~1.5 µs for a ten-field record against ~1.1 µs generated; the
engine builds records by the hundred, never per trial or per grid point (those are arrays).
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from typing import Any, TypeVar, dataclass_transform

__all__ = ["positional_builder", "record"]

T = TypeVar("T")

_object_setattr = object.__setattr__


class _Required:
    """The default of a field that has none: the caller must give it."""

    __slots__ = ()


class _Factory:
    """A ``default_factory``, told apart from a plain default that happens to be callable."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class _Unset:
    """An ``init=False`` field without a default: ``__post_init__`` sets it."""

    __slots__ = ()


_REQUIRED = _Required()
_UNSET = _Unset()


def _init(self: Any, **given: Any) -> None:
    """Keyword-only constructor of every record: each field from ``given``, else its default."""
    cls = type(self)
    used = 0
    for name, default, accepts in cls.__record_init__:
        if accepts and name in given:
            _object_setattr(self, name, given[name])
            used += 1
        elif default is _REQUIRED:
            msg = (
                f"{cls.__qualname__}.__init__() missing 1 required keyword-only argument: {name!r}"
            )
            raise TypeError(msg)
        elif default is _UNSET:
            continue
        elif type(default) is _Factory:
            _object_setattr(self, name, default.make())
        else:
            _object_setattr(self, name, default)
    if used != len(given):
        known = {name for name, _default, accepts in cls.__record_init__ if accepts}
        unknown = next(name for name in given if name not in known)
        msg = f"{cls.__qualname__}.__init__() got an unexpected keyword argument {unknown!r}"
        raise TypeError(msg)
    post = cls.__record_post_init__
    if post is not None:
        post(self)


def _setattr(self: Any, name: str, value: Any) -> None:  # noqa: ARG001
    """Records are frozen."""
    msg = f"cannot assign to field {name!r}"
    raise FrozenInstanceError(msg)


def _delattr(self: Any, name: str) -> None:  # noqa: ARG001
    """Records are frozen."""
    msg = f"cannot delete field {name!r}"
    raise FrozenInstanceError(msg)


def _compared(self: Any) -> tuple[Any, ...]:
    """The values ``==`` and ``hash`` look at, in field order."""
    return tuple([getattr(self, name) for name in type(self).__record_compare__])


def _eq(self: Any, other: object) -> Any:
    """Equal when the same class and the same compared fields (what a dataclass does)."""
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _compared(self) == _compared(other)


def _hash(self: Any) -> int:
    """Hash of the hashed fields (``compare=True`` unless ``field(hash=...)`` says otherwise)."""
    return hash(tuple([getattr(self, name) for name in type(self).__record_hash__]))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    """``Name(a=1, b='x')`` over the ``repr=True`` fields."""
    cls = type(self)
    inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in cls.__record_repr__)
    return f"{cls.__qualname__}({inner})"


def _getstate(self: Any) -> tuple[Any, ...]:
    """Field values, for pickle and ``copy`` (slots and a blocked ``__setattr__`` need this)."""
    return tuple([getattr(self, f.name) for f in dataclasses.fields(self)])


def _setstate(self: Any, state: tuple[Any, ...]) -> None:
    """Restore ``_getstate``'s values, past the frozen ``__setattr__``."""
    for f, value in zip(dataclasses.fields(self), state, strict=True):
        _object_setattr(self, f.name, value)


_SHARED: dict[str, Any] = {
    "__init__": _init,
    "__setattr__": _setattr,
    "__delattr__": _delattr,
    "__eq__": _eq,
    "__repr__": _repr,
    "__getstate__": _getstate,
    "__setstate__": _setstate,
}


def _init_table(fields: tuple[dataclasses.Field[Any], ...]) -> tuple[tuple[str, Any, bool], ...]:
    """(name, default, accepted as a keyword) per field, in order."""
    rows = []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = _Factory(f.default_factory)
        else:
            default = _REQUIRED if f.init else _UNSET
        rows.append((f.name, default, f.init))
    return tuple(rows)


@dataclass_transform(
    frozen_default=True, kw_only_default=True, field_specifiers=(dataclasses.field,)
)
def record(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen, keyword-only, slotted record (module docstring)."""
    for base in cls.__mro__[1:-1]:
        if "__record_init__" not in base.__dict__:
            msg = f"record {cls.__qualname__}: base {base.__qualname__} is not a record"
            raise TypeError(msg)
    own = dict(cls.__dict__)
    made = dataclasses.dataclass(init=False, repr=False, eq=False, slots=True, kw_only=True)(cls)
    fields = dataclasses.fields(made)  # type: ignore[arg-type]
    for name, method in _SHARED.items():
        if name not in own:
            setattr(made, name, method)
    # A class that defines __eq__ gets __hash__ = None from Python; it still gets the record's
    # hash unless it wrote one (the frozen dataclass rule).
    explicit_hash = own.get("__hash__", dataclasses.MISSING)
    if explicit_hash is dataclasses.MISSING or (explicit_hash is None and "__eq__" in own):
        made.__hash__ = _hash  # type: ignore[method-assign]
    made.__record_init__ = _init_table(fields)  # type: ignore[attr-defined]
    made.__record_compare__ = tuple(f.name for f in fields if f.compare)  # type: ignore[attr-defined]
    made.__record_hash__ = tuple(  # type: ignore[attr-defined]
        f.name for f in fields if (f.compare if f.hash is None else f.hash)
    )
    made.__record_repr__ = tuple(f.name for f in fields if f.repr)  # type: ignore[attr-defined]
    made.__record_post_init__ = getattr(made, "__post_init__", None)  # type: ignore[attr-defined]
    return made


def positional_builder(cls: type[T]) -> Callable[..., T]:
    """A constructor of ``cls`` records from every field's value, positionally in field order.

    Why: the generic keyword ``__init__`` (``_init``) costs ~3.5 µs for a 17-field record and
    ``dataclasses.replace`` ~5 µs more; the planner's front and right-sizing table hold a
    record per node count (hundreds: ``optimize.results``), built here at ~1.4 µs by setting
    each slot. Only for records with no ``__post_init__`` (nothing to run) and with every field
    given (no default to apply): ``tests/optimize/test_result_rows.py`` compares with the
    keyword constructor.
    """
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    if getattr(cls, "__record_post_init__", None) is not None:
        msg = f"{cls.__qualname__} has a __post_init__: build it with its constructor"
        raise TypeError(msg)
    setters = tuple(cls.__dict__[name].__set__ for name in names)
    new = object.__new__

    def build(*values: Any) -> T:
        obj = new(cls)
        for put, value in zip(setters, values, strict=True):
            put(obj, value)
        return obj

    return build
