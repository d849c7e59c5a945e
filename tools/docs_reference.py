"""The documentation's reference pages, generated from the code so they cannot drift.

``tools/mkdocs_hooks.py`` calls these during ``mkdocs build``; nothing here is written to
``docs/``, so a stale copy cannot exist. Each page reads one source of truth:

* the command line: the Typer app (``trainbill.cli``), each page holding the very text
  ``trainbill COMMAND --help`` prints (``run_cli``, the same in-process runner that
  ``tools/render_examples.py`` uses for the examples);
* the plan fields: the plan schema's field tables (``trainbill.spec``), each field's meaning
  from the attribute docstring under its declaration, its catalog default from
  ``assumptions.toml``;
* the HTTP API: FastAPI's OpenAPI document of ``trainbill.web.app.create_app``;
* the Python API: ``trainbill``'s public names, rendered by mkdocstrings;
* the error classes: ``trainbill.errors``.

Why one runner for the examples and the help pages: the output a reader sees must be exactly
what the tool prints at a fixed width, without colour, whatever the shell that builds the docs.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: The width every shown output is rendered at (help pages and examples): wide enough for
#: the ledger's columns without wrapping most rows, narrow enough to read in a code block.
COLUMNS = 100
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: Variables that would make an output depend on the shell that renders it.
_UNSET = ("TRAINBILL_CATALOG", "FORCE_COLOR", "PY_COLORS", "CLICOLOR_FORCE", "TERMINAL_WIDTH",
          "LINES", "GITHUB_ACTIONS")  # fmt: skip
_CACHE: list[str] = []


@contextlib.contextmanager
def _fixed_env(columns: int) -> Iterator[None]:
    """A fixed width, no colour, and no user state (price cache, overlays) for one run."""
    if not _CACHE:
        _CACHE.append(tempfile.mkdtemp(prefix="trainbill-docs-"))
    wanted = {"COLUMNS": str(columns), "NO_COLOR": "1", "TERM": "dumb",
              "TRAINBILL_CACHE_DIR": _CACHE[0]}  # fmt: skip
    saved = {k: os.environ.get(k) for k in (*wanted, *_UNSET)}
    os.environ.update(wanted)
    for key in _UNSET:
        os.environ.pop(key, None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_cli(argv: Sequence[str], *, columns: int = COLUMNS) -> tuple[int, str]:
    """``trainbill ARGV`` run in-process: (exit status, stdout then stderr), lines stripped of
    trailing blanks and colour codes. The CLI's console is remade for the run (it reads
    ``COLUMNS`` when made), so one process can render at several widths."""
    from rich.console import Console

    from trainbill.cli import _common, main, register_commands

    # Some command modules bind ``console`` when imported (``from _common import console``):
    # import them all first, as the CLI itself would, then point each at this run's console
    # for the run only, so neither this run nor a later one in the process sees the other's.
    register_commands([])
    bound = [
        m
        for name, m in sorted(sys.modules.items())
        if name.startswith("trainbill.cli.")
        and m is not _common
        and isinstance(getattr(m, "console", None), Console)
    ]
    saved = [m.__dict__["console"] for m in bound]
    out, err = io.StringIO(), io.StringIO()
    with _fixed_env(columns), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        _common.__dict__.pop("console", None)
        fresh = _common.console
        for m in bound:
            m.__dict__["console"] = fresh
        try:
            main(list(argv))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            _common.__dict__.pop("console", None)
            for m, old in zip(bound, saved, strict=True):
                m.__dict__["console"] = old
    text = _ANSI.sub("", out.getvalue() + err.getvalue())
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return code, "\n".join(lines) + "\n"


# --- the command line ---------------------------------------------------------------------


def cli_commands() -> dict[str, Any]:
    """Every top-level command (``trainbill.cli.COMMANDS``, in ``--help`` order) → its Click
    command, with every command module imported as ``trainbill --help`` does."""
    import typer

    from trainbill.cli import COMMANDS, app, register_commands

    register_commands([])
    group = typer.main.get_command(app)
    assert hasattr(group, "commands")
    return {name: group.commands[name] for name in COMMANDS}


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n\n")[0].replace("\n", " ")


def _help_block(argv: list[str]) -> str:
    code, text = run_cli([*argv, "--help"])
    if code != 0:
        msg = f"trainbill {' '.join(argv)} --help exited {code}:\n{text}"
        raise RuntimeError(msg)
    return f"```console\n$ trainbill {' '.join(argv)} --help\n{text}```\n"


def cli_pages() -> dict[str, str]:
    """``reference/cli/index.md`` and one page per top-level command."""
    commands = cli_commands()
    rows = [
        f"| [`{name}`]({name}.md) | {_first_line(cmd.help)} |" for name, cmd in commands.items()
    ]
    pages = {
        "reference/cli/index.md": (
            "# Command line\n\n"
            "Every `trainbill` command, each on its own page with the text its `--help` prints "
            f"(generated from the Typer app when the site is built, at {COLUMNS} columns). How "
            "tables fit the terminal, shell completion and exit statuses: "
            "[Terminal output](../terminal.md).\n\n"
            + _help_block([])
            + "\n| command | what it does |\n|---|---|\n"
            + "\n".join(rows)
            + "\n"
        )
    }
    for name, cmd in commands.items():
        body = [f"# trainbill {name}\n", (cmd.help or "").strip() + "\n", _help_block([name])]
        for sub_name, sub in getattr(cmd, "commands", {}).items():
            body.append(f"## trainbill {name} {sub_name}\n")
            body.append((sub.help or "").strip() + "\n")
            body.append(_help_block([name, sub_name]))
        pages[f"reference/cli/{name}.md"] = "\n".join(body)
    return pages


# --- the plan fields ----------------------------------------------------------------------


def field_docstrings() -> dict[str, dict[str, str]]:
    """Section class name → field → the docstring written under the field's declaration in
    the module that declares the plan's sections (``trainbill/spec/sections.py``; Python drops
    these strings when it compiles the module, so they cost the CLI's start-up nothing; they are
    read from the source)."""
    from trainbill.spec import Plan

    tree = ast.parse(inspect.getsource(sys.modules[Plan.__module__]))
    out: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        docs: dict[str, str] = {}
        for stmt, after in zip(node.body, [*node.body[1:], None], strict=True):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[stmt.target.id] = inspect.cleandoc(after.value.value)
        out[node.name] = docs
    return out


def _number_text(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) < 1e7 else f"{x:g}"


def _kind_text(spec: Any) -> str:
    """A field's type and allowed values, from its rule."""
    if spec.kind in ("choice", "orchestrator"):
        return "one of " + ", ".join(f'`"{c}"`' for c in spec.choices)
    if spec.kind == "groups":
        name: str = spec.section.__name__
        return f"list of `[[cluster.extra_groups]]` tables ({name})"
    names: dict[str, str] = {"float": "number", "int": "integer", "str": "text",
                             "bool": "true or false", "date": "date YYYY-MM-DD"}  # fmt: skip
    text = names.get(spec.kind, str(spec.kind))
    bounds: list[str] = []
    if spec.gt is not None:
        bounds.append(f"> {_number_text(spec.gt)}")
    if spec.ge is not None:
        bounds.append(f"≥ {_number_text(spec.ge)}")
    if spec.le is not None:
        bounds.append(f"≤ {_number_text(spec.le)}")
    if spec.min_length is not None or spec.max_length is not None:
        bounds.append(f"{spec.min_length or 0}–{spec.max_length} characters")
    return text + (", " + ", ".join(bounds) if bounds else "")


def _default_text(section: str, name: str, spec: Any, catalog: Any) -> str:
    """The default as a plan left without the field gets it: the schema's own, else the
    catalog assumption ``defaults.<section>.<field>`` (with its unit), else worked out."""
    if spec.required:
        return "required"
    if spec.kind == "orchestrator":
        return '`"ec2"` on AWS, `"vm"` on GCP and Azure'
    if spec.default not in (None, ()):
        value = spec.default
        shown = json.dumps(value) if isinstance(value, str | bool) else _number_text(value)
        return f"`{shown}`"
    if spec.kind == "groups":
        return "none"
    key = f"defaults.{section}.{name}"
    try:
        found = catalog.assumption(key)
    except Exception:  # noqa: BLE001 - a field without a catalog default
        return "none (see meaning)"
    unit = f" {found.unit}" if getattr(found, "unit", "") else ""
    return f"catalog: `{found.value}`{unit}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def plan_fields_page() -> str:
    """Every field of the plan schema, section by section: type, default and meaning.

    A field whose declaration has no docstring is an error, not an empty cell: the build
    fails naming it, so a new field cannot reach the reference without its meaning."""
    from trainbill.catalog import load_catalog
    from trainbill.spec import ExtraGroup, Plan

    catalog = load_catalog()
    docs = field_docstrings()
    missing: list[str] = []
    parts = [
        "# Plan fields\n",
        (
            "Every key a plan file (TOML), a JSON body of `POST /v1/forecast` or the calculator "
            "accepts, generated from the plan schema (`trainbill.spec`) when the site is built. A "
            "value left out takes the default shown; *catalog* defaults come from "
            "`src/trainbill/catalog/data/assumptions.toml`, where each has a source and a date. "
            "Numbers past a bound are refused naming the field and its allowed range; the upper "
            "bounds are sanity caps (`spec.PLAN_CAPS`), far above any real run. How the file is "
            "read, with an example: [The plan file](plan-file.md).\n"
        ),
    ]
    sections: list[tuple[str, type[Any]]] = [
        (name, spec.section) for name, spec in Plan.model_fields.items() if spec.section
    ]
    sections.insert(
        [n for n, _ in sections].index("cluster") + 1, ("cluster.extra_groups", ExtraGroup)
    )
    for name, section in sections:
        header = f"[[{name}]]" if name == "cluster.extra_groups" else f"[{name}]"
        summary = inspect.cleandoc(section.__doc__ or "")
        parts.append(f"## `{header}`\n\n{summary}\n")
        parts.append("| field | type | default | meaning |\n|---|---|---|---|")
        short = name.split(".")[0]
        for field, spec in section.model_fields.items():
            meaning = docs.get(section.__name__, {}).get(field)
            if not meaning:
                missing.append(f"{section.__name__}.{field}")
                continue
            default = _default_text(short, field, spec, catalog)
            parts.append(
                f"| `{name}.{field}` | {_cell(_kind_text(spec))} | {_cell(default)} "
                f"| {_cell(meaning)} |"
            )
        parts.append("")
    if missing:
        msg = (
            "plan fields without a docstring in src/trainbill/spec.py (write one under each "
            "declaration; the plan-field reference is generated from them): " + ", ".join(missing)
        )
        raise RuntimeError(msg)
    return "\n".join(parts)


# --- the HTTP API ---------------------------------------------------------------------------


def openapi() -> dict[str, Any]:
    """The OpenAPI document the server publishes at ``/openapi.json``."""
    from trainbill.web.app import create_app

    document: dict[str, Any] = create_app().openapi()
    return document


def _schema_name(content: dict[str, Any]) -> str:
    for media, body in content.items():
        schema = body.get("schema", {})
        ref = schema.get("$ref") or schema.get("items", {}).get("$ref")
        if ref:
            name = ref.rsplit("/", 1)[-1]
            return f"`{media}`: [{name}](#{name.lower()})"
        return f"`{media}`" + (f" ({schema['type']})" if "type" in schema else "")
    return ""


def _anchor(method: str, path: str) -> str:
    """The heading id Python-Markdown's ``toc`` gives ``## METHOD `PATH` ``."""
    return re.sub(r"[^\w\s-]", "", f"{method} {path}".lower()).strip().replace(" ", "-")


def http_api_page() -> str:
    """Every endpoint of the OpenAPI document: method, path, summary, description, body and
    answers, then every schema with its fields."""
    doc = openapi()
    parts = [
        "# HTTP API\n",
        (
            f"{doc['info'].get('description', '')} Generated from the OpenAPI document of "
            f"`trainbill serve` (version {doc['info']['version']}; the running server publishes "
            "the same document at `/openapi.json` and a Swagger page at `/docs`). Limits, the "
            "guard and what the calculator page does: [Serve the calculator for a team]"
            "(../how-to/serve.md).\n"
        ),
        "A plan in a request body has the plan file's sections and keys, as JSON: "
        + "[Plan fields](plan-fields.md).\n",
        "| method | path | what it does |\n|---|---|---|",
    ]
    operations = [
        (path, method.upper(), op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
    ]
    for path, method, op in operations:
        what = _first_line(op.get("description")) or op.get("summary", "")
        parts.append(f"| {method} | [`{path}`](#{_anchor(method, path)}) | {_cell(what)} |")
    parts.append("")
    for path, method, op in operations:
        parts.append(f"## {method} `{path}`\n")
        if op.get("description"):
            parts.append(inspect.cleandoc(op["description"]) + "\n")
        params = op.get("parameters", [])
        if params:
            parts.append("| parameter | in | required | schema |\n|---|---|---|---|")
            for p in params:
                schema = json.dumps(p.get("schema", {}), sort_keys=True)
                parts.append(
                    f"| `{p['name']}` | {p['in']} | {p.get('required', False)} | "
                    f"`{_cell(schema)}` |"
                )
            parts.append("")
        body = op.get("requestBody")
        if body:
            parts.append(f"Request body: {_schema_name(body.get('content', {}))}\n")
        parts.append("| status | answer |\n|---|---|")
        for status, answer in op.get("responses", {}).items():
            shown = _schema_name(answer.get("content", {}))
            text = _cell(answer.get("description", ""))
            parts.append(f"| {status} | {text}{'; ' + shown if shown else ''} |")
        parts.append("")
    parts.extend(_schema_sections(doc.get("components", {}).get("schemas", {})))
    return "\n".join(parts)


def _schema_sections(schemas: dict[str, Any]) -> list[str]:
    """Every request and answer schema with its fields."""
    parts = ["## Schemas\n"] if schemas else []
    for name, schema in schemas.items():
        parts.append(f"### {name}\n")
        if schema.get("description"):
            parts.append(_cell(schema["description"]) + "\n")
        props = schema.get("properties", {})
        if props:
            required = set(schema.get("required", []))
            parts.append("| field | required | schema |\n|---|---|---|")
            for field, sub in props.items():
                shown = json.dumps(sub, sort_keys=True)
                if len(shown) > 160:
                    shown = shown[:157] + "..."
                parts.append(f"| `{field}` | {field in required} | `{_cell(shown)}` |")
            parts.append("")
    return parts


# --- the Python API and the errors ----------------------------------------------------------


def python_api_page() -> str:
    """``trainbill``'s public names (its lazy re-export table), one mkdocstrings block each."""
    import trainbill

    where: dict[str, str] = trainbill._WHERE  # the package's own export table
    parts = [
        "# Python API\n",
        (
            "The names `import trainbill` exports (each loads its module on first use), "
            "generated from the package's export table and docstrings when the site is built. "
            "Front ends call one of these and render the result; see "
            "[Architecture](../explanation/architecture.md).\n"
        ),
        (
            "```python\nimport trainbill\n\nplan = trainbill.load_plan("
            '"examples/seed-70b-finetune.toml")\nfc = trainbill.forecast(plan)\n'
            "print(fc.total_usd)\n```\n"
        ),
    ]
    for name, module in where.items():
        parts.append(f"## `trainbill.{name}`\n\n::: {module}.{name}\n")
    return "\n".join(parts)


def error_classes_page() -> str:
    """The exception tree of ``trainbill.errors``, each class with its docstring."""
    from trainbill import errors

    classes = [
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type)
        and issubclass(obj, errors.TrainbillError)
        and obj.__module__ == errors.__name__
    ]

    def depth(cls: type) -> int:
        return len([c for c in cls.__mro__ if c in classes]) - 1

    def order(cls: type) -> list[str]:
        return [c.__name__ for c in reversed(cls.__mro__) if c in classes]

    parts = [
        "# Error classes\n",
        (
            "Every error trainbill raises for input the user can fix is one of these classes "
            "(`trainbill.errors`; generated when the site is built). The CLI prints it as one "
            "line, `trainbill: error: …`, and exits with status 1; the web API answers a JSON "
            "refusal naming the field. A traceback is a bug. What the messages say and look like: "
            "[Errors](errors.md).\n"
        ),
        "| class | bases | meaning |\n|---|---|---|",
    ]
    for cls in sorted(classes, key=order):
        bases = ", ".join(f"`{b.__name__}`" for b in cls.__bases__)
        indent = "&nbsp;&nbsp;" * depth(cls)
        doc = _cell(inspect.cleandoc(cls.__doc__ or ""))
        parts.append(f"| {indent}`{cls.__name__}` | {bases} | {doc} |")
    return "\n".join(parts) + "\n"


def generated_pages() -> dict[str, str]:
    """Every generated page, by its path under the site's ``docs/``."""
    pages = cli_pages()
    pages["reference/plan-fields.md"] = plan_fields_page()
    pages["reference/http-api.md"] = http_api_page()
    pages["reference/python-api.md"] = python_api_page()
    pages["reference/error-classes.md"] = error_classes_page()
    return pages
