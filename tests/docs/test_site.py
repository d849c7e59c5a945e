"""`mkdocs build --strict` succeeds, and the built site is complete and agrees with the CLI.

The site (``mkdocs.yml``) generates its reference from the code at build time
(``tools/mkdocs_hooks.py``); strict mode fails on a broken link, a missing page or a nav entry
without a file. ``pip install -e ".[all]"`` installs the ``docs`` extra, so CI runs this.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_reference import cli_commands, field_docstrings, run_cli

from trainbill.cli import COMMANDS
from trainbill.spec import _fields

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason='the docs site needs pip install -e ".[docs]"')
    pytest.importorskip("fastapi", reason="the HTTP API reference reads the web app: .[web]")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml", "-d", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text("utf-8")


def _code_text(page: str) -> str:
    """The text of a page's code blocks, as a reader sees it (highlighting tags removed)."""
    blocks = re.findall(r"<pre[^>]*>(.*?)</pre>", page, flags=re.DOTALL)
    return "\n".join(html.unescape(re.sub(r"<[^>]+>", "", block)) for block in blocks)


def test_every_top_level_command_has_a_page_saying_what_its_help_says(site: Path) -> None:
    assert list(cli_commands()) == list(COMMANDS)
    for name in COMMANDS:
        page = _page(site, f"reference/cli/{name}")
        code, help_text = run_cli([name, "--help"])
        assert code == 0
        # The page shows exactly the text `trainbill NAME --help` prints.
        assert f"$ trainbill {name} --help\n{help_text}" in _code_text(page), name


def test_the_plan_field_reference_lists_every_field_of_the_schema(site: Path) -> None:
    page = _page(site, "reference/plan-fields")
    fields = list(_fields())
    assert len(fields) > 60  # every section's fields, extra groups included
    for path in fields:
        assert f"<code>{path}</code>" in page, path


def test_every_plan_field_has_a_meaning_in_the_schema() -> None:
    from trainbill.spec import ExtraGroup, Plan

    docs = field_docstrings()
    sections = [s.section for s in Plan.model_fields.values() if s.section] + [ExtraGroup]
    for section in sections:
        for field in section.model_fields:
            assert docs[section.__name__].get(field), f"{section.__name__}.{field}"


def test_the_site_has_the_reference_and_explanation_pages(site: Path) -> None:
    for path in (
        "tutorial",
        "reference/http-api",
        "reference/python-api",
        "reference/error-classes",
        "explanation/architecture",
        "explanation/time-model",
        "benchmarks",
    ):
        assert (site / path / "index.html").exists(), path
    api = _page(site, "reference/http-api")
    assert "/v1/forecast" in api
    assert "/healthz" in api
    python_api = _page(site, "reference/python-api")
    assert "load_plan" in python_api
    assert "Itemized real bill" in _page(site, "reference/cli")  # forecast's help, in the index
