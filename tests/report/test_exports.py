"""Ledger exports: CSV and XLSX with cents, no float noise, numbers as numbers; the CLI writes them
safely."""

from __future__ import annotations

import csv
import io
import re
import sys
import zipfile
from decimal import Decimal
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from conftest import SEED, TODAY, run_cli
from trainbill.catalog import Catalog
from trainbill.errors import TrainbillError
from trainbill.forecasting import Forecast, forecast
from trainbill.report.exports import COLUMNS, _apportioned, ledger_csv, ledger_xlsx
from trainbill.spec import load_plan

NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
#: A plain decimal: what a number cell of the CSV may hold (no exponent, no noise past 6 places).
DECIMAL = re.compile(r"^-?\d+(\.\d{1,6})?$")


@pytest.fixture(scope="module")
def seed(catalog: Catalog) -> Forecast:
    return forecast(load_plan(SEED), catalog, today=TODAY)


def _csv_rows(fc: Forecast) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(ledger_csv(fc).decode("utf-8-sig"))))


def test_csv_has_every_line_with_cents_and_no_float_noise(seed: Forecast) -> None:
    """p5.48xlarge on-demand: 32 nodes × 50% × 72 h = 1,152 instance-hours × $98.32 = 113264.64
    (the float product is 113264.63999999998); every number is a plain decimal, money to the
    cent."""
    rows = _csv_rows(seed)
    assert tuple(rows[0]) == COLUMNS
    assert len(rows) == len(seed.ledger.lines)
    od = next(r for r in rows if r["item"] == "p5.48xlarge on-demand")
    assert (od["quantity"], od["unit_price_usd"], od["cost_usd"]) == ("1152", "98.32", "113264.64")
    # 113,264.64 / real bill; the share column is a percentage to two places
    assert float(od["share_pct"]) == pytest.approx(100 * 113_264.64 / seed.total_usd, abs=0.005)
    for r in rows:
        for col in ("quantity", "unit_price_usd", "cost_usd", "share_pct"):
            assert DECIMAL.match(r[col]), (col, r[col])
        assert re.match(r"^-?\d+\.\d\d$", r["cost_usd"]), r["cost_usd"]
        assert "REFERENCE" not in r["source"]
        assert "../shared" not in r["source"]
        assert r["category_name"][0].isupper()
        assert "_" not in r["category_name"]
    assert sum(float(r["cost_usd"]) for r in rows) == pytest.approx(
        seed.total_usd, abs=0.01 * len(rows)
    )


def test_csv_starts_with_a_bom_so_excel_reads_utf8(seed: Forecast) -> None:
    """Excel takes a BOM-less CSV for the local code page and garbles the × in every basis."""
    data = ledger_csv(seed)
    assert data.startswith(b"\xef\xbb\xbfcategory,")
    assert "×".encode() in data


def _sheet(xlsx: bytes, name: str) -> ET.Element:
    with zipfile.ZipFile(io.BytesIO(xlsx)) as z:
        book = ET.fromstring(z.read("xl/workbook.xml"))
        names = [s.get("name") for s in book.iterfind("m:sheets/m:sheet", NS)]
        return ET.fromstring(z.read(f"xl/worksheets/sheet{names.index(name) + 1}.xml"))


def _cell(sheet: ET.Element, ref: str) -> ET.Element:
    found = sheet.find(f".//m:c[@r='{ref}']", NS)
    assert found is not None, ref
    return found


def test_xlsx_stores_money_as_numbers_to_the_cent(seed: Forecast) -> None:
    """The Ledger sheet's row 2 is the on-demand line: quantity 1152 and cost 113264.64 as number
    cells (no t="s"); the total row sums column G with a formula whose cached value is the
    sum of the cent-rounded lines."""
    xlsx = ledger_xlsx(seed)
    with zipfile.ZipFile(io.BytesIO(xlsx)) as z:
        book = ET.fromstring(z.read("xl/workbook.xml"))
    assert [s.get("name") for s in book.iterfind("m:sheets/m:sheet", NS)] == [
        "Summary",
        "Ledger",
        "By month",
        "By day",
    ]
    ledger = _sheet(xlsx, "Ledger")
    # Compared as doubles: XlsxWriter spells 98.32 "98.31999999999999" (%.16g), the very same
    # double that typing 98.32 gives; the product 113264.63999999998 would differ.
    for ref, value in (("D2", 1152.0), ("F2", 98.32), ("G2", 113_264.64)):
        c = _cell(ledger, ref)
        assert c.get("t") is None  # a number, not a string
        assert float(c.findtext("m:v", namespaces=NS) or "nan") == value
    n = len(seed.ledger.lines)
    total = _cell(ledger, f"G{n + 2}")
    assert total.findtext("m:f", namespaces=NS) == f"SUM(G2:G{n + 1})"
    cached = float(total.findtext("m:v", namespaces=NS) or "nan")
    assert cached == pytest.approx(sum(round(ln.cost_usd, 2) for ln in seed.ledger.lines), abs=1e-6)
    month = _sheet(xlsx, "By month")
    assert _cell(month, "B2").get("t") is None
    assert float(_cell(month, "B2").findtext("m:v", namespaces=NS) or "nan") == pytest.approx(
        round(seed.total_usd, 2)
    )


def test_xlsx_without_xlsxwriter_is_one_clear_error(
    seed: Forecast, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No XlsxWriter installed: a TrainbillError naming the extra, not an ImportError traceback."""
    monkeypatch.setitem(sys.modules, "xlsxwriter", None)
    with pytest.raises(TrainbillError, match=r"trainbill\[report\]"):
        ledger_xlsx(seed)


def test_report_command_writes_the_ledger_files_and_never_clobbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--ledger-csv/--ledger-xlsx write beside the HTML; an existing file stops the command before
    anything is written; one path for two outputs is refused."""
    html, csv_path, xlsx = tmp_path / "r.html", tmp_path / "l.csv", tmp_path / "l.xlsx"
    args = ["report", str(SEED), "-o", str(html), "--trials", "0"]
    code, out, err = run_cli(
        capsys, *args, "--ledger-csv", str(csv_path), "--ledger-xlsx", str(xlsx)
    )
    assert code == 0, err
    assert csv_path.read_bytes().startswith(b"\xef\xbb\xbfcategory,")
    assert zipfile.is_zipfile(xlsx)
    assert f"wrote {csv_path}" in out
    html.unlink()
    csv_path.write_text("mine", encoding="utf-8")
    code, _, err = run_cli(capsys, *args, "--ledger-csv", str(csv_path))
    assert code == 1
    assert "--ledger-csv" in err
    assert "already exists" in err
    assert csv_path.read_text(encoding="utf-8") == "mine"
    assert not html.exists()  # checked before any work, so nothing was written
    code, _, err = run_cli(capsys, *args, "--ledger-csv", str(html))
    assert code == 1
    assert "give each output its own path" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.csv", "l.xlsx"]  # no temp file left


def test_text_that_looks_like_a_formula_is_written_as_text(seed: Forecast) -> None:
    """A line whose item or source starts with '=' (a catalog overlay's text) must not become a
    formula: the CSV cell gets the guard quote, the XLSX cell is a string, not an <f> formula."""
    from dataclasses import replace

    hostile = '=HYPERLINK("http://example.invalid","x")'
    first = replace(seed.ledger.lines[0], item=hostile, source=hostile)
    fc = replace(seed, ledger=replace(seed.ledger, lines=(first, *seed.ledger.lines[1:])))
    row = _csv_rows(fc)[0]
    assert row["item"] == "'" + hostile
    assert row["source"] == "'" + hostile
    assert not row["cost_usd"].startswith("'")  # numbers stay numbers
    pytest.importorskip("xlsxwriter")
    with zipfile.ZipFile(io.BytesIO(ledger_xlsx(fc))) as z:
        sheets = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/")]
    # The only formula in the workbook is the ledger's own =SUM total.
    formulas = [f for s in sheets for f in re.findall(r"<f>([^<]*)</f>", s)]
    assert all(f.startswith("SUM(") for f in formulas), formulas


def test_cents_are_apportioned_so_the_lines_add_up() -> None:
    """1.004 + 2.004 + 3.004 = 6.012, $6.01 to the cent; each line rounded alone gives 1.00 +
    2.00 + 3.00 = $6.00. Largest remainder: the 0.4-cent remainders tie, the first line takes
    the missing cent: 1.01 + 2.00 + 3.00 = 6.01."""
    assert _apportioned([1.004, 2.004, 3.004], 2) == [1.01, 2.0, 3.0]


def test_the_csv_cost_column_adds_up_to_the_total(catalog: Catalog) -> None:
    """Every example's cost column sums, in exact decimals, to its total rounded to the cent, and
    its share column to 100.00 (each rounded alone they were a cent off on all four)."""
    for plan in sorted((SEED.parent).glob("*.toml")):
        if plan.name == "article-claims.toml":
            continue
        fc = forecast(load_plan(plan), catalog, today=TODAY)
        rows = list(csv.DictReader(io.StringIO(ledger_csv(fc).decode("utf-8-sig"))))
        assert sum(Decimal(r["cost_usd"]) for r in rows) == Decimal(f"{fc.total_usd:.2f}"), plan
        assert sum(Decimal(r["share_pct"]) for r in rows) == Decimal("100.00"), plan


def test_xlsx_is_dated_by_the_forecast_not_the_clock(seed: Forecast) -> None:
    """Was the clock's time, so two exports of one forecast (or the report embedding the
    workbook) differed byte for byte. The workbook's creation date is the forecast's price
    date (the seed: 2025-05-01)."""
    with zipfile.ZipFile(io.BytesIO(ledger_xlsx(seed))) as z:
        core = z.read("docProps/core.xml").decode()
    assert '<dcterms:created xsi:type="dcterms:W3CDTF">2025-05-01T00:00:00Z' in core
