"""Issue #42: one plan has one P90. In ``forecast --json``, ``diff --json`` and ``optimize --json``
of the seed plan every number filed under a "P90" name is the budget (the P90 of simulated
runs); the time model's band and the planner's quick approximation go by other names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import SEED, run_cli


def _p90_numbers(doc: Any, path: str = "") -> list[tuple[str, float]]:
    """(path, value) of every number under a key, or a named row, that says P90."""
    out: list[tuple[str, float]] = []
    if isinstance(doc, dict):
        named = "p90" in str(doc.get("name", "")).lower()
        for k, v in doc.items():
            where = f"{path}.{k}"
            if isinstance(v, int | float) and not isinstance(v, bool):
                if "p90" in k.lower() or (named and k in ("base", "new")):
                    out.append((where, float(v)))
            else:
                out += _p90_numbers(v, where)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _p90_numbers(v, f"{path}[{i}]")
    return out


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    return json.loads(out)


def test_every_p90_is_the_budget(capsys: pytest.CaptureFixture[str]) -> None:
    fc = _json(capsys, "forecast", str(SEED), "--json")
    budget = fc["budget_usd"]
    assert budget > fc["total_usd"]  # the seed's P90 run costs more than the forecast
    found = _p90_numbers(fc)
    assert found  # budget.p90_usd at least
    assert all(v == budget for _, v in found), found
    # The time model's band is a range, never P10/P90 (null: the seed states its hours).
    assert fc["total_usd_range_low"] is None
    assert not any("p10" in k for k in json.dumps(fc).split('"') if k.islower())

    diff = _json(capsys, "diff", str(SEED), "--set", "cluster.nodes=32", "--json")
    names = [h["name"] for h in diff["headlines"]]
    assert not any("P90" in n or "P10" in n for n in names), names
    assert _p90_numbers(diff) == []

    opt = _json(capsys, "optimize", str(SEED), "--json")
    assert _p90_numbers(opt) == []  # the planner's approximation is "bad_case_usd"
    assert opt["user"]["bad_case_usd"] >= opt["user"]["total_usd"]
