"""Plan diff: two forecasts side by side, totals to the cent, why lines moved, CI exit status."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, SEED, run_cli
from trainbill.catalog import Catalog
from trainbill.diff import diff_forecasts
from trainbill.forecasting import forecast
from trainbill.spec import load_plan, plan_from_dict

PLAN = """[run]
hours = 10
[model]
params = 7e9
[cluster]
instance = "p5.48xlarge"
nodes = 2
[prices]
as_of = 2025-05-01
"""


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    f = tmp_path / "base.toml"
    f.write_text(PLAN)
    return f


def test_doubling_nodes_doubles_the_compute_line(catalog: Catalog) -> None:
    """2 → 4 p5.48xlarge for 10 h at $98.32: 20 → 40 instance-hours, $1,966.40 → $3,932.80,
    +100%."""
    base = plan_from_dict(
        {
            "run": {"hours": 10},
            "model": {"params": 7e9},
            "cluster": {"instance": "p5.48xlarge", "nodes": 2},
            "prices": {"as_of": "2025-05-01"},
        }
    )
    new = base.model_copy(update={"cluster": base.cluster.model_copy(update={"nodes": 4})})
    d = diff_forecasts(
        forecast(base, catalog), forecast(new, catalog), base, new, base_name="a", new_name="b"
    )
    od = next(ld for ld in d.lines if ld.item == "p5.48xlarge on-demand")
    assert od.base_usd == pytest.approx(2 * 10 * 98.32)
    assert od.new_usd == pytest.approx(4 * 10 * 98.32)
    assert od.delta_usd == pytest.approx(1966.40)
    assert od.percent == pytest.approx(100.0)
    assert od.moved == "quantity 20 → 40 instance-hour"
    assert "cluster.nodes" in od.inputs
    assert [i.key for i in d.inputs] == [
        "cluster.nodes",
        "resolved.gpus",
    ]  # 16 → 32 GPUs, not an echo
    quote = next(h for h in d.headlines if h.name == "quote (on-demand list)")
    assert quote.delta == pytest.approx((4 - 2) * 98.32 * 10)  # quote = nodes × $98.32 × 10 h
    assert d.notes == ()


def test_markdown_totals_equal_each_forecast_to_the_cent(
    catalog: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    """The must-show comment: its real-bill row holds both forecasts' totals, rounded to cents."""
    seed, hyper = SEED, EXAMPLES / "hyperpod-finetune.toml"
    code, out, _ = run_cli(capsys, "diff", str(seed), str(hyper), "--markdown")
    assert code == 0
    t_seed = forecast(load_plan(seed), catalog).total_usd
    t_hyper = forecast(load_plan(hyper), catalog).total_usd
    row = next(line for line in out.splitlines() if line.startswith("| **real bill**"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == f"${t_seed:,.2f}"
    assert cells[2] == f"${t_hyper:,.2f}"
    assert out.index("real bill") < out.index("<details>")  # totals first, details collapsed
    assert (
        "different price dates" in out.split("|", 1)[0]
    )  # the header says so (2025-05-01 vs today)


def test_set_flag_is_a_what_if_on_the_same_plan(
    plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`diff PLAN --set cluster.nodes=4`: compute on-demand $1,966.40 → $3,932.80 in the JSON."""
    code, out, _ = run_cli(capsys, "diff", str(plan_file), "--set", "cluster.nodes=4", "--json")
    assert code == 0
    d = json.loads(out)
    od = next(ln for ln in d["lines"] if ln["item"] == "p5.48xlarge on-demand")
    assert od["base"]["cost_usd"] == pytest.approx(1966.40)
    assert od["new"]["cost_usd"] == pytest.approx(3932.80)
    assert d["new"]["name"].endswith("--set cluster.nodes=4")
    assert {"input": "cluster.nodes", "base": 2, "new": 4} in d["inputs"]


def test_price_date_difference_is_in_the_header(
    plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """p5.48xlarge $98.32 (2025-05-01) → $55.04 (2026-01-01, after the June 2025 cut): the unit
    price moved, and the header names both dates."""
    code, out, _ = run_cli(capsys, "diff", str(plan_file), "--set", "prices.as_of=2026-01-01")
    assert code == 0
    flat = " ".join(out.split())
    assert "prices as of 2025-05-01 (base) and 2026-01-01 (new)" in flat
    assert "NOTE: different price dates" in flat
    code, out, _ = run_cli(
        capsys, "diff", str(plan_file), "--set", "prices.as_of=2026-01-01", "--json"
    )
    od = next(ln for ln in json.loads(out)["lines"] if ln["item"] == "p5.48xlarge on-demand")
    assert od["moved"] == "unit price $98.32 → $55.04"


@pytest.mark.parametrize(
    ("flag", "value", "code"),
    [
        ("--fail-above-usd", "1000", 3),  # the bill grows by ≥ $1,966.40 (compute alone)
        ("--fail-above-usd", "1e9", 0),
        ("--fail-above-percent", "50", 3),  # compute doubles: the total grows by far more than 50%
        ("--fail-above-percent", "1000", 0),
    ],
)
def test_fail_above_gates_ci(
    plan_file: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, code: int
) -> None:
    """Exit 3 when the real bill grows by more than the threshold, 0 otherwise."""
    got, _, err = run_cli(
        capsys, "diff", str(plan_file), "--set", "cluster.nodes=4", "--markdown", flag, value
    )
    assert got == code
    assert (flag in err) == (code == 3)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--set", "nodes=4"], "--set: 'nodes=4' is not section.key=value"),
        (["--set", "cluster.nodez=4"], "nodez"),
        ([], "give a NEW plan file or --set"),
    ],
)
def test_bad_diff_input_is_one_line(
    plan_file: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    """A malformed --set or a missing NEW side: exit 1 and one line naming it."""
    code, _, err = run_cli(capsys, "diff", str(plan_file), *args)
    assert code == 1
    assert needle in err
    assert err.count("\n") == 1


def test_narrow_table_keeps_money_whole(
    plan_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns every dollar figure of the line table is whole ($3,932.80, not $3,93…)."""
    import trainbill.cli._common as common

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delitem(common.__dict__, "console", raising=False)
    code, out, _ = run_cli(capsys, "diff", str(plan_file), "--set", "cluster.nodes=4")
    monkeypatch.delitem(common.__dict__, "console", raising=False)
    assert code == 0
    assert "…" not in out
    assert "$3,932.80" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert re.search(r"80 columns: left out .* --wide shows every column", " ".join(out.split()))
