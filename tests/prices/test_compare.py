"""`prices list` as a hardware comparison: per-GPU rates, $/PFLOP-hour at peak, dates and ages."""

from __future__ import annotations

import json
from datetime import date

import pytest

from conftest import run_cli
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.prices import price_table
from trainbill.prices.compare import gpu_price_rows, sort_rows

DAY = date(2026, 12, 1)


def _row(catalog: Catalog, instance: str):  # type: ignore[no-untyped-def]
    quotes = price_table(catalog, as_of=DAY)
    return next(r for r in gpu_price_rows(catalog, quotes, as_of=DAY) if r.instance == instance)


def test_p5_per_gpu_figures(catalog: Catalog) -> None:
    """p5.48xlarge on 2026-12-01: $55.04 / 8 = $6.88 per H100-hour; ÷ 0.989 PFLOP/s (989 TFLOP/s
    dense BF16) = $6.9565 per PFLOP-hour at peak; spot: the regional $23.67 of 2026-09-20 ÷ 8 =
    $2.95875 (the per-AZ $20.99-$30.33 are of 2025-01-01, before it: superseded); on-demand
    point of 2025-06-01 is 365 + 183 = 548 days old."""
    r = _row(catalog, "p5.48xlarge")
    assert r.on_demand == pytest.approx(55.04 / 8)
    assert r.usd_per_pflop_hour == pytest.approx(55.04 / 8 / 0.989)
    assert (r.spot_low, r.spot_high) == (pytest.approx(23.67 / 8), pytest.approx(23.67 / 8))
    assert (r.hbm_gb, r.bf16_tflops, r.fp8_tflops) == (80, 989, 1979)
    assert r.price_date == date(2025, 6, 1)
    assert r.age_days == 548
    # The lowest published commitment: EC2 Instance SP 3-yr No Upfront $23.77728 ([CAT-2026-09],
    # prices-2026-12.md §1) ÷ 8 GPUs = $2.97216 (issue #38; none was packaged before).
    assert r.commitment == pytest.approx(23.77728 / 8)
    assert r.commitment_option == "3yr"


def test_published_commitment_only(catalog: Catalog) -> None:
    """p5en.48xlarge 3-yr All Upfront $23.80 (REFERENCE §4.1) ÷ 8 = $2.975 per H200-hour."""
    r = _row(catalog, "p5en.48xlarge")
    assert r.commitment == pytest.approx(23.80 / 8)
    assert r.commitment_option == "3yr"


def test_sort_by_pflop_puts_unpriced_last(catalog: Catalog) -> None:
    """--sort pflop ranks by $/PFLOP-hour ascending; rows with no on-demand price go last among
    the ranked (catalog stand-ins come after them, unranked: test_stand_ins)."""
    rows = sort_rows(gpu_price_rows(catalog, price_table(catalog, as_of=DAY), as_of=DAY), "pflop")
    rows = tuple(r for r in rows if not r.stand_in)
    priced = [r.usd_per_pflop_hour for r in rows if r.usd_per_pflop_hour is not None]
    assert priced == sorted(priced)
    assert rows[-1].usd_per_pflop_hour is None
    with pytest.raises(SpecError, match="allowed: gpu, on-demand"):
        sort_rows(rows, "cheapest")


def test_json_keeps_keys_and_adds_per_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    """The instance keys stay; `per_gpu` carries the comparison ($6.88 per H100-hour)."""
    code, out, _ = run_cli(
        capsys,
        "prices",
        "list",
        "--gpu",
        "h100",
        "--cloud",
        "aws",
        "--as-of",
        "2026-12-01",
        "--json",
    )
    assert code == 0
    (row,) = json.loads(out)
    assert row["on_demand_usd_per_hour"] == 55.04
    assert row["per_gpu"]["on_demand_usd_per_gpu_hour"] == pytest.approx(6.88)
    assert row["per_gpu"]["age_days"] == 548


@pytest.mark.parametrize("columns", [80, 100, 160])
def test_narrow_terminal_keeps_instance_names_and_prices(
    columns: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """COLUMNS=80/100/160: every H100 instance name and on-demand rate is printed whole, no line is
    wider than the terminal, and any left-out column is named."""
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run_cli(capsys, "prices", "list", "--gpu", "h100", "--as-of", "2026-12-01")
    assert code == 0
    assert "…" not in out
    for name in ("p5.48xlarge", "a3-highgpu-8g", "Standard_ND96isr_H100_v5"):
        assert name in out
    for rate in ("$6.88", "$11.0612", "$12.29"):  # 55.04/8, 88.49/8, 98.32/8
        assert rate in out
    assert max(len(line) for line in out.splitlines()) <= columns
    if columns < 160:
        assert f"{columns} columns: left out" in " ".join(out.split())


def test_wide_shows_every_column(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--wide at 80 columns still prints FP8 TF/s (1,979 for the H100) and leaves nothing out."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(
        capsys, "prices", "list", "--gpu", "h100", "--as-of", "2026-12-01", "--wide"
    )
    assert code == 0
    assert "1,979" in out
    assert "left out" not in out


def test_zone_spot_prices_in_force_make_the_range(catalog: Catalog) -> None:
    """On 2025-05-01 the regional p5 spot price ($25.66, 2025-01-01) and the per-AZ ones are of
    the same snapshot: the range is use1-az3's $20.9934 to use1-az1's $30.326, ÷ 8."""
    day = date(2025, 5, 1)
    quotes = price_table(catalog, as_of=day)
    r = next(r for r in gpu_price_rows(catalog, quotes, as_of=day) if r.instance == "p5.48xlarge")
    assert (r.spot_low, r.spot_high) == (pytest.approx(20.9934 / 8), pytest.approx(30.326 / 8))
