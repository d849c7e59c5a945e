"""The HTML report: chart arithmetic, formatting, self-containment, the report command."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, SEED, TODAY, run_cli, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import InfeasibleError
from trainbill.report import build_report, render_html
from trainbill.report.charts import nice_ticks, waterfall_steps, waterfall_svg
from trainbill.report.format import money, money_precise
from trainbill.spec import load_plan, plan_from_dict

HAS_SIMULATE = importlib.util.find_spec("trainbill.simulate") is not None

#: Anything that would make a browser fetch: src/href/action with a scheme or protocol-relative
#: URL, CSS url()/@import of one, and SVG/XML namespace URLs (harmless, but "no URL at all").
_EXTERNAL = re.compile(
    r"""(?:src|href|action|xlink:href|poster|data)\s*=\s*["']?\s*(?:https?:|//)"""
    r"""|url\(\s*["']?\s*(?:https?:|//)|@import|<link\b|<script[^>]+src""",
    re.IGNORECASE,
)


def test_money_formats_for_people() -> None:
    """Whole dollars with separators; negatives keep the sign before the dollar."""
    assert money(226_529.28) == "$226,529"
    assert money(-1_234.4) == "-$1,234"
    assert money(0.4) == "$0"
    assert money_precise(98.32) == "$98.32"
    assert money_precise(0.0125) == "$0.0125"


def test_waterfall_steps_land_on_the_total() -> None:
    """quote 100; compute 80 (−20 vs quote); storage +30; discount −5 → 100−20+30−5 = 105."""
    steps = waterfall_steps(
        100.0, {"compute": 80.0, "sync_stall": 0.0, "storage": 30.0, "discount": -5.0}
    )
    assert [s.label for s in steps] == [
        "quote",
        "compute vs quote",
        "storage",
        "discount",
        "real bill",
    ]
    assert [(s.start, s.end) for s in steps] == [
        (0, 100),
        (100, 80),
        (80, 110),
        (110, 105),
        (0, 105),
    ]
    assert steps[1].delta == -20


def test_waterfall_svg_escapes_labels() -> None:
    """Text in the chart is escaped: a hostile label cannot become markup."""
    svg = waterfall_svg(waterfall_steps(10.0, {"compute": 10.0}), title="<script>x</script>")
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg


def test_nice_ticks_cover_the_range() -> None:
    """0..226,529 in about five steps: step 50,000 (raw 45,306 → next nice 5×10^4), ticks
    0..250,000."""
    assert nice_ticks(0, 226_529) == (0, 50_000, 100_000, 150_000, 200_000, 250_000)


def test_report_html_is_self_contained(catalog: Catalog) -> None:
    """No scripts, no external resource of any kind; print stylesheet; the quote as $226,529."""
    html = render_html(build_report(load_plan(SEED), catalog, today=TODAY, simulate=False))
    assert _EXTERNAL.search(html) is None, _EXTERNAL.search(html)
    assert "http://www.w3.org" not in html
    assert "<script" not in html.lower()
    assert "@media print" in html
    assert "$226,529" in html  # 32 × $98.32 × 72 h = $226,529.28
    assert 'prices as of <span class="date">2025-05-01</span>' in html  # never split
    assert "Monte Carlo simulation was not requested" in html
    # every ledger line's source is printed (escaped) next to it
    assert "price point effective" in html


def test_external_url_check_catches_a_cdn() -> None:
    """The self-containment check is not vacuous: it flags a CDN script and a CSS import."""
    assert _EXTERNAL.search('<script src="https://cdn.example/x.js"></script>')
    assert _EXTERNAL.search("<style>@import url(//fonts.example/f.css)</style>")
    assert _EXTERNAL.search('<img src="http://x/y.png">')


@pytest.mark.skipif(not HAS_SIMULATE, reason="trainbill.simulate is not in this build")
def test_report_includes_the_simulation(catalog: Catalog) -> None:
    """With the simulation available the report shows P50/P90 and the deadline odds."""
    plan = load_plan(EXAMPLES / "pretrain-512-h100.toml")
    plan = plan.model_copy(update={"run": plan.run.model_copy(update={"deadline_hours": 1000.0})})
    data = build_report(plan, catalog, today=TODAY, trials=500)
    assert data.simulation is not None
    assert data.simulation.p50_usd <= data.simulation.p90_usd
    html = render_html(data)
    assert "P90 bill" in html
    assert "Chance of missing the deadline" in html  # run.deadline_hours = 1000 set above
    assert _EXTERNAL.search(html) is None


def test_report_command_refuses_to_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """First write succeeds; a second without --force exits 1 and leaves the file; --force replaces
    it."""
    out = tmp_path / "report.html"
    code, _stdout, _err = run_cli(capsys, "report", str(SEED), "-o", str(out), "--trials", "0")
    assert code == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    out.write_text("mine", encoding="utf-8")
    code, _stdout, err = run_cli(capsys, "report", str(SEED), "-o", str(out), "--trials", "0")
    assert code == 1
    assert "already exists; pass --force" in err
    assert out.read_text(encoding="utf-8") == "mine"
    code, _stdout, _err = run_cli(
        capsys, "report", str(SEED), "-o", str(out), "--trials", "0", "--force"
    )
    assert code == 0
    assert "$226,529" in out.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temp file left behind


def test_report_command_caps_trials(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--trials above the cap is a one-line error naming the flag, and writes nothing."""
    out = tmp_path / "r.html"
    code, _stdout, err = run_cli(
        capsys, "report", str(SEED), "-o", str(out), "--trials", "100000000"
    )
    assert code == 1
    assert "--trials" in err
    assert not out.exists()


def test_report_right_sizing_comes_from_the_planner(catalog: Catalog) -> None:
    """Zero hidden costs, 10 h on 4 nodes: at n nodes the run takes 40/n h and costs n × $98.32 ×
    40/n = $3,932.80.

    Node counts are round(4 × SIZING_FACTORS) = 1, 2, 3, 4, 5, 6, 8, 12, 16; with constant cost
    every step up saves time for $0, so every row pays and scaling is perfect (efficiency 100%).
    """
    plan = plan_from_dict(zero_hidden_plan(), source="test")
    data = build_report(plan, catalog, today=TODAY, simulate=False)
    assert data.planner is not None
    rows = data.planner.rightsizing
    assert [r.nodes for r in rows] == [1, 2, 3, 4, 5, 6, 8, 12, 16]
    for r in rows:
        assert r.total_usd == pytest.approx(4 * 98.32 * 10)
        assert r.wall_hours == pytest.approx(40 / r.nodes)
        assert r.efficiency == pytest.approx(1.0)
        assert r.pays
    assert "p5.48xlarge" in data.planner.rightsizing_mix
    assert data.sizing == ()  # the sweep is only the fallback
    html = render_html(data)
    assert "More nodes pay?" in html
    assert "$3,933" in html  # $3,932.80 rounded to whole dollars


def test_report_pareto_front_is_the_planners(catalog: Catalog) -> None:
    """The front is non-dominated, holds the plan's own cost at its size, and the deadline pick is
    its cheapest in time."""
    plan = load_plan(SEED)
    plan = plan.model_copy(update={"run": plan.run.model_copy(update={"deadline_hours": 100.0})})
    data = build_report(plan, catalog, today=TODAY, simulate=False)
    pl = data.planner
    assert pl is not None
    front = pl.pareto
    assert len(front) >= 2
    for p in front:  # no point is both cheaper and faster than another
        assert not any(q.total_usd < p.total_usd and q.wall_hours < p.wall_hours for q in front)
    assert pl.user.total_usd == pytest.approx(data.forecast.total_usd, rel=1e-9)
    own = next(r for r in pl.rightsizing if r.nodes == 32)
    assert own.total_usd == pytest.approx(data.forecast.total_usd, rel=1e-9)
    best = pl.best_in_deadline
    assert best is not None
    assert best.wall_hours <= 100.0
    assert best.total_usd == min(c.total_usd for c in front if c.wall_hours <= 100.0)
    html = render_html(data)
    assert "Cheapest within the 100 h deadline" in html
    assert "Pareto front" in html
    assert _EXTERNAL.search(html) is None


def test_report_falls_back_to_the_sweep(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the planner refuses the plan the report keeps the node-count sweep and says why."""
    import trainbill.analysis as build

    def refuse(*_: object, **__: object) -> None:
        msg = "no candidate cluster holds the model"
        raise InfeasibleError(msg, binding="memory")

    monkeypatch.setattr(build, "planner_summary", refuse)
    data = build_report(load_plan(SEED), catalog, today=TODAY, simulate=False)
    assert data.planner is None
    assert [p.nodes for p in data.sizing if p.current] == [32]
    assert "no candidate cluster holds the model" in data.planner_note
    html = render_html(data)
    assert "node-count sweep" in html
    off = build_report(load_plan(SEED), catalog, today=TODAY, simulate=False, search=False)
    assert off.planner is None
    assert "not requested" in off.planner_note
