"""Only what can be bought is ranked: a catalog stand-in (source beginning ``STAND-IN``) is marked
and left out of ``prices list --sort`` rankings unless ``--allow-stand-ins`` (issue #38 item 4)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date

import pytest

from conftest import run_cli
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.prices import price_table
from trainbill.prices.compare import gpu_price_rows, ranked, sort_rows

DAY = date(2026, 12, 1)


def _rows(catalog: Catalog):  # type: ignore[no-untyped-def]
    """A tiny catalog: p5 at $80/h (8 GPUs: $10/GPU-h) and the H800 stand-in at $16/h
    (8 GPUs: $2/GPU-h), cheaper, but a figure no cloud sells at."""
    real = price("p5.48xlarge", "on_demand", "instance-hour", 80.0)
    stand = replace(
        price("h800-8x-gpu-hour", "on_demand", "instance-hour", 16.0), source="STAND-IN test"
    )
    tiny = tiny_catalog(catalog, real, stand)
    return gpu_price_rows(tiny, price_table(tiny, as_of=DAY), as_of=DAY)


def test_a_cheaper_stand_in_is_not_ranked_first(catalog: Catalog) -> None:
    rows = sort_rows(_rows(catalog), "on-demand")
    assert [r.instance for r in rows] == ["p5.48xlarge", "h800-8x-gpu-hour"]
    assert rows[0].on_demand == pytest.approx(80.0 / 8)
    assert rows[1].stand_in
    assert not ranked(rows[1], "on-demand")
    assert ranked(rows[0], "on-demand")


def test_allow_stand_ins_ranks_it_by_its_figure(catalog: Catalog) -> None:
    rows = sort_rows(_rows(catalog), "on-demand", allow_stand_ins=True)
    # $16 / 8 = $2 per GPU-hour < $80 / 8 = $10
    assert [r.instance for r in rows] == ["h800-8x-gpu-hour", "p5.48xlarge"]
    assert ranked(rows[0], "on-demand", allow_stand_ins=True)


def test_cli_json_ranks_no_stand_in_unless_allowed(capsys: pytest.CaptureFixture[str]) -> None:
    """The packaged catalog's stand-ins (h800-8x-gpu-hour, trn2.48xlarge) carry stand_in = true
    and rank null, after every ranked entry; with --allow-stand-ins they are ranked."""
    code, out, err = run_cli(capsys, "prices", "list", "--sort", "on-demand", "--json")
    assert code == 0, err
    entries = json.loads(out)
    stand = [e for e in entries if e["stand_in"]]
    assert {e["instance"] for e in stand} >= {"h800-8x-gpu-hour", "trn2.48xlarge"}
    assert all(e["rank"] is None for e in stand)
    ranks = [e["rank"] for e in entries if e["rank"] is not None]
    assert ranks == list(range(1, len(ranks) + 1))  # ranked entries first, in order
    per_gpu = [e["per_gpu"]["on_demand_usd_per_gpu_hour"] for e in entries if e["rank"]]
    assert per_gpu == sorted(per_gpu)
    code, out, err = run_cli(
        capsys, "prices", "list", "--sort", "on-demand", "--json", "--allow-stand-ins"
    )
    assert code == 0, err
    allowed = {e["instance"]: e["rank"] for e in json.loads(out) if e["stand_in"]}
    assert allowed["h800-8x-gpu-hour"] is not None


def test_table_marks_the_stand_in(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys, "prices", "list", "--gpu", "h800", "--sort", "on-demand", "--wide"
    )
    assert code == 0, err
    assert "h800-8x-gpu-hour (STAND-IN)" in out
    assert "not ranked (--allow-stand-ins ranks it)" in " ".join(out.split())
