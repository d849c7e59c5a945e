"""Catalog loading (``trainbill.catalog.loading``): overlays, the price cache, launch dates.

Most tests feed one malformed file and check that it is refused with a message naming the file,
line/field and what is allowed -- never a traceback, never a silently wrong or ignored value.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from conftest import run_argv
from trainbill.catalog import load_catalog
from trainbill.errors import CatalogSchemaError
from trainbill.forecasting import forecast
from trainbill.prices._cache import read_cache
from trainbill.spec import plan_from_dict

PRICES_HEADER = "provider,region,item,option,unit,usd,effective_from,source\n"
INSTANCES_HEADER = (
    "provider,instance,accelerator,accelerator_count,vcpus,memory_gib,network_gbps,billing,"
    "source,as_of\n"
)
SPOT_HEADER = "provider,region,instance,interruption_bucket,savings_pct,observed,source\n"


def _overlay(tmp_path: Path, name: str, text: str | bytes) -> Path:
    d = tmp_path / "overlay"
    d.mkdir(exist_ok=True)
    if isinstance(text, bytes):
        (d / name).write_bytes(text)
    else:
        (d / name).write_text(text, encoding="utf-8")
    return d


def _p5_row(
    usd: str, *, date: str = "2026-01-01", unit: str = "instance-hour", source: str = "mine"
) -> str:
    return f"aws,us-east-1,p5.48xlarge,on_demand,{unit},{usd},{date},{source}\n"


@pytest.mark.parametrize("usd", ["inf", "1e400", "nan", "-inf"])
def test_non_finite_price_is_refused(tmp_path: Path, usd: str) -> None:
    """An inf, 1e400 or NaN price is refused naming the file, line and column."""
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row(usd))
    with pytest.raises(
        CatalogSchemaError, match=r"prices\.csv, line 2, usd: .* not a finite number"
    ):
        load_catalog([d])


def test_duplicate_price_rows_are_refused_naming_both_lines(tmp_path: Path) -> None:
    """Two rows for one price point: which wins would be an accident of order, so both lines are
    named."""
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("40") + _p5_row("70"))
    with pytest.raises(
        CatalogSchemaError, match=r"prices\.csv, line 3: duplicate row .*also on line 2"
    ):
        load_catalog([d])


def test_duplicate_instance_rows_are_refused(tmp_path: Path) -> None:
    """Two rows for one instance type are refused, naming the instance."""
    row = "aws,p5.48xlarge,h100,{n},192,2048,3200,instance,mine,2026-01-01\n"
    d = _overlay(tmp_path, "instances.csv", INSTANCES_HEADER + row.format(n=8) + row.format(n=4))
    with pytest.raises(
        CatalogSchemaError, match=r"instances\.csv, line 3: duplicate row for instance p5\.48xlarge"
    ):
        load_catalog([d])


@pytest.mark.parametrize(
    ("count", "pattern"), [("8.7", "not a whole number"), ("inf", "not a finite number")]
)
def test_fractional_or_infinite_gpu_count_is_refused(
    tmp_path: Path, count: str, pattern: str
) -> None:
    """8.7 or inf GPUs per instance is refused naming accelerator_count."""
    row = f"aws,p5.48xlarge,h100,{count},192,2048,3200,instance,mine,2026-01-01\n"
    d = _overlay(tmp_path, "instances.csv", INSTANCES_HEADER + row)
    with pytest.raises(
        CatalogSchemaError, match=rf"instances\.csv, line 2, accelerator_count: .*{pattern}"
    ):
        load_catalog([d])


def test_far_future_price_date_is_refused(tmp_path: Path) -> None:
    # 2206 for 2026: the point would never be "in force" and the overlay would be silently unused.
    """A price dated centuries ahead (a typo) is refused: it would never be in force."""
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("40", date="2206-01-01"))
    with pytest.raises(
        CatalogSchemaError, match=r"line 2, effective_from: 2206-01-01 is in the future"
    ):
        load_catalog([d])


def test_near_future_price_date_is_kept_for_announced_rates(tmp_path: Path) -> None:
    """A price dated a month ahead (an announced rate) loads and applies from that day."""
    from datetime import UTC, date, datetime, timedelta

    soon = (datetime.now(UTC).date() + timedelta(days=30)).isoformat()
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("40", date=soon))
    cat = load_catalog([d])
    assert (
        cat.price(
            "p5.48xlarge",
            "on_demand",
            provider="aws",
            region="us-east-1",
            as_of=date.fromisoformat(soon),
        ).usd
        == 40.0
    )


@pytest.mark.parametrize("unit", ["EUR-hour", "instance-month", "GB-month"])
def test_wrong_unit_for_an_instance_is_refused(tmp_path: Path, unit: str) -> None:
    """An instance priced per EUR-hour, month or GB is refused: the drivers multiply
    instance-hours."""
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("40", unit=unit))
    with pytest.raises(CatalogSchemaError, match=r"line 2, unit: .*allowed: instance-hour"):
        load_catalog([d])


def test_wrong_unit_for_a_service_is_refused(tmp_path: Path) -> None:
    """A service priced in another unit than the packaged one (NAT hours per GB) is refused."""
    row = "aws,us-east-1,nat.hours,on_demand,GB,0.05,2026-01-01,mine\n"
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + row)
    with pytest.raises(
        CatalogSchemaError, match=r"line 2, unit: 'GB' .*service 'nat.hours'; allowed: hour"
    ):
        load_catalog([d])


def test_blank_item_is_refused(tmp_path: Path) -> None:
    """A price row without an item names the empty column."""
    d = _overlay(
        tmp_path,
        "prices.csv",
        PRICES_HEADER + "aws,us-east-1,,on_demand,instance-hour,5,2026-01-01,mine\n",
    )
    with pytest.raises(CatalogSchemaError, match=r"line 2, item: value is required"):
        load_catalog([d])


def test_utf8_bom_header_is_accepted(tmp_path: Path) -> None:
    """A spreadsheet's UTF-8 BOM before the header does not hide the first column."""
    from datetime import date

    d = _overlay(tmp_path, "prices.csv", ("\ufeff" + PRICES_HEADER + _p5_row("40")).encode("utf-8"))
    cat = load_catalog([d])
    assert (
        cat.price(
            "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=date(2026, 2, 1)
        ).usd
        == 40.0
    )


def test_latin1_file_is_a_clear_error(tmp_path: Path) -> None:
    """A Latin-1 file is one error saying it is not UTF-8, not a decode traceback."""
    d = _overlay(
        tmp_path, "prices.csv", (PRICES_HEADER + _p5_row("40", source="café")).encode("latin-1")
    )
    with pytest.raises(CatalogSchemaError, match=r"prices\.csv: not UTF-8 text"):
        load_catalog([d])


def test_empty_file_says_so(tmp_path: Path) -> None:
    """An empty table says so and shows the header it expects."""
    d = _overlay(tmp_path, "prices.csv", "")
    with pytest.raises(
        CatalogSchemaError, match=r"prices\.csv: empty file; expected a header line provider,region"
    ):
        load_catalog([d])


def test_missing_column_is_named(tmp_path: Path) -> None:
    """A header without a column names the missing column."""
    header = "provider,region,item,option,usd,effective_from,source\n"
    d = _overlay(
        tmp_path, "prices.csv", header + "aws,us-east-1,p5.48xlarge,on_demand,5,2026-01-01,mine\n"
    )
    with pytest.raises(CatalogSchemaError, match=r"missing column\(s\) unit"):
        load_catalog([d])


def test_directory_named_like_a_table_is_a_clear_error(tmp_path: Path) -> None:
    """A directory named prices.csv is one error, not an IsADirectoryError."""
    d = tmp_path / "overlay"
    (d / "prices.csv").mkdir(parents=True)
    with pytest.raises(CatalogSchemaError, match=r"prices\.csv: cannot read catalog file"):
        load_catalog([d])


def test_assumptions_toml_in_overlay_is_not_silently_ignored(tmp_path: Path) -> None:
    """assumptions.toml in an overlay is refused (assumptions cannot be overlaid), not ignored."""
    d = _overlay(tmp_path, "assumptions.toml", "[reliability]\nstraggler_cv = 0.5\n")
    with pytest.raises(CatalogSchemaError, match=r"unknown catalog file\(s\) assumptions\.toml"):
        load_catalog([d])


def test_unknown_spot_bucket_is_refused_not_a_keyerror(tmp_path: Path) -> None:
    """An interruption bucket the reliability model has no rate for is refused, listing the known
    ones."""
    d = _overlay(
        tmp_path,
        "spot_advisor.csv",
        SPOT_HEADER + "aws,us-east-1,p5.48xlarge,bogus,70,2026-01-01,mine\n",
    )
    with pytest.raises(
        CatalogSchemaError, match=r"line 2, interruption_bucket: 'bogus' not one of .*<5%"
    ):
        load_catalog([d])


def test_savings_over_100_percent_is_refused(tmp_path: Path) -> None:
    """Spot savings above 100% are refused naming savings_pct."""
    d = _overlay(
        tmp_path,
        "spot_advisor.csv",
        SPOT_HEADER + "aws,us-east-1,p5.48xlarge,<5%,170,2026-01-01,mine\n",
    )
    with pytest.raises(
        CatalogSchemaError, match=r"savings_pct: 170 is above the allowed maximum 100"
    ):
        load_catalog([d])


def test_cli_prints_one_line_error_for_bad_overlay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bad --catalog overlay reaches the CLI as one 'trainbill: error:' line, exit 1."""

    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAINBILL_CATALOG", raising=False)
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("inf"))
    code, _out, err = run_argv(
        ["prices", "show", "p5.48xlarge", "--catalog", str(d), "--json"], capsys
    )
    assert code == 1
    assert err.startswith("trainbill: error: ")
    assert "prices.csv, line 2, usd" in err
    assert "Traceback" not in err


def test_cache_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    """The price cache is read by the same rules: a Latin-1 cache file says it is not UTF-8."""
    (tmp_path / "prices.csv").write_bytes(
        (PRICES_HEADER + _p5_row("40", source="café")).encode("latin-1")
    )
    with pytest.raises(CatalogSchemaError, match=r"prices\.csv: not UTF-8 text"):
        read_cache(tmp_path)


# --- importers ----------------------------------------------------------------------------


_HEADER = (
    "id,name,vendor,peak_bf16_tflops,peak_fp8_tflops,hbm_gb,hbm_tbps,intra_node_gbytes_per_s,tdp_w,"
    "launched,source,as_of\n"
)


_LEGACY_HEADER = _HEADER.replace("launched,", "")


def _accelerators_overlay(tmp_path: Path, header: str, row: str) -> Path:
    (tmp_path / "accelerators.csv").write_text(header + row + "\n", encoding="utf-8")
    return tmp_path


_ROW = "h100,NVIDIA H100,nvidia,989,1979,80,3.35,900,700,{launched}my datasheet,2024-01-01"


def test_launch_date_years_ahead_is_a_typo(tmp_path: Path) -> None:
    """2099-01-01 for 2019: every run on the chip would silently be brand-new (× 0.63); like a
    price point, a date more than 366 days ahead is refused, naming file, line and column."""
    _accelerators_overlay(tmp_path, _HEADER, _ROW.format(launched="2099-01-01,"))
    with pytest.raises(
        CatalogSchemaError,
        match=r"accelerators\.csv, line 2, launched: 2099-01-01 is in the future",
    ):
        load_catalog([tmp_path])


def test_launch_date_a_month_ahead_is_an_announced_chip(tmp_path: Path) -> None:
    """A launch date a month ahead (an announced chip) loads as given."""
    soon = datetime.now(UTC).date() + timedelta(days=30)
    _accelerators_overlay(tmp_path, _HEADER, _ROW.format(launched=f"{soon.isoformat()},"))
    assert load_catalog([tmp_path]).accelerator("h100").launched == soon


def test_repeated_launched_column_is_named(tmp_path: Path) -> None:
    """Two ``launched`` columns were reported as "columns out of order"."""
    _accelerators_overlay(tmp_path, _HEADER.replace("launched,", "launched,launched,"),
             _ROW.format(launched="2022-09-20,2022-09-20,"))  # fmt: skip
    with pytest.raises(CatalogSchemaError, match=r"repeated column\(s\) launched;"):
        load_catalog([tmp_path])


def test_legacy_header_with_a_launch_value_counts_its_own_columns(tmp_path: Path) -> None:
    """The old 11-column header with a 12-field row was said to expect 12 fields (the new
    header); the file's header has 11, and the fix is to add ``launched`` to it."""
    _accelerators_overlay(tmp_path, _LEGACY_HEADER, _ROW.format(launched="2022-09-20,"))
    with pytest.raises(
        CatalogSchemaError, match=r"line 2: wrong number of fields \(expected 11: .*add the column"
    ):
        load_catalog([tmp_path])


def test_overlay_written_before_the_launch_column_still_loads(tmp_path: Path) -> None:
    """An accelerators.csv overlay with the schema-v1 header (no ``launched``) is read; its chips
    have no launch date, so the time model takes their software as mature and says so."""
    (tmp_path / "accelerators.csv").write_text(
        _LEGACY_HEADER
        + "h100,NVIDIA H100 (negotiated),nvidia,989,1979,80,3.35,900,700,my datasheet,2024-01-01\n",
        encoding="utf-8",
    )
    cat = load_catalog([tmp_path])
    assert cat.accelerator("h100").launched is None
    plan = plan_from_dict(
        {
            "model": {"params": 7e9, "tokens": 1e11},
            "cluster": {"instance": "p5.48xlarge", "nodes": 1},
        }
    )
    fc = forecast(plan, cat, today=date(2026, 12, 3))
    assert "launch date unknown" in dict(fc.usage.time.factors)["maturity"]


def test_bad_launch_date_names_file_line_and_column(tmp_path: Path) -> None:
    """'Sept 2022' as a launch date is refused naming file, line and column."""
    header = _LEGACY_HEADER.replace("tdp_w,", "tdp_w,launched,")
    (tmp_path / "accelerators.csv").write_text(
        header
        + "h100,NVIDIA H100,nvidia,989,1979,80,3.35,900,700,Sept 2022,my datasheet,2024-01-01\n",
        encoding="utf-8",
    )
    with pytest.raises(
        CatalogSchemaError, match=r"accelerators\.csv, line 2, launched: 'Sept 2022' is not a date"
    ):
        load_catalog([tmp_path])


# --- the assumptions cache (catalog.loading._packaged_assumptions) ---------------------------


def _cache_files() -> list[Path]:
    import os

    root = Path(os.environ["TRAINBILL_CACHE_DIR"]) / "catalog"
    return sorted(root.glob("assumptions-*.json")) if root.exists() else []


def test_cached_assumptions_are_the_parsed_ones() -> None:
    """The first read parses the TOML and stores JSON; the second reads the JSON and builds the
    same assumptions (values, units, sources, dates: equal records, in the same order)."""
    from trainbill.catalog import loading

    data = loading.packaged_data_dir()
    assert _cache_files() == []  # each test starts with an empty cache (conftest)
    parsed = loading._packaged_assumptions(data)
    (stored,) = _cache_files()
    cached = loading._packaged_assumptions(data)
    assert cached == parsed
    assert list(cached) == list(parsed)
    assert _cache_files() == [stored]


def test_a_damaged_cache_is_parsed_again_and_replaced() -> None:
    from trainbill.catalog import loading

    data = loading.packaged_data_dir()
    parsed = loading._packaged_assumptions(data)
    (stored,) = _cache_files()
    stored.write_text('{"time.fit.e_max": [0.9', encoding="utf-8")  # cut short
    assert loading._packaged_assumptions(data) == parsed
    assert loading._packaged_assumptions(data) == parsed  # the rewritten file reads back


def test_an_unwritable_cache_is_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache root that is a file (or read-only): the assumptions are parsed every time."""
    from trainbill.catalog import loading

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(blocker))
    data = loading.packaged_data_dir()
    assert loading._packaged_assumptions(data)["time.fit.e_max"].value > 0


def test_the_cache_key_follows_every_byte_of_the_files() -> None:
    from trainbill.catalog import loading

    base = loading._assumptions_cache("a = 1\n", "b = 2\n")
    assert loading._assumptions_cache("a = 1\n", "b = 2\n") == base
    assert loading._assumptions_cache("a = 1 \n", "b = 2\n") != base
    assert loading._assumptions_cache("a = 1\n", None) != base
