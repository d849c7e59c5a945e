"""``trainbill._record.record`` behaves as ``@dataclass(frozen=True, slots=True, kw_only=True)``.

Each behaviour is checked against the standard library's own frozen dataclass built from the
same class body (the reference the records replace), so the expected values are Python's, not
the code under test's.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest

from trainbill._record import record


def _body() -> dict[str, Any]:
    """One class namespace, fresh each time (decorators change what they are given)."""

    class Row:
        """A row with every kind of field the engine uses."""

        name: str
        gpus: int = 8
        tags: list[str] = field(default_factory=list)
        note: str = field(default="", compare=False)
        secret: str = field(default="x", repr=False)
        derived: int = field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "derived", self.gpus * 2)

    return dict(Row.__dict__)


def _make(decorate: Any, name: str) -> Any:
    ns = {k: v for k, v in _body().items() if k not in ("__dict__", "__weakref__")}
    ns["__qualname__"] = name  # a module-level name, so that pickle finds the class
    return decorate(type(name, (), ns))


Rec = _make(record, "Rec")
Ref = _make(dataclass(frozen=True, slots=True, kw_only=True), "Ref")


def test_init_defaults_factory_and_post_init_like_a_dataclass() -> None:
    for cls in (Rec, Ref):
        a = cls(name="p5")
        b = cls(name="p5")
        assert (a.name, a.gpus, a.tags, a.note, a.secret, a.derived) == ("p5", 8, [], "", "x", 16)
        assert a.tags is not b.tags  # a fresh list per instance, from default_factory
        c = cls(name="p4d", gpus=4, tags=["a"], note="n", secret="s")
        assert (c.gpus, c.tags, c.derived) == (4, ["a"], 8)  # derived = 4 * 2


@pytest.mark.parametrize(
    ("kwargs", "args", "word"),
    [
        ({}, (), "missing 1 required keyword-only argument: 'name'"),
        ({"name": "a", "colour": "red"}, (), "unexpected keyword argument 'colour'"),
        ({"name": "a", "derived": 3}, (), "unexpected keyword argument 'derived'"),
        ({}, ("a",), "positional argument"),
    ],
)
def test_bad_construction_is_the_same_type_error(
    kwargs: dict[str, Any], args: tuple[Any, ...], word: str
) -> None:
    for cls in (Rec, Ref):
        with pytest.raises(TypeError, match=word):
            cls(*args, **kwargs)


def test_frozen() -> None:
    for cls in (Rec, Ref):
        row = cls(name="a")
        with pytest.raises(FrozenInstanceError):
            row.name = "b"
        with pytest.raises(FrozenInstanceError):
            del row.gpus
        assert not hasattr(row, "__dict__")
    # A new attribute: a record says frozen; Python 3.11's frozen slotted dataclass fails here
    # with an unrelated "super(type, obj)" TypeError (its __setattr__ names the class from
    # before the slots were added).
    with pytest.raises(FrozenInstanceError):
        Rec(name="a").colour = "red"


def test_eq_and_hash_over_compared_fields() -> None:
    for cls in (Rec, Ref):
        a = cls(name="a", tags=("t",), note="one")
        b = cls(name="a", tags=("t",), note="two")  # note is compare=False
        assert a == b
        assert hash(a) == hash(b)
        assert a != cls(name="a", gpus=4, tags=("t",))
        nan = float("nan")
        assert cls(name=nan) == cls(name=nan)  # tuples compare one NaN object as itself
        assert cls(name=float("nan")) != cls(name=float("nan"))  # two NaN objects differ
    assert Rec(name="a") != Ref(name="a")  # another class is never equal
    with pytest.raises(TypeError, match="unhashable"):
        hash(Rec(name="a", tags=["list"]))


def test_repr_matches_the_dataclass() -> None:
    row = {"name": "p5", "gpus": 2, "tags": ["a"], "note": "n", "secret": "hidden"}
    assert repr(Rec(**row)) == repr(Ref(**row)).replace("Ref(", "Rec(", 1)
    assert "hidden" not in repr(Rec(**row))  # repr=False
    loop = Rec(name="x", tags=[])
    loop.tags.append(loop)
    assert "..." in repr(loop)  # recursion guarded, as dataclasses do


def test_fields_replace_asdict_pickle_copy() -> None:
    row = Rec(name="p5", tags=["a"])
    assert [f.name for f in dataclasses.fields(row)] == [
        f.name for f in dataclasses.fields(Ref(name="p5"))
    ]
    changed = dataclasses.replace(row, gpus=2)
    assert (changed.gpus, changed.derived, changed.name) == (2, 4, "p5")  # 2 * 2
    with pytest.raises(ValueError, match="init=False"):
        dataclasses.replace(row, derived=1)
    assert dataclasses.asdict(row)["tags"] == ["a"]
    for back in (pickle.loads(pickle.dumps(row)), copy.copy(row), copy.deepcopy(row)):
        assert back == row
        assert back.derived == row.derived
        with pytest.raises(FrozenInstanceError):
            back.name = "b"


def test_own_methods_are_kept_and_bases_must_be_records() -> None:
    @record
    class Named:  # noqa: PLW1641 (the record supplies __hash__: what this checks)
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Named) and other.name.lower() == self.name.lower()

    assert repr(Named(name="A")) == "<A>"
    assert Named(name="A") == Named(name="a")
    hash(Named(name="A"))  # __eq__ without __hash__ still gets the record's hash

    @record
    class Child(Named):
        extra: int = 0

    assert [f.name for f in dataclasses.fields(Child)] == ["name", "extra"]

    class Plain:
        pass

    with pytest.raises(TypeError, match="Plain is not a record"):

        @record
        class Bad(Plain):
            x: int
