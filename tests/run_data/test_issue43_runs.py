"""Issue #43 item 5: the whole runs added on 2026-12-05, and the per-bucket figures the accuracy
benchmark prints (item 3). Expected values are the model cards' own figures, multiplied here."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import accuracy
import published_runs


def _case(rid: str) -> published_runs.Case:
    return next(c for c in published_runs.cases() if c.id == rid)


def test_phi_card_runs_are_gpus_times_days() -> None:
    """Each card states GPUs, days and tokens; the row's GPU-hours are GPUs x days x 24."""
    expected = {
        # microsoft/Phi-3-mini-4k-instruct (April 2024): 512 H100-80G, 7 days, 3.3T tokens
        "phi-3-mini-apr2024": (512, 512 * 7 * 24, 3.3e12, None),
        # microsoft/Phi-3.5-MoE-instruct: 512 H100-80G, 23 days, 4.9T tokens, 6.6B active
        "phi-3.5-moe": (512, 512 * 23 * 24, 4.9e12, 6.6e9),
        # microsoft/Phi-4-mini-instruct: 512 A100-80G, 21 days, 5T tokens
        "phi-4-mini": (512, 512 * 21 * 24, 5.0e12, None),
    }
    for rid, (gpus, hours, tokens, active) in expected.items():
        c = _case(rid)
        assert (c.kind, c.gpus, c.published, c.tokens) == ("whole_run", gpus, hours, tokens)
        assert c.active_params == active
        assert c.hours_cover == "model_total"  # the cards' time is for the post-trained model
    assert _case("phi-4-mini").cluster["instance"] != _case("phi-3.5-moe").cluster["instance"]


def test_phi_card_runs_are_dated_inside_the_cards_training_period() -> None:
    """Run dates come from the cards' 'Dates' lines, not from the longer prefix 'phi-4' or
    'phi-3-mini' (the rows of other cards)."""
    assert date(2024, 2, 1) <= published_runs.run_date("phi-3-mini-apr2024") <= date(2024, 4, 30)
    assert date(2024, 4, 1) <= published_runs.run_date("phi-3.5-moe") <= date(2024, 8, 31)
    assert date(2024, 11, 1) <= published_runs.run_date("phi-4-mini") <= date(2024, 12, 31)
    assert published_runs.run_date("phi-4-mini") != published_runs.run_date("phi-4")


def test_april_phi3_mini_shares_the_cards_source_key() -> None:
    """The April and June Phi-3-mini figures are two versions of one card: one source, so a
    leave-one-source-out refit never keeps one while predicting the other."""
    assert _case("phi-3-mini-apr2024").source_key == _case("phi-3-mini").source_key


@dataclass(frozen=True)
class _Run:
    id: str
    published: float


def test_bucket_line_reports_signed_errors_beside_naive() -> None:
    """Published 100 each; forecasts 80, 90, 130 are -20%, -10%, +30% (median -10%, median
    |error| 20%, 2 of 3 within ±25%); naive 50, 100, 200 are -50%, 0%, +100% (median 0%, median
    |error| 50%); two of three inside the band."""
    runs = [_Run("a", 100.0), _Run("b", 100.0), _Run("c", 100.0)]
    pred = {"a": 80.0, "b": 90.0, "c": 130.0}
    base = {"a": 50.0, "b": 100.0, "c": 200.0}
    band = {"a": True, "b": True, "c": False}
    line = accuracy._bucket_line("x", runs, pred, band, base)
    assert "median signed -10.0%" in line
    assert "median |error| 20.0%" in line
    assert "within ±25%  67%" in line
    assert "band coverage  67%" in line
    assert "naive signed  +0.0%, |error| 50.0%" in line
