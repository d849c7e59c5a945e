"""Issue #42 on the command line: a total row, 80 columns, both sides of every comparison.

The seed plan (32 × p5.48xlarge, half on spot, 72 h) is priced by the library in the test; the
terminal output must carry its figures in words a finance reader trusts.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEED, run_cli
from trainbill.catalog import load_catalog
from trainbill.forecasting import forecast
from trainbill.report.format import money
from trainbill.spec import load_plan

SRC = Path(__file__).resolve().parents[2] / "src"


def _forecast_at(columns: int) -> str:
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-m", "trainbill", "forecast", str(SEED)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout


@pytest.fixture(scope="module")
def at80() -> str:
    return _forecast_at(80)


def test_80_columns_total_row_holds_the_real_bill_and_no_line_is_longer(at80: str) -> None:
    fc = forecast(load_plan(SEED), load_catalog())
    total = money(fc.total_usd)  # "$163,698" for the seed as priced today
    lines = at80.splitlines()
    # The table's own total row: a bordered row naming the real bill and its amount.
    assert any(ln.startswith("│") and "Real bill" in ln and total in ln for ln in lines), at80
    assert max(len(ln) for ln in lines) <= 80


def test_80_columns_drop_quantity_and_unit_together(at80: str) -> None:
    """A quantity is never printed without its unit: both columns go, and the note says so."""
    head = next(ln for ln in at80.splitlines() if ln.startswith("┃"))
    assert ("quantity" in head) == ("unit " in head or "unit┃" in head.replace(" ", ""))
    assert "quantity" not in head
    assert re.search(r"left out .*quantity, unit", " ".join(at80.split()))


def test_wrapped_text_keeps_its_indent(at80: str) -> None:
    """A caveat or warning wraps under itself, never back to column 0."""
    lines = at80.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.lstrip().startswith("caveat:"))
    assert lines[i + 1].startswith(" " * 9)
    assert not any(ln and not ln[0].isspace() for ln in lines[i + 1 : i + 3])


def test_comparisons_name_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's real bill is above planned and below the quote: both said with their side."""
    fc = forecast(load_plan(SEED), load_catalog())
    assert fc.planned_usd < fc.total_usd < fc.quote_usd
    code, out, _ = run_cli(capsys, "forecast", str(SEED))
    assert code == 0
    flat = " ".join(out.split())
    assert "the quote does not show" not in flat
    over = round(fc.total_usd - fc.planned_usd)  # hidden costs, against planned
    under = round(fc.quote_usd - fc.total_usd)  # against the quote
    assert f"+${over:,} over planned" in flat
    assert f"-${under:,} under the quote, because half the nodes are spot" in flat


def test_prices_list_money_columns_share_one_decimal_point(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """On-demand $/GPU-hour ("$6.88", "$2.7447") lines up on its decimal point."""
    code, out, _ = run_cli(capsys, "prices", "list", "--wide")
    assert code == 0
    head = next(ln for ln in out.splitlines() if "on-demand" in ln and ln.startswith("┃"))
    start = head.index("┃ on-demand") + 2
    points = {
        ln.index(".", start)
        for ln in out.splitlines()
        if ln.startswith("│") and ln[start : start + 11].strip().startswith("$")
    }
    assert len(points) == 1, points


def test_diff_reads_in_human_labels_and_formatted_numbers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Categories by name ("GPUs waiting on gradient sync …", not sync_stall); a changed input
    as the ledger writes numbers (the seed's 2000 GB → "2,000", not "2000.0")."""
    code, out, _ = run_cli(
        capsys, "diff", str(SEED), "--set", "storage.ebs_gb_per_node=2500.5", "--wide"
    )
    assert code in (0, 3)
    assert "sync_stall" not in out
    assert "GPUs waiting on gradient sync and slow GPUs" in out
    assert "2000.0" not in out
    assert re.search(r"storage\.ebs_gb_per_node\s*│\s*2,000\s*│\s*2,500\.5\s*│", out)
