"""The calculator page's input handling in Chromium: junk in every field, odd instance choices,
a hung server, a phone-sized viewport.

Same approach as ``test_browser.py`` (uvicorn in a thread, Debian's Chromium through the
``playwright`` package, skipped when either is missing), but one browser for the whole file
and a fresh page per test. Every expected dollar figure is nodes × catalog price × hours.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import BILLS_OVERHEADS_TOML

pytestmark = pytest.mark.browser

T = 15_000  # ms; generous for a shared 2-core machine, never reached when the page works
#: Text the page must never show: a JS value leaking into the DOM, or a raw API error body.
LEAKS = re.compile(r"NaN|Infinity|undefined|null|\{\"detail|Traceback|request body:")
DEFAULT_QUOTE = "$226,529"  # 32 × p5.48xlarge $98.32/h × 72 h = 226,529.28


class Page:
    """A calculator page that records console errors, uncaught exceptions and forecast requests."""

    def __init__(self, page: Any, expect: Any, url: str) -> None:
        self.page, self.expect, self.url = page, expect, url
        self.console: list[str] = []
        self.crashes: list[str] = []
        self.forecasts = 0
        page.on("console", lambda m: self.console.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.crashes.append(str(e)))
        page.on("request", self._count)

    def _count(self, request: Any) -> None:
        if request.url.endswith("/v1/forecast"):
            self.forecasts += 1

    def type_into(self, field: str, text: str) -> None:
        """Clear the field and paste ``text`` (an input event, as a paste makes)."""
        self.page.fill(f"#{field}", "")
        self.page.focus(f"#{field}")
        self.page.keyboard.insert_text(text)

    def ready(self) -> None:
        self.expect(self.page.locator("#quote")).to_have_text(DEFAULT_QUOTE, timeout=T)

    def settled(self) -> None:
        """The debounce has fired and no request is pending."""
        self.page.wait_for_timeout(300)
        self.expect(self.page.locator("#result")).not_to_have_class(re.compile("busy"), timeout=T)

    def no_leaks(self) -> None:
        # A message may quote what the user typed ("“NaN” is not a number"); nothing else may.
        text = re.sub(r"“[^”]*”", "", self.page.locator("body").inner_text())
        assert not LEAKS.search(text), LEAKS.search(text)
        assert self.crashes == []

    def results_cleared(self) -> None:
        for card in ("quote", "total", "multiplier", "wall"):
            self.expect(self.page.locator(f"#{card}")).to_have_text("–")
        self.expect(self.page.locator("#ledger tbody tr")).to_have_count(0)
        self.expect(self.page.locator("#chart svg")).to_have_count(0)


@pytest.fixture
def calc(browser: tuple[Any, Any], server_url: str) -> Iterator[Page]:
    b, expect = browser
    context = b.new_context()
    try:
        page = Page(context.new_page(), expect, server_url + "/")
        yield page
    finally:
        context.close()


def test_loading_the_page_logs_no_console_error(calc: Page) -> None:
    """The browser's automatic /favicon.ico request used to 404 into the console on every load."""
    calc.page.goto(calc.url)
    calc.ready()
    calc.page.wait_for_timeout(300)
    assert calc.console == []
    calc.no_leaks()


#: (field, pasted text, what its message must say); the field's good value restores the default
#: plan.
BAD_NUMBERS = [
    ("nodes", "", "required"),
    ("nodes", "-1", "at least 1"),
    ("nodes", "1.5", "whole number"),
    ("nodes", "1e308", "far too large"),
    ("nodes", "1" + "0" * 30, "far too large"),
    ("nodes", "abc", "required"),  # a number input drops the letters: nothing is left
    ("hours", "0", "more than 0"),
    # Blank checkpoint and evaluation fields mean the catalog's default, as in a file that omits
    # them; junk is never read as blank (these are text inputs, so the letters stay and are named).
    ("ckpt", "abc", "not a number"),  # used to be priced silently at the default interval
    ("evalevery", "abc", "not a number"),  # likewise: junk priced as "every 1,000 steps"
    ("evalsteps", "2.5", "whole number"),
]
GOOD = {"nodes": "32", "hours": "72", "ckpt": "2", "evalevery": "1000", "evalsteps": "100"}


def test_bad_number_is_named_next_to_its_field_and_clears_the_result(calc: Page) -> None:
    calc.page.goto(calc.url)
    calc.ready()
    for field, typed, message in BAD_NUMBERS:
        sent = calc.forecasts
        calc.type_into(field, typed)
        slot = calc.page.locator(f"#{field}-error")
        calc.expect(slot).to_contain_text(message, timeout=T)
        calc.expect(calc.page.locator(f"#{field}")).to_have_attribute("aria-invalid", "true")
        calc.expect(calc.page.locator("#error")).to_contain_text(message)
        calc.results_cleared()  # the previous plan's $226,529 is not shown for this one
        assert calc.forecasts == sent, (field, typed)  # refused in the page: no 422 round trip
        calc.no_leaks()
        # The page keeps working: fix the field, the default plan's quote comes back, messages go.
        calc.type_into(field, GOOD[field])
        calc.ready()
        calc.expect(slot).to_have_text("")
        calc.expect(calc.page.locator("#error")).to_have_text("")
        calc.expect(calc.page.locator(f"#{field}")).not_to_have_attribute("aria-invalid", "true")
    assert calc.console == []


def test_model_size_text_is_parsed_strictly(calc: Page) -> None:
    """Text like "0x10" was priced as a 16-parameter model and "1,000" got a message about
    run.hours; now both are named at the field, and "7B" means 7 × 10^9 (the same bill as "7e9")."""
    calc.page.goto(calc.url)
    calc.ready()
    calc.page.check("#mode-model")
    slot = calc.page.locator("#params-error")
    for typed, message in [
        ("0x10", "not a number"),
        ("1,000", "without commas"),
        ("NaN", "not a number"),
        ("Infinity", "not a number"),
        ("1e400", "far too large"),
        ("  ", "required"),
    ]:
        calc.type_into("params", typed)
        calc.expect(slot).to_contain_text(message, timeout=T)
        calc.results_cleared()
        calc.no_leaks()
    calc.type_into("params", " 7000000000 ")
    calc.expect(slot).to_have_text("", timeout=T)
    calc.settled()
    calc.expect(calc.page.locator("#quote")).to_have_text(re.compile(r"^\$[\d,]+$"))
    seven_billion = calc.page.text_content("#quote")
    calc.type_into("params", "7B")
    calc.page.wait_for_timeout(300)
    calc.settled()
    calc.expect(calc.page.locator("#quote")).to_have_text(seven_billion or "", timeout=T)
    calc.no_leaks()
    assert calc.console == []


def test_server_refusal_is_shown_at_the_field_without_stale_numbers(calc: Page) -> None:
    """1e308 hours passes the page's checks and the API refuses it (422, field run.hours): the
    message goes under Hours, without the API's "request body:" prefix, and the cards empty."""
    calc.page.goto(calc.url)
    calc.ready()
    calc.type_into("hours", "1e308")
    calc.expect(calc.page.locator("#hours-error")).to_contain_text("at most 1,000,000", timeout=T)
    calc.results_cleared()
    calc.no_leaks()
    calc.type_into("hours", "36")
    calc.expect(calc.page.locator("#quote")).to_have_text(
        "$113,265", timeout=T
    )  # 32 × 98.32 × 36 = 113,264.64
    calc.expect(calc.page.locator("#hours-error")).to_have_text("")


def test_gcp_and_azure_instances_are_priced_and_spotless_ones_point_at_spot(calc: Page) -> None:
    """The page never sent cluster.provider, so every GCP and Azure instance was refused as
    "a gcp instance, not aws". An instance without spot prices points at the spot slider."""
    calc.page.goto(calc.url)
    calc.ready()
    calc.page.select_option("#instance", "a3-highgpu-8g")
    # 32 × a3-highgpu-8g $88.48999990/h (us-central1, Billing Catalog snapshot of 2025-05-01, in
    # force on 2025-05-01 after the GCP price refresh) × 72 h = 203,880.96
    calc.expect(calc.page.locator("#quote")).to_have_text("$203,881", timeout=T)
    calc.expect(calc.page.locator("#error")).to_have_text("")
    calc.page.select_option("#instance", "trn2.48xlarge")  # AWS again, on-demand only
    calc.expect(calc.page.locator("#spot-error")).to_contain_text("no spot price", timeout=T)
    calc.expect(calc.page.locator("#spot-error")).to_contain_text("0%")
    calc.results_cleared()
    calc.page.fill("#spot", "0")
    # 32 × trn2.48xlarge $21.50/h × 72 h = 49,536
    calc.expect(calc.page.locator("#quote")).to_have_text("$49,536", timeout=T)
    calc.expect(calc.page.locator("#spot-error")).to_have_text("")
    calc.page.fill("#asof", "1990-01-01")
    # trn2.48xlarge's first on-demand price point in prices.csv is dated 2024-12-03
    calc.expect(calc.page.locator("#asof-error")).to_contain_text(
        "on or after 2024-12-03", timeout=T
    )
    calc.results_cleared()
    calc.no_leaks()


def test_a_hung_request_times_out_and_a_late_answer_is_ignored(calc: Page) -> None:
    """A forecast that never answers used to leave the page busy forever with the old numbers."""
    calc.page.clock.install()
    calc.page.goto(calc.url)
    calc.ready()
    held: list[Any] = []

    def hold(route: Any) -> None:  # a bound list.append is not a handler playwright accepts
        held.append(route)

    calc.page.route("**/v1/forecast", hold)
    calc.page.fill("#nodes", "64")
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        calc.page.wait_for_timeout(50)
    assert held, "the page did not send the forecast"
    calc.expect(calc.page.locator("#result")).to_have_class(re.compile("busy"))
    calc.page.clock.fast_forward(31_000)
    calc.expect(calc.page.locator("#error")).to_contain_text("did not answer", timeout=T)
    calc.expect(calc.page.locator("#result")).not_to_have_class(re.compile("busy"))
    calc.results_cleared()
    calc.page.unroute("**/v1/forecast")
    calc.page.fill("#nodes", "16")
    calc.expect(calc.page.locator("#quote")).to_have_text(
        "$113,265", timeout=T
    )  # 16 × 98.32 × 72 = 113,264.64
    calc.expect(calc.page.locator("#error")).to_have_text("")
    # The 64-node answer arrives late (the page aborted its request): it must not replace 16 nodes.
    with contextlib.suppress(Exception):
        held[0].continue_()
    calc.page.wait_for_timeout(300)
    calc.expect(calc.page.locator("#quote")).to_have_text("$113,265")
    calc.no_leaks()


def test_narrow_viewport_has_no_sideways_scroll(calc: Page) -> None:
    """At 360 px the long instance names and the ledger pushed the page 160 px wide of the
    screen."""
    calc.page.set_viewport_size({"width": 360, "height": 740})
    calc.page.goto(calc.url)
    calc.ready()
    widths = calc.page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1] == 360
    box = calc.page.locator("#nodes").bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= 360
    calc.type_into("nodes", "-3")
    calc.expect(calc.page.locator("#nodes-error")).to_be_visible(timeout=T)
    slot = calc.page.locator("#nodes-error").bounding_box()
    assert slot is not None
    assert slot["x"] + slot["width"] <= 360
    calc.no_leaks()


_BILLS_CAL = BILLS_OVERHEADS_TOML.encode()


def test_calibration_files_reprice_the_plan_and_a_bad_one_is_named(
    calc: Page, server_url: str
) -> None:
    """A bill calibration loaded on the page prices the plan through /v1/forecast/calibrated
    with the file's text: the page shows the real bill that endpoint gives for the page's plan
    (asked again here, independently), which differs from the uncalibrated one; the file is
    named; a bad file is refused by its name with no stale figures; clearing brings the
    uncalibrated bill back."""
    import httpx

    calc.page.goto(calc.url)
    calc.ready()
    plain = calc.page.locator("#total").inner_text()
    file = {"name": "april-bills.toml", "mimeType": "text/plain", "buffer": _BILLS_CAL}
    with calc.page.expect_request(lambda r: r.url.endswith("/v1/forecast/calibrated")) as sent:
        calc.page.set_input_files("#calibration", files=[file])
    body = sent.value.post_data_json
    assert body["calibrations"] == [_BILLS_CAL.decode()]
    answer = httpx.post(server_url + "/v1/forecast/calibrated", json=body, timeout=60).json()
    uncalibrated = httpx.post(server_url + "/v1/forecast", json=body["plan"], timeout=60).json()
    assert answer["total_usd"] != uncalibrated["total_usd"]
    assert f"${round(uncalibrated['total_usd']):,}" == plain
    calc.expect(calc.page.locator("#calibrations")).to_contain_text("april-bills.toml", timeout=T)
    calc.expect(calc.page.locator("#total")).to_have_text(
        f"${round(answer['total_usd']):,}", timeout=T
    )
    # The calibrated forecast's actions, and how many things were not priced or not searched.
    for action in answer["actions"]:
        calc.expect(calc.page.locator("#actions")).to_contain_text(action["title"])
    if answer["action_notes"]:
        calc.expect(calc.page.locator("#actions")).to_contain_text(
            f"Not priced or not searched ({len(answer['action_notes'])})"
        )
    calc.no_leaks()
    # Simulate goes with the calibration too, as ``trainbill simulate --calibration``.
    with calc.page.expect_request(lambda r: r.url.endswith("/v1/simulate")) as simulated:
        calc.page.click("#simulate")
    assert simulated.value.post_data_json["calibrations"] == [_BILLS_CAL.decode()]
    calc.expect(calc.page.locator("#sim")).to_contain_text("P90", timeout=T)
    # and it says which rates priced the trials (the API's cautions); so does the planner.
    calc.expect(calc.page.locator("#sim")).to_contain_text("calibrated from bills")
    with calc.page.expect_request(lambda r: r.url.endswith("/v1/optimize")) as planned:
        calc.page.click("#optimize")
    assert planned.value.post_data_json["calibrations"] == [_BILLS_CAL.decode()]
    calc.expect(calc.page.locator("#opt")).to_contain_text("calibrated from bills", timeout=60_000)
    # So does the ledger download (bill rates, as ``trainbill report --calibration``).
    with calc.page.expect_request(lambda r: r.url.endswith("/v1/ledger.csv")) as ledger:
        calc.page.click("#download-csv")
    assert ledger.value.post_data_json["calibrations"] == [_BILLS_CAL.decode()]
    calc.expect(calc.page.locator("#file-status")).to_contain_text("Downloaded", timeout=T)
    bad = {
        "name": "invoice.toml",
        "mimeType": "text/plain",
        "buffer": b"[calibration]\nkind = 'invoice'\n",
    }
    calc.page.set_input_files("#calibration", files=[bad])
    calc.expect(calc.page.locator("#error")).to_contain_text("invoice.toml", timeout=T)
    calc.expect(calc.page.locator("#error")).to_contain_text("calibration.kind")
    calc.expect(calc.page.locator("#total")).to_have_text("–")
    calc.no_leaks()
    calc.page.click("#clear-calibrations")
    calc.expect(calc.page.locator("#total")).to_have_text(plain, timeout=T)
    calc.expect(calc.page.locator("#calibrations")).to_have_text("")
    # The browser logs the refused file's 422 itself; nothing else may reach the console.
    assert [m for m in calc.console if "status of 422" not in m] == []
