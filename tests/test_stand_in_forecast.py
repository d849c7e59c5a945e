"""A forecast priced at a catalog stand-in says so in the line and in a warning (#38 item 4)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import TODAY, run_cli, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog, Provenance
from trainbill.forecasting import CautionKind, forecast
from trainbill.spec import plan_from_dict


def test_stand_in_lines_and_warning(catalog: Catalog) -> None:
    """4 nodes × 10 h at a $10/h STAND-IN rate: the instance line is a stand-in line, and one
    warning carries its $400 = 4 × 10 × $10, the whole bill (every hidden cost is off)."""
    stand = replace(price("p5.48xlarge", "on_demand", "instance-hour", 10.0), source="STAND-IN t")
    tiny = tiny_catalog(catalog, stand)
    fc = forecast(plan_from_dict(zero_hidden_plan()), tiny, today=TODAY)
    (line,) = [ln for ln in fc.ledger.lines if ln.category == "compute"]
    assert line.provenance is Provenance.STAND_IN
    assert line.cost_usd == pytest.approx(4 * 10 * 10.0)
    (text,) = [c.text for c in fc.cautions if c.kind is CautionKind.STAND_IN]
    assert "$400 (100.0% of the bill)" in text
    assert "STAND-IN" in text


def test_published_prices_raise_no_stand_in_warning(catalog: Catalog) -> None:
    tiny = tiny_catalog(catalog, price("p5.48xlarge", "on_demand", "instance-hour", 10.0))
    fc = forecast(plan_from_dict(zero_hidden_plan()), tiny, today=TODAY)
    assert not [c for c in fc.cautions if c.kind is CautionKind.STAND_IN]


def test_forecast_table_marks_the_stand_in_line(capsys: pytest.CaptureFixture[str]) -> None:
    """The packaged H800 node is a stand-in (DeepSeek's assumed $2/GPU-hour)."""
    code, out, err = run_cli(
        capsys, "forecast", "--gpu", "h800", "--gpus", "64", "--params", "7e9", "--tokens",
        "1e11", "--wide",
    )  # fmt: skip
    assert code == 0, err
    row = next(x for x in out.splitlines() if "│" in x and "h800-8x-gpu-hour on-demand" in x)
    assert "(stand-in)" in row
    assert "is priced at a catalog STAND-IN" in " ".join((out + err).split())
