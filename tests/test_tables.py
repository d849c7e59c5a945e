"""Tables never cut identifiers or money: narrow terminals drop named columns, --wide shows all."""

from __future__ import annotations

import pytest
from rich.console import Console

import trainbill.cli._common as common
from conftest import SEED, run_cli
from trainbill.cli._tables import Col, print_table


@pytest.fixture
def columns(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Set COLUMNS and drop the cached console so the next command reads it."""

    def set_width(n: int) -> None:
        monkeypatch.setenv("COLUMNS", str(n))
        monkeypatch.delitem(common.__dict__, "console", raising=False)

    yield set_width
    monkeypatch.delitem(common.__dict__, "console", raising=False)


@pytest.mark.parametrize("width", [80, 100, 160])
def test_forecast_keeps_instance_names_and_amounts(
    width: int, columns, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    """The seed forecast at 80/100/160 columns: 1,152 h × $98.32 = $113,265 and 1,152 h × $25.66 =
    $29,560 printed whole next to "p5.48xlarge", no "…", no line wider than the terminal."""
    columns(width)
    code, out, _ = run_cli(capsys, "forecast", str(SEED))
    assert code == 0
    assert "…" not in out
    assert "p5.48xlarge" in out
    assert "$113,265" in out
    assert "$29,560" in out
    assert max(len(line) for line in out.splitlines()) <= width
    left_out = "columns: left out" in " ".join(out.split())
    assert left_out == (width < 100)  # at 100 the item column wraps instead; at 80 columns go


def test_drop_order_and_the_note() -> None:
    """Columns go highest rank first until the rest fits; the note names them; keep cells stay
    whole."""
    con = Console(width=40, record=True, highlight=False)
    cols = [Col("instance"), Col("price", "right"), Col("a", drop=1), Col("b", drop=2)]
    rows = [["Standard_ND96isr_H100_v5", "$98.32", "x" * 10, "y" * 10]]
    # instance 24 + price 6 + 1 + 3 × 2 = 37 ≤ 40: both low-value columns must go, b (rank 2) first.
    dropped = print_table(con, "t", cols, rows)
    assert dropped == ["b", "a"]
    text = con.export_text()
    assert "Standard_ND96isr_H100_v5" in text
    assert "$98.32" in text
    assert "left out b, a" in " ".join(text.split())


def test_wide_keeps_every_column() -> None:
    """--wide prints every column even on a 40-column console, and says nothing is left out."""
    con = Console(width=40, record=True, highlight=False)
    cols = [Col("instance"), Col("price", "right"), Col("a", drop=1), Col("b", drop=2)]
    assert (
        print_table(
            con, "t", cols, [["Standard_ND96isr_H100_v5", "$98.32", "x" * 10, "y" * 10]], wide=True
        )
        == []
    )


def test_shell_completion_completes_commands_and_options() -> None:
    """Typer's completion is on: the bash script names trainbill, and completing "pri" offers
    "prices" and "prices list --s" offers "--sort"."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    script = subprocess.run(
        [sys.executable, "-m", "trainbill", "--show-completion", "bash"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "complete -o default -F _trainbill_completion trainbill" in script.stdout, (
        script.returncode,
        script.stderr[-2000:],
    )
    for words, cword, want in (
        ("trainbill pri", "1", "prices"),
        ("trainbill prices list --s", "3", "--sort"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "trainbill"],
            capture_output=True,
            text=True,
            check=False,
            env={
                **env,
                "COMP_WORDS": words,
                "COMP_CWORD": cword,
                "_TRAINBILL_COMPLETE": "complete_bash",
            },
        )
        assert want in done.stdout.split()
