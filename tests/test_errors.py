"""The exception tree: every exception trainbill defines lives in ``trainbill.errors``."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import trainbill
from trainbill import errors
from trainbill.errors import TrainbillError

SRC = Path(trainbill.__file__).resolve().parent

#: Names of the built-in exception classes, for the source scan.
_BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def _module_names() -> list[str]:
    """Every module of the package, by dotted name."""
    found = pkgutil.walk_packages([str(SRC)], prefix="trainbill.")
    return ["trainbill", *sorted(m.name for m in found)]


def _exception_classes_defined_in(name: str) -> list[type[BaseException]]:
    """Exception classes whose home module is ``name`` (aliases of other classes excluded)."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:  # an optional engine absent: the source scan still covers it
        if exc.name and exc.name.split(".")[0] == "trainbill":
            raise
        return []
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name
    ]


def test_every_exception_class_is_defined_in_errors() -> None:
    """Importing every module of the package finds no exception class defined outside errors.py."""
    strays = [
        f"{cls.__module__}.{cls.__qualname__}"
        for name in _module_names()
        if name != "trainbill.errors"
        for cls in _exception_classes_defined_in(name)
    ]
    assert strays == []


def test_no_module_source_defines_an_exception_class_outside_errors() -> None:
    """No source file outside errors.py declares a class on a built-in or trainbill exception.

    The source scan also covers modules whose optional dependencies are not installed here.
    """
    ours = {
        name for name, value in vars(errors).items() if inspect.isclass(value)
    } | _BUILTIN_EXCEPTIONS
    strays = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "errors.py" and path.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
                if bases & ours:
                    strays.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}")
    assert strays == []


def test_every_error_derives_from_the_package_base() -> None:
    """Each exception class in errors.py is a TrainbillError, so the CLI reports it as one line."""
    classes = [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, BaseException)
    ]
    assert len(classes) >= 15  # the tree in the module docstring: 15 classes
    assert all(issubclass(c, TrainbillError) for c in classes)
    assert set(errors.__all__) >= {c.__name__ for c in classes}


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("trainbill.memory", "MemoryFitError"),
        ("trainbill.importers", "ClusterImportError"),
        ("trainbill.profile", "ProfileError"),
        ("trainbill.profile", "CalibrationError"),
        ("trainbill.prices", "PriceUpdateError"),
        ("trainbill._io", "DestinationError"),
    ],
)
def test_old_import_paths_name_the_same_class(module: str, name: str) -> None:
    """``from trainbill.memory import MemoryFitError`` still works and is errors.MemoryFitError."""
    assert getattr(importlib.import_module(module), name) is getattr(errors, name)


def test_errors_keep_their_builtin_families() -> None:
    """Callers that catch the built-in family still catch the moved errors."""
    assert issubclass(errors.DestinationError, OSError)
    assert issubclass(errors.CalibrationError, ValueError)
    assert issubclass(errors.ClusterImportError, errors.SpecError)
    assert issubclass(errors.PriceUpdateError, errors.CatalogError)


def test_suggest_ignores_case() -> None:
    """'P5.48XLARGE' differs from 'p5.48xlarge' only in case: it is suggested first."""
    assert errors.suggest("P5.48XLARGE", ["p5.48xlarge", "g6.xlarge"]).startswith(
        " Did you mean 'p5.48xlarge'"
    )
