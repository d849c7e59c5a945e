"""The Savings Plan advisor: CSV validation, the exact optimum and the 60-70% rule check."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from conftest import EXAMPLES, run_argv
from costs.tiny import price
from trainbill.catalog import Catalog
from trainbill.commit import MonthlyUsage, advise_commitment, parse_usage_csv
from trainbill.errors import PriceNotFoundError, SpecError

AS_OF = date(2026, 12, 2)
# p5.48xlarge on-demand after the June-2025 cut: $55.04/h for 8 H100 = $6.88/GPU-hour (prices.csv).
OD = 55.04 / 8


@pytest.fixture
def rated(catalog: Catalog) -> Catalog:
    """The packaged catalog with its p5.48xlarge commitment rates replaced by made-up ones (a
    price-data change must not move a logic test): 1yr at 58% and 3yr at 45% of the $55.04
    on-demand rate."""
    kept = (
        p for p in catalog.prices if p.item != "p5.48xlarge" or p.option in ("on_demand", "spot")
    )
    return replace(
        catalog,
        prices=(
            *kept,
            price("p5.48xlarge", "sp_1yr", "instance-hour", 0.58 * 55.04),
            price("p5.48xlarge", "sp_3yr", "instance-hour", 0.45 * 55.04),
        ),
    )


def _usage(*hours: float) -> MonthlyUsage:
    return MonthlyUsage(
        months=tuple(f"2026-{i + 1:02d}" for i in range(len(hours))), gpu_hours=hours
    )


def test_optimum_and_break_even_by_hand(rated: Catalog) -> None:
    """Months 100, 100, 100, 200 GPU-h; 1yr = 42% off, so break-even = 0.58.

    cost(K) per month in on-demand GPU-h: K=0 → 125; K=100 → 0.58·100 + 25 = 83; K=200 → 116.
    The optimum commits 100 GPU-h: 83 × $6.88 = $571.04/month. A 3yr term over a 12-month
    horizon is paid 36 months: effective rate 0.45 × 3 = 1.35 × on-demand, so commit nothing.
    """
    a = advise_commitment(
        _usage(100, 100, 100, 200), rated, instance="p5.48xlarge", as_of=AS_OF, horizon_months=12
    )
    one, three = a.terms
    assert one.break_even_utilization == pytest.approx(0.58)
    assert one.commit_gpu_hours_per_month == pytest.approx(100)
    assert one.expected_usd_per_month == pytest.approx(83 * OD)
    assert three.effective_break_even_utilization == pytest.approx(1.35)
    assert three.commit_gpu_hours_per_month == 0
    assert a.best_term == "1yr"


def test_rule_of_thumb_holds_only_when_usage_shrinks(rated: Catalog) -> None:
    """Steady 1,000 GPU-h: optimum commits 100% of baseline; the 70% rule forgoes 300 h × 42%.

    Regret at scale 1.0 = 300 × $6.88 × 0.42 = $866.88/month (> 1% of $6,880 spend): fails.
    At scale 0.7 usage is 700 = 70% of the historical baseline: the rule is optimal (regret 0).
    """
    a = advise_commitment(
        _usage(*[1000] * 12), rated, instance="p5.48xlarge", as_of=AS_OF, horizon_months=12
    )
    checks = {c.scale: c for c in a.terms[0].rule_checks}
    assert checks[1.0].rule_regret_usd_per_month == pytest.approx(300 * OD * 0.42)
    assert not checks[1.0].holds
    assert checks[0.7].rule_regret_usd_per_month == pytest.approx(0.0, abs=1e-6)
    assert checks[0.7].holds


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("month,hours\n2026-01,5\n", "header"),
        ("month,gpu_hours\n2026-01,5\n2026-13,4\n", "row 3, column month"),
        ("month,gpu_hours\n2026-01,5\n2026-02,-4\n", "row 3, column gpu_hours"),
        ("month,gpu_hours\n2026-01,lots\n", "row 2, column gpu_hours"),
        ("month,gpu_hours\n2026-01,5\n2026-01,6\n", "row 3, column month"),
        ("month,gpu_hours\n", "rows"),
    ],
)
def test_csv_errors_name_file_row_and_column(text: str, where: str) -> None:
    """Every CSV problem names the file, the row and the column."""
    with pytest.raises(SpecError) as err:
        parse_usage_csv(text, source="u.csv")
    assert str(err.value).startswith(f"u.csv: {where}: ")


def test_cli_commit_json_on_example(capsys: pytest.CaptureFixture[str]) -> None:
    """The example CSV yields a commitment no larger than the peak month and a best term."""
    code, out, _err = run_argv(
        ["commit", str(EXAMPLES / "usage-monthly.csv"), "--as-of", "2026-12-02", "--json"], capsys
    )
    assert code == 0
    data = json.loads(out)
    assert data["months"] == 12
    assert data["baseline_gpu_hours"] == 148500
    assert data["best_term"] in {"1yr", "3yr"}
    for t in data["terms"]:
        assert 0 <= t["commit_gpu_hours_per_month"] <= data["peak_gpu_hours"]


def test_cli_commit_bad_row_is_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A bad CSV row exits 1 with 'trainbill: error:' naming file, row and column."""
    bad = tmp_path / "u.csv"
    bad.write_text("month,gpu_hours\n2026-01,x\n", encoding="utf-8")
    code, _out, err = run_argv(["commit", str(bad)], capsys)
    assert code == 1
    assert err.startswith("trainbill: error:")
    assert "row 2, column gpu_hours" in err


def test_impossible_month_is_a_typo() -> None:
    """1e6 GPUs × 31 days × 24 h = 7.44e8 GPU-hours is the most one month can hold."""
    assert parse_usage_csv("month,gpu_hours\n2026-01,744000000\n").gpu_hours == (7.44e8,)
    with pytest.raises(
        SpecError, match=r"row 2, column gpu_hours: '1e300' GPU-hours in one month is more than"
    ):
        parse_usage_csv("month,gpu_hours\n2026-01,1e300\n")


def test_horizon_is_bounded(catalog: Catalog) -> None:
    usage = parse_usage_csv("month,gpu_hours\n2026-01,1000\n")
    with pytest.raises(SpecError, match=r"horizon must be 1 to 600 months \(got 100000000\)"):
        advise_commitment(
            usage,
            catalog,
            instance="p5.48xlarge",
            as_of=date(2026, 6, 1),
            horizon_months=100_000_000,
        )


def test_cli_reads_a_spreadsheet_bom(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Excel's "CSV UTF-8" starts with a byte-order mark; the header read as '\\ufeffmonth'
    before."""
    f = tmp_path / "usage.csv"
    f.write_bytes(b"\xef\xbb\xbfmonth,gpu_hours\n2026-01,1000\n2026-02,1000\n")
    code, out, _err = run_argv(["commit", str(f), "--json", "--as-of", "2026-12-02"], capsys)
    assert code == 0
    assert json.loads(out)["months"] == 2


@pytest.mark.parametrize("value", ["2.500,5", "2,5", "1,23"])
def test_a_decimal_comma_is_refused_naming_the_cell(value: str) -> None:
    """'2.500,5' was read as 2.5005 (commas dropped); only thousands separators are allowed."""
    with pytest.raises(
        SpecError, match=r"u\.csv: row 2, column gpu_hours: .*not a thousands separator"
    ):
        parse_usage_csv(f'month,gpu_hours\n2026-01,"{value}"\n', source="u.csv")


def test_thousands_separators_still_read() -> None:
    """'2,500.5' is 2500.5 and '1,234,567' is 1234567."""
    u = parse_usage_csv('month,gpu_hours\n2026-01,"2,500.5"\n2026-02,"1,234,567"\n')
    assert u.gpu_hours == (2500.5, 1234567.0)


def test_only_a_published_rate_is_advised_on(catalog: Catalog) -> None:
    """p3dn.24xlarge has no commitment rate of any kind in the packaged catalog: the advice
    refuses rather than restate a claimed discount, and names instances that have one.
    p5en.48xlarge on 2026-12-02 (EC2 Instance SP, the advisor's default kind): 1-yr No Upfront
    $39.87648 ([CAT-2026-09], prices-2026-12.md §1) / 8 = $4.98456 per GPU-hour; 3-yr: the
    newest point in force is the All Upfront $23.80 of 2026-10-03 / 8 = $2.975."""
    usage = _usage(*[1000] * 12)
    with pytest.raises(
        PriceNotFoundError, match=r"no published commitment rate for p3dn\.24xlarge"
    ):
        advise_commitment(usage, catalog, instance="p3dn.24xlarge", as_of=AS_OF)
    a = advise_commitment(usage, catalog, instance="p5en.48xlarge", as_of=AS_OF)
    assert [t.term for t in a.terms] == ["1yr", "3yr"]
    assert a.terms[0].rate_usd_per_gpu_hour == pytest.approx(39.87648 / 8)
    assert a.terms[1].rate_usd_per_gpu_hour == pytest.approx(23.80 / 8)
    assert "3-yr EC2 Instance Savings Plan" in a.terms[1].rate_source


def test_the_advisor_asks_the_forecasts_rule_for_its_rate(catalog: Catalog) -> None:
    """One rule for a commitment rate (issue #38): a Compute Savings Plan on p4d.24xlarge has no
    published rate, so the advisor, like the forecast, uses the Convertible RI 1-yr No Upfront
    $16.705312 ([VAN-2025-11]) as a labelled proxy: / 8 GPUs = $2.088164 per GPU-hour; the
    EC2 Instance kind uses the Standard RI $13.921094 / 8 = $1.74013675."""
    usage = _usage(*[1000] * 12)
    a = advise_commitment(usage, catalog, instance="p4d.24xlarge", as_of=AS_OF, kind="compute")
    one = next(t for t in a.terms if t.term == "1yr")
    assert one.rate_usd_per_gpu_hour == pytest.approx(16.705312 / 8)
    assert one.rate_source.startswith("proxy: no published 1yr Compute Savings Plan rate")
    b = advise_commitment(usage, catalog, instance="p4d.24xlarge", as_of=AS_OF)
    assert next(t for t in b.terms if t.term == "1yr").rate_usd_per_gpu_hour == pytest.approx(
        13.921094 / 8
    )
    with pytest.raises(SpecError, match="'sagemaker' is not a Savings Plan kind the advisor"):
        advise_commitment(usage, catalog, instance="p4d.24xlarge", as_of=AS_OF, kind="sagemaker")


def test_a_region_without_prices_is_said_and_a_misspelt_one_refused(catalog: Catalog) -> None:
    """eu-west-9 is shaped like an AWS region but has no p5en price: us-east-1's are used, and
    said; 'mars' cannot be an AWS region."""
    usage = _usage(*[1000] * 12)
    a = advise_commitment(usage, catalog, instance="p5en.48xlarge", region="eu-west-9", as_of=AS_OF)
    (note,) = a.notes
    assert note.startswith("no p5en.48xlarge price for eu-west-9 in the catalog: the us-east-1")
    with pytest.raises(SpecError, match="'mars' is not a region name of aws"):
        advise_commitment(usage, catalog, instance="p5en.48xlarge", region="mars", as_of=AS_OF)


def test_a_missing_month_is_refused_naming_it() -> None:
    """2025-11, 2026-01 and 2026-04: 2025-12, 2026-02 and 2026-03 are missing (across a year)."""
    text = "month,gpu_hours\n2026-01,5\n2025-11,4\n2026-04,6\n"
    with pytest.raises(SpecError, match=r"month\(s\) 2025-12, 2026-02, 2026-03 missing between"):
        parse_usage_csv(text, source="u.csv")


def test_a_horizon_shorter_than_every_term_is_the_reason_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """p5en's 3-yr rate $23.80 / 8 = $2.975 per GPU-hour, paid 36 months over a 6-month horizon:
    $2.975 × 6 = $17.85 effective against $63.296 / 8 = $7.912 on demand, break-even 2.26."""
    code, out, _err = run_argv(
        ["commit", str(EXAMPLES / "usage-monthly.csv"), "--as-of", "2026-12-02",
         "--horizon-months", "6"],
        capsys,
    )  # fmt: skip
    assert code == 0
    assert "no commitment (every term outlives the 6-month horizon" in " ".join(out.split())


def test_a_price_date_beyond_the_price_data_is_said(rated: Catalog) -> None:
    """Was: ``commit --as-of 2030-01-01`` advised on prices years older than that date without
    a word, though ``forecast`` warns of the same date."""
    usage = _usage(100, 100, 100, 200)
    later = date(2030, 1, 1)
    a = advise_commitment(usage, rated, instance="p5.48xlarge", as_of=later, today=AS_OF)
    assert any("2030-01-01 is beyond the price data" in n for n in a.notes)
    now = advise_commitment(usage, rated, instance="p5.48xlarge", as_of=AS_OF, today=AS_OF)
    assert not any("beyond the price data" in n for n in now.notes)


def test_a_horizon_past_the_last_whole_term_buys_the_tail_on_demand(rated: Catalog) -> None:
    """Steady 100 GPU-h a month for 48 months on the 3yr plan (45% of on-demand): renewing pays
    72 months for 48, 0.45 × 72 / 48 = 0.675 of on-demand, 67.5 GPU-h's worth a month; one term
    and the last 12 months on demand cost 36/48 × 45 + 12/48 × 100 = 58.75: that is the advice
    (was 67.5, a plan nobody would buy), and a note says so."""
    usage = _usage(*([100.0] * 12))
    a = advise_commitment(usage, rated, instance="p5.48xlarge", as_of=AS_OF, horizon_months=48)
    three = next(t for t in a.terms if t.term == "3yr")
    assert three.commit_gpu_hours_per_month == pytest.approx(100)
    assert three.expected_usd_per_month == pytest.approx(58.75 * OD)
    assert any("12 month(s) past the last whole term on demand" in n for n in a.notes)


def test_the_rule_verdict_does_not_change_with_an_on_demand_tail(rated: Catalog) -> None:
    """The 3yr term over 36 months and over 48 (the last 12 on demand) commits the same and
    regrets the same in total: 36/48 of the monthly figure. The verdict was diluted by the
    12 uncommitted months and flipped; it is judged over the committed months."""
    usage = _usage(100, 80, 120, 60, 100, 90, 110, 70, 100, 95, 105, 85)
    by = {}
    for h in (36, 48):
        a = advise_commitment(usage, rated, instance="p5.48xlarge", as_of=AS_OF, horizon_months=h)
        by[h] = next(t for t in a.terms if t.term == "3yr").rule_checks
    for c36, c48 in zip(by[36], by[48], strict=True):
        assert c48.rule_regret_usd_per_month == pytest.approx(
            c36.rule_regret_usd_per_month * 36 / 48
        )
        assert c48.holds == c36.holds
