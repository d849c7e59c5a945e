"""What the report says: plain names, no internal labels, real commands, deadline words only with a
deadline."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
import typer.main

from conftest import SEED, TODAY
from trainbill.catalog import Catalog
from trainbill.cli import app, register_commands
from trainbill.ledger import CATEGORIES
from trainbill.report import build_report, render_html
from trainbill.report.format import category_name, plain_text
from trainbill.spec import load_plan


def _visible_text(html: str) -> str:
    """The page's text: no tags, no style sheet, no data: URIs."""
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.DOTALL)
    html = re.sub(r'href="data:[^"]*"', "", html)
    return unescape(re.sub(r"<[^>]+>", " ", html))


@pytest.fixture(scope="module")
def seed_html(catalog: Catalog) -> str:
    return render_html(build_report(load_plan(SEED), catalog, today=TODAY, trials=300))


def _with_deadline(catalog: Catalog, hours: float | None) -> str:
    plan = load_plan(SEED)
    plan = plan.model_copy(update={"run": plan.run.model_copy(update={"deadline_hours": hours})})
    return render_html(build_report(plan, catalog, today=TODAY, trials=300))


def test_no_internal_reference_labels_reach_the_reader(seed_html: str) -> None:
    """Catalog sources cite "REFERENCE §4.1 [SKY-AWS-a]" and ../shared paths; the report shows
    neither."""
    text = _visible_text(seed_html)
    for label in ("REFERENCE", "§", "../shared", "shared/data", "[SKY-"):
        assert label not in text, label
    assert "AWS Price List archives" in text  # the public source next to the label stays


def test_plain_text_keeps_the_public_source() -> None:
    """Each kind of internal label found in the catalog goes; the words around it stay."""
    cases = {
        "AWS Price List archives (REFERENCE §4.1); price point": (
            "AWS Price List archives; price point"
        ),
        "midpoint (pre-June-2025 snapshot) (REFERENCE §4.1 [SKY-AWS-a]); effective": (
            "midpoint (pre-June-2025 snapshot); effective"
        ),
        "(REFERENCE §4.2 [SKY-GCP], date approximate)": "(date approximate)",
        "page; REFERENCE §4.1; launched: 2022": "page; launched: 2022",
        "(UNVERIFIED, ../shared/data/published-runs/failure_rates.csv)": "(UNVERIFIED)",
        "Highest MFU in ../shared/data/published-runs/published_runs.csv: mpt": (
            "Highest MFU in published_runs.csv: mpt"
        ),
    }
    for raw, plain in cases.items():
        assert plain_text(raw) == plain


def test_ledger_categories_read_as_words(seed_html: str) -> None:
    """No snake_case category key in a table cell; each category's plain name is there."""
    for cat in CATEGORIES:
        if "_" in cat:
            assert f">{cat}<" not in seed_html, cat
    assert ">GPUs waiting on gradient sync and slow GPUs<" in seed_html
    assert category_name("spot_reclaim") == "Work redone after spot reclaims"


def _resolves(words: list[str], root: Any) -> bool:
    """Typer's groups (its own Click classes) have ``commands``; a command does not."""
    cmd = root
    for w in words:
        if not hasattr(cmd, "commands"):
            return True  # the rest are the command's arguments
        sub = cmd.commands.get(w)
        if sub is None:
            return False
        cmd = sub
    return not hasattr(cmd, "commands")  # a group alone ("trainbill bill") is not a command


def test_every_command_the_report_names_exists(seed_html: str) -> None:
    """Each `trainbill …` in the report resolves to a command of the CLI (the footer said
    `trainbill bills`)."""
    register_commands([])
    root = typer.main.get_command(app)
    mentions = re.findall(r"\btrainbill((?: [a-z][a-z-]*)+)", _visible_text(seed_html))
    assert any(m.startswith(" bill compare") for m in mentions)
    for m in mentions:
        assert _resolves(m.split()[:2], root), f"trainbill{m}"
    assert not _resolves(["bills"], root)  # the check itself can fail


def test_deadline_words_appear_only_with_a_deadline(seed_html: str, catalog: Catalog) -> None:
    """The seed plan has no deadline: no caption or planner note speaks of one; with 100 h, they
    do."""
    captions = re.findall(r"<figcaption[^>]*>(.*?)</figcaption>", seed_html)
    planner_note = re.search(r"From the planner.*?</p>", seed_html)
    assert captions
    assert planner_note is not None
    assert not any("deadline" in c for c in captions)
    assert "deadline" not in planner_note.group(0)
    html = _with_deadline(catalog, 100.0)
    assert "the solid line is the 100 h deadline" in html
    assert "The plan&#x27;s 100 h deadline is lifted" in html


def test_cost_over_time_lists_the_seed_runs_month_and_days(seed_html: str) -> None:
    """From 2025-05-01 for 81.8 h: one month, four days (24 + 24 + 24 + 9.8 h)."""
    section = seed_html[seed_html.index("<h2>Cost over time</h2>") :]
    section = section[: section.index("</section>")]
    assert "<td>2025-05</td>" in section
    for day in ("2025-05-01", "2025-05-02", "2025-05-03", "2025-05-04"):
        assert f"<td>{day}</td>" in section
    assert "2025-05-05" not in section


def test_the_report_offers_both_ledger_downloads(seed_html: str) -> None:
    """CSV and XLSX travel inside the file as data: links named after the plan."""
    assert 'download="seed-70b-finetune-ledger.csv"' in seed_html
    assert 'download="seed-70b-finetune-ledger.xlsx"' in seed_html
    assert 'href="data:text/csv;base64,' in seed_html


def test_a_long_tail_of_days_is_summed_in_one_row() -> None:
    """48 h at $10/h from 2025-01-01, then a commitment's 720 unused hours at $1/h (30 days of $24):
    32 days; 14 listed, the other 18 (Jan 15 to Feb 1) in one row of 18 × $24 = $432."""
    from datetime import date

    from trainbill.catalog import Provenance
    from trainbill.ledger import Ledger, LineItem
    from trainbill.report._html import _spend_section
    from trainbill.spend import spend_over_time

    def line(cat: str, qty: float, unit: str, price: float) -> LineItem:
        return LineItem(
            category=cat,
            item=cat,
            quantity=qty,
            unit=unit,
            unit_price_usd=price,
            basis="b",
            source="s",
            provenance=Provenance.PUBLISHED,
            after_run=unit == "hour",  # the commitment's unused term
        )

    ledger = Ledger.of(
        [line("compute", 48, "cluster-hour", 10.0), line("discount", 720, "hour", 1.0)]
    )
    html = _spend_section(spend_over_time(ledger, start=date(2025, 1, 1), wall_hours=48))
    assert "<td>2025-01-14</td>" in html
    assert "<td>2025-01-15</td>" not in html
    assert (
        '18 more days to 2025-02-01 (XLSX export)</td><td class="num">-</td><td '
        'class="num">$432</td>' in html
    )
