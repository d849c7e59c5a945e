"""Every command output shown in README.md and docs/ is what the CLI prints today.

The blocks are rendered by ``tools/render_examples.py`` (``python tools/render_examples.py``
rewrites them); these tests fail when a shown output differs, and show that the check can fail:
a copy with one digit changed is caught, and rendering the copy restores it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import render_examples
from render_examples import BLOCK, ExampleError, documents, render_text, stale

REPO = Path(__file__).resolve().parents[2]


def _needs_bills() -> None:
    # Two blocks read a sample bill (`trainbill bill …`), which needs the `bills` extra.
    pytest.importorskip("duckdb", reason="the docs show `trainbill bill` output: needs .[bills]")
    pytest.importorskip("ibis", reason="the docs show `trainbill bill` output: needs .[bills]")


def test_every_shown_output_is_what_the_tool_prints() -> None:
    _needs_bills()
    found = stale(documents())
    assert not found, "shown outputs differ; run `python tools/render_examples.py`:\n" + "\n".join(
        found.values()
    )


def test_the_readme_and_the_tutorial_show_the_flagship_bill() -> None:
    specs = {m["spec"] for p in documents() for m in BLOCK.finditer(p.read_text("utf-8"))}
    flagship = "trainbill forecast examples/seed-70b-finetune.toml"
    readme = (REPO / "README.md").read_text("utf-8")
    assert any(m["spec"].startswith(flagship) for m in BLOCK.finditer(readme))
    assert f"{flagship}; columns=160" in specs  # the tutorial's: the whole ledger
    assert "Real bill (forecast)" in readme


def _first_number(text: str) -> tuple[int, int]:
    """Where the first digit inside a shown output's console block lies."""
    m = BLOCK.search(text)
    assert m is not None
    body_start = m.start("body")
    first_line_end = text.index("\n", text.index("$ trainbill", body_start))  # skip the command
    digit = re.compile(r"[0-9]").search(text, first_line_end, m.end("body"))
    assert digit is not None
    return digit.start(), digit.end()


def test_changing_a_number_in_a_shown_output_fails_the_check(tmp_path: Path) -> None:
    copy = tmp_path / "README.md"
    original = (REPO / "README.md").read_text("utf-8")
    start, end = _first_number(original)
    changed = original[:start] + str((int(original[start]) + 1) % 10) + original[end:]
    assert changed != original
    copy.write_text(changed, encoding="utf-8")

    found = stale([copy])

    assert copy in found  # the check fails on the changed copy …
    assert "(shown)" in found[copy]
    assert "(printed)" in found[copy]
    assert render_examples.main(["--check", str(copy)]) == 1
    # … and rendering puts back exactly what the tool prints.
    assert render_text(changed, render_examples._run_from_repo) == original


def test_a_block_whose_command_exits_otherwise_is_an_error() -> None:
    # A shown output that turned into an error message must not be rendered silently.
    def fails(argv: list[str], columns: int) -> tuple[int, str]:
        return 1, "trainbill: error: no\n"

    text = "<!-- output: trainbill forecast x.toml -->\n<!-- /output -->"
    with pytest.raises(ExampleError, match="exited 1"):
        render_text(text, fails)
    # exit= states the status an error example must end with
    shown = render_text(text.replace(" -->\n", "; exit=1 -->\n", 1), fails)
    assert "trainbill: error: no" in shown


def test_from_and_mask_options() -> None:
    def prints(argv: list[str], columns: int) -> tuple[int, str]:
        assert columns == 77
        return 0, "head\nQuote: $1\ntook 0.25 s)\n"

    spec = "trainbill x; from=Quote; mask=[0-9.]+(?= s\\)); columns=77"
    text = f"<!-- output: {spec} -->\n<!-- /output -->"
    shown = render_text(text, prints)
    assert "head" not in shown
    assert "…\nQuote: $1\ntook … s)\n" in shown
    with pytest.raises(ExampleError, match="unknown option"):
        render_text("<!-- output: trainbill x; colour=no -->\n<!-- /output -->", prints)
