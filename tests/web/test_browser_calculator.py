"""The calculator in Chromium with a whole plan file: the seed scenario to the cent, the plan in
the address, TOML import and download, the report, simulate and optimize, what is not modelled,
a phone and print, and a hostile link. Skipped without Debian's chromium or ``playwright``.

Every expected dollar figure is the library's own forecast of the same plan file, computed here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SEED
from trainbill.catalog import load_catalog
from trainbill.forecasting import forecast
from trainbill.spec import Plan, load_plan

pytestmark = pytest.mark.browser

T = 20_000  # ms; generous for a shared 2-core machine, never reached when the page works
DEFAULT_QUOTE = "$226,529"  # 32 × p5.48xlarge $98.32/h × 72 h = 226,529.28


def _seed_total() -> str:
    """The library's real bill for the seed file, to the cent (the server prices with today's
    date)."""
    return f"${forecast(load_plan(SEED), load_catalog()).total_usd:,.2f}"


@pytest.fixture
def page(browser: tuple[Any, Any], server_url: str) -> Iterator[tuple[Any, Any, str]]:
    """(page, expect, url): a fresh context (downloads allowed), closed afterwards."""
    b, expect = browser
    context = b.new_context(accept_downloads=True)
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield p, expect, server_url + "/"
        assert errors == []
    finally:
        context.close()


def _import_seed(p: Any, expect: Any, url: str) -> None:
    p.goto(url)
    expect(p.locator("#quote")).to_have_text(DEFAULT_QUOTE, timeout=T)
    p.set_input_files("#import", str(SEED))
    expect(p.locator("#file-status")).to_contain_text("Imported", timeout=T)
    expect(p.locator("#ledger-total")).to_have_text(_seed_total(), timeout=T)


def test_seed_file_imported_shows_the_cli_real_bill_to_the_cent(page: tuple[Any, Any, str]) -> None:
    """Upload the seed file: its fields fill the form and the ledger total is the library's."""
    p, expect, url = page
    _import_seed(p, expect, url)
    # 70e9 params, FSx 24,000 GB, data from S3, 10,000 IOPS: the file's values, in their inputs.
    for field, value in [
        ("nodes", "32"),
        ("params", "70000000000"),
        ("fsx-gb", "24000"),
        ("data-source", "s3"),
        ("data-location", "cross_az"),
        ("ebs-iops", "10000"),
        ("s3nat", "true"),
        ("ckpt-target", "fsx"),
        ("orchestrator", "ec2"),
    ]:
        expect(p.locator(f"#{field}")).to_have_value(value)
    expect(p.locator("#extras li")).to_have_count(0)  # every field of the file has an input
    expect(p.locator("#notices li")).to_have_count(0)  # the model size is known: all modelled
    expect(p.locator("#error")).to_have_text("")


def test_the_plan_lives_in_the_address(page: tuple[Any, Any, str]) -> None:
    """After the import, a reload and the same link in a new tab show the same plan and bill."""
    p, expect, url = page
    _import_seed(p, expect, url)
    link = p.url
    assert "cluster.nodes=32" in link
    assert "storage.fsx_capacity_gb=24000" in link
    p.reload()
    expect(p.locator("#ledger-total")).to_have_text(_seed_total(), timeout=T)
    other = p.context.new_page()
    other.goto(link)
    expect(other.locator("#ledger-total")).to_have_text(_seed_total(), timeout=T)
    expect(other.locator("#params")).to_have_value("70000000000")
    other.close()


def test_downloaded_plan_is_the_seed_plan(page: tuple[Any, Any, str], tmp_path: Path) -> None:
    """The TOML the page downloads loads back to the seed file's own plan (round trip)."""
    p, expect, url = page
    _import_seed(p, expect, url)
    with p.expect_download(timeout=T) as info:
        p.click("#download-toml")
    path = tmp_path / "page.toml"
    info.value.save_as(path)
    assert info.value.suggested_filename == "seed-70b-finetune.toml"
    got: Plan = load_plan(path)
    assert got == load_plan(SEED)


def test_report_downloads_from_the_page(page: tuple[Any, Any, str], tmp_path: Path) -> None:
    """The report button saves the HTML report of the plan on the page."""
    p, expect, url = page
    p.goto(url)
    expect(p.locator("#quote")).to_have_text(DEFAULT_QUOTE, timeout=T)
    with p.expect_download(timeout=60_000) as info:
        p.click("#download-report")
    path = tmp_path / "report.html"
    info.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert text.lstrip().lower().startswith("<!doctype html")
    assert "$226,529" in text  # the quote: 32 × 98.32 × 72


def test_simulate_and_optimize_on_the_page(page: tuple[Any, Any, str]) -> None:
    """Simulate shows P50/P90 and the odds of missing a deadline; optimize the best plan and the
    front."""
    p, expect, url = page
    p.goto(url)
    expect(p.locator("#quote")).to_have_text(DEFAULT_QUOTE, timeout=T)
    p.fill("#deadline", "80")
    expect(p.locator("#result")).not_to_have_class(re.compile("busy"), timeout=T)
    expect(p.locator("#quote")).to_have_text(DEFAULT_QUOTE, timeout=T)
    p.click("#simulate")
    expect(p.locator("#sim-table")).to_contain_text("P90", timeout=60_000)
    expect(p.locator("#sim-table tbody tr").first).to_contain_text(
        re.compile(r"\$[\d,]+.*\$[\d,]+")
    )
    expect(p.locator("#sim-deadline")).to_contain_text(
        re.compile(r"missing the 80 h deadline: \d+\.\d%")
    )
    p.click("#optimize")
    expect(p.locator("#opt-best tbody tr").first).to_contain_text("best", timeout=60_000)
    assert p.locator("#opt-pareto tbody tr").count() >= 1
    # A change of plan drops the answers for the old one.
    p.fill("#nodes", "16")
    expect(p.locator("#sim-table")).to_have_count(0, timeout=T)
    expect(p.locator("#opt-best")).to_have_count(0)


def test_unmodelled_lines_are_said_not_silent(page: tuple[Any, Any, str]) -> None:
    """Without a model size the checkpoints are not priced and gradient sync is not modelled:
    the page says both; giving the size prices them and the notices go."""
    p, expect, url = page
    p.goto(url)
    expect(p.locator("#quote")).to_have_text(DEFAULT_QUOTE, timeout=T)
    notices = p.locator("#notices")
    expect(notices).to_contain_text("Checkpoints are not priced")
    expect(notices).to_contain_text("Gradient sync is not modelled")
    p.fill("#params", "70B")
    expect(p.locator("#notices li")).to_have_count(0, timeout=T)
    expect(p.locator("#ledger tbody tr", has_text="checkpointing")).to_have_count(1)


def test_instances_grouped_basis_by_keyboard_and_share(page: tuple[Any, Any, str]) -> None:
    """Instances sit in cloud · accelerator groups; categories read in plain words; an item opens
    onto its basis and source with the keyboard; the Share column adds up to the total's 100%."""
    p, expect, url = page
    p.goto(url)
    expect(p.locator("#quote")).to_have_text(DEFAULT_QUOTE, timeout=T)
    assert p.locator("#instance optgroup").count() >= 3
    group = p.locator("#instance optgroup", has=p.locator("option[value='p5.48xlarge']"))
    expect(group).to_have_attribute("label", "AWS · h100")
    # The first category heads its lines, named as the report names it, not by its key.
    expect(p.locator("#ledger tbody tr.category").first).to_have_text(
        "GPU instances (and head or login nodes)"
    )
    first = p.locator("#ledger tbody tr:not(.category)").first
    expect(first.locator(".basis")).not_to_be_visible()
    first.locator("summary").focus()
    p.keyboard.press("Enter")
    expect(first.locator(".basis")).to_be_visible()
    expect(first.locator(".source")).to_contain_text("Source: ")
    shares = p.locator(
        "#ledger tbody tr:not(#ledger-total-row):not(.category) td:nth-child(3)"
    ).all_text_contents()
    total = sum(float(s.rstrip("%")) for s in shares)
    assert abs(total - 100.0) <= 0.05 * len(shares)  # each share rounded to 0.1 %


def test_phone_shows_the_bill_without_scrolling_and_never_overflows(
    page: tuple[Any, Any, str],
) -> None:
    """At 390 px: no sideways scroll (also with the planner's tables), and the real bill stays in
    view at the top while the form is scrolled."""
    p, expect, url = page
    p.set_viewport_size({"width": 390, "height": 844})
    p.goto(url)
    expect(p.locator("#s-total")).to_have_text(re.compile(r"^\$[\d,]+$"), timeout=T)
    box = p.locator("#s-total").bounding_box()
    assert box is not None
    assert 0 <= box["y"] < 844
    p.locator("#ips").scroll_into_view_if_needed()
    box = p.locator("#s-total").bounding_box()
    assert box is not None
    assert box["y"] >= 0  # sticky at the top
    assert box["y"] + box["height"] <= 844
    p.click("#optimize")
    expect(p.locator("#opt-pareto")).to_have_count(1, timeout=60_000)
    width = p.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390


def test_print_shows_results_without_the_form(page: tuple[Any, Any, str]) -> None:
    """Printed: the bill, the ledger with every basis open, no form or buttons, nothing wider than
    the page."""
    p, expect, url = page
    p.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
    p.goto(url)
    expect(p.locator("#quote")).to_have_text(DEFAULT_QUOTE, timeout=T)
    p.emulate_media(media="print")
    p.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    expect(p.locator("#plan")).not_to_be_visible()
    expect(p.locator("#simulate")).not_to_be_visible()
    expect(p.locator("#total")).to_be_visible()
    expect(p.locator("#ledger tbody tr .basis").first).to_be_visible()
    assert p.evaluate("() => document.documentElement.scrollWidth") <= 794
    pdf = p.pdf(format="A4")
    assert pdf.startswith(b"%PDF")


HOSTILE = (
    "#run.name=%3Cscript%3Ewindow.__pwned%3D1%3C%2Fscript%3E"
    "%3Cimg%20src%3Dx%20onerror%3D%22window.__pwned%3D2%22%3E&"
    "cluster.instance=p5.48xlarge&cluster.nodes=1e400&run.hours=72&"
    "purchase.spot_fraction=0.5&prices.as_of=2025-05-01&checkpoint.interval_hours=2&"
    "cluster.nodez=5&__proto__.polluted=1&storage.fsx_tier=%3Cb%3Ebold%3C%2Fb%3E"
)


def test_a_hostile_link_is_named_field_by_field_and_never_rendered_as_html(
    page: tuple[Any, Any, str],
) -> None:
    """Script in a name, an unknown field, a number past any float, prototype keys, markup in a
    choice: each is named at its field, nothing of the link becomes markup or runs."""
    p, expect, url = page
    p.goto(url + HOSTILE)
    expect(p.locator("#nodes-error")).to_contain_text("far too large", timeout=T)
    expect(p.locator("#fsx-tier-error")).to_contain_text("not one of the choices")
    expect(p.locator("#error")).to_contain_text("__proto__.polluted")
    expect(p.locator("#name")).to_have_value(
        '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    )
    assert p.evaluate("() => window.__pwned === undefined && ({}).polluted === undefined")
    assert p.locator("img").count() == 0
    assert p.locator("body b", has_text="bold").count() == 0
    # Fix the fields the page can check: the server names the unknown field at its kept entry.
    p.fill("#nodes", "32")
    p.select_option("#fsx-tier", "")
    kept = p.locator("#extras li", has_text="cluster.nodez")
    expect(kept.locator(".field-error")).to_contain_text("unknown key", timeout=T)
    expect(p.locator("#error")).to_contain_text("cluster.nodez")
    kept.locator("button").click()
    expect(p.locator("#quote")).to_have_text(DEFAULT_QUOTE, timeout=T)
    assert p.evaluate("() => window.__pwned === undefined")
    # A huge number that is a float: the server's cap, named under its input.
    p.goto(url + "#cluster.instance=p5.48xlarge&cluster.nodes=32&run.hours=1e308")
    expect(p.locator("#hours-error")).to_contain_text("at most 1,000,000", timeout=T)
