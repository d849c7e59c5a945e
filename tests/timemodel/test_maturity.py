"""The time model's software-maturity factor: young chips run below their mature efficiency."""

from __future__ import annotations

import math
from datetime import date
from typing import Any

import pytest

from trainbill.catalog import Catalog
from trainbill.forecasting import forecast
from trainbill.spec import plan_from_dict
from trainbill.timemodel import FitParams, TimeEstimate, estimate_time
from trainbill.usage import software_age_years


def test_maturity_by_hand() -> None:
    """1 − 0.4 · exp(−age / 1.5): age 1.5 → 1 − 0.4/e = 0.85285; age 0 → 0.6; before launch
    (age −1, a chip dated in the future) counts as age 0; age 15 → 1 − 0.4 · e^−10 ≈ 0.99998."""
    fp = FitParams(e_max=0.5, k_mem=0.0, eta_fp8=1.0, overlap=0.0, step_overhead_s=0.0, k_attn=0.0,
                   immaturity=0.4, maturity_tau_years=1.5)  # fmt: skip
    assert fp.maturity(1.5) == pytest.approx(1 - 0.4 / math.e)
    assert fp.maturity(1.5) == pytest.approx(0.85285, abs=1e-5)
    assert fp.maturity(0.0) == pytest.approx(0.6)
    assert fp.maturity(-1.0) == pytest.approx(0.6)
    assert fp.maturity(15.0) == pytest.approx(0.99998, abs=1e-5)


def test_kernel_time_divides_by_maturity(catalog: Catalog) -> None:
    """Pure-training hours are FLOPs / (8 GPUs × 989e12 × e_max 0.5 × maturity) with k_mem 0:
    at age 1.5 the kernels take 1 / 0.85285 = 1.1725× as long as with the age unknown (mature).
    Fused causal attention is timed at half its count (``time.causal_attention_work_share``)."""
    fp = FitParams(e_max=0.5, k_mem=0.0, eta_fp8=1.0, overlap=0.0, step_overhead_s=0.0, k_attn=0.0,
                   immaturity=0.4, maturity_tau_years=1.5)  # fmt: skip
    flops = 6 * 1e9 * 1e11 + 0.5 * 12 * 16 * 4096 * 2048 * 1e11
    hours = {}
    for age in (None, 1.5):
        est = estimate_time(
            catalog=catalog,
            accelerator=catalog.accelerator("h100"),
            instance=catalog.instance("p5.48xlarge"),
            nodes=1,
            precision="bf16",
            hours=None,
            params=1e9,
            active_params=None,
            tokens=1e11,
            global_batch_tokens=4e6,
            seq_len=2048,
            layers=16,
            d_model=4096,
            straggler_cv=0.0,
            recompute=False,
            fit=fp,
            software_age_years=age,
        )
        hours[age] = est.compute_hours
        note = dict(est.factors)["maturity"]
        assert ("launch date unknown" in note) is (age is None)
    assert hours[None] == pytest.approx(flops / (8 * 989e12 * 0.5) / 3600)
    assert hours[1.5] == pytest.approx(flops / (8 * 989e12 * 0.5 * (1 - 0.4 / math.e)) / 3600)


def test_software_age_counts_from_the_catalog_launch_date(catalog: Catalog) -> None:
    """H100 launched 2022-09-20 (catalog). To 2026-12-03: 2022-09-20 → 2026-09-20 is 4 years with
    one 29 February (2024) = 4 · 365 + 1 = 1461 days, then 10 (Sep) + 31 + 30 + 3 = 74 days:
    1535 days / 365.25 = 4.2026 years."""
    h100 = catalog.accelerator("h100")
    assert h100.launched == date(2022, 9, 20)
    assert software_age_years(h100, date(2026, 12, 3)) == pytest.approx(1535 / 365.25)
    assert round(1535 / 365.25, 4) == 4.2026


def test_every_packaged_accelerator_has_a_launch_date(catalog: Catalog) -> None:
    """The factor is only as good as its dates: each packaged chip has one, cited in its source."""
    for acc in catalog.accelerators.values():
        assert acc.launched is not None, acc.id
        assert "launched:" in acc.source, acc.id


def test_forecast_date_sets_the_age(catalog: Catalog) -> None:
    """The same H100 plan priced for 2024-09-01 (1.95 years after launch; the catalog's first
    S3 price point) runs slower than for 2026-06-01 (3.70 years): the pure-training hours differ by
    the ratio of the maturities, with
    the catalog's fitted immaturity a and τ: (1 − a·e^(−3.70/τ)) / (1 − a·e^(−1.95/τ)) > 1."""
    from trainbill.timemodel import fit_params

    plan = {
        "model": {"params": 7e9, "tokens": 1e11},
        "cluster": {"instance": "p5.48xlarge", "nodes": 2},
    }
    hours = {}
    for day in ("2024-09-01", "2026-06-01"):
        fc = forecast(
            plan_from_dict({**plan, "prices": {"as_of": day}}), catalog, today=date(2026, 12, 3)
        )
        hours[day] = fc.usage.compute.hours
    fp = fit_params(catalog)
    young = (date(2024, 9, 1) - date(2022, 9, 20)).days / 365.25
    old = (date(2026, 6, 1) - date(2022, 9, 20)).days / 365.25
    expected = (1 - fp.immaturity * math.exp(-old / fp.maturity_tau_years)) / (
        1 - fp.immaturity * math.exp(-young / fp.maturity_tau_years)
    )
    assert expected > 1.0
    # Host overhead per step does not scale with maturity, so the ratio is slightly below the
    # kernel ratio; it is above 1 and within 1% of it.
    ratio = hours["2024-09-01"] / hours["2026-06-01"]
    assert 1.0 < ratio <= expected * (1 + 1e-9)
    assert ratio == pytest.approx(expected, rel=0.01)


def _fit(immaturity: float = 0.4, tau: float = 1.5) -> FitParams:
    return FitParams(
        e_max=0.5,
        k_mem=0.0,
        eta_fp8=1.0,
        overlap=0.0,
        step_overhead_s=0.0,
        k_attn=0.0,
        immaturity=immaturity,
        maturity_tau_years=tau,
    )


def _h100_1b(catalog: Catalog, *, age: float | None, **kw: Any) -> TimeEstimate:
    """1e9 params, 1e11 tokens, 16 × 4096 shape, seq 2048 on one p5.48xlarge (8 H100)."""
    return estimate_time(
        catalog=catalog,
        accelerator=catalog.accelerator("h100"),
        instance=catalog.instance("p5.48xlarge"),
        nodes=1,
        precision="bf16",
        hours=None,
        params=1e9,
        active_params=None,
        tokens=1e11,
        global_batch_tokens=4e6,
        seq_len=2048,
        layers=16,
        d_model=4096,
        straggler_cv=0.0,
        recompute=False,
        fit=kw.pop("fit", _fit()),
        software_age_years=age,
        **kw,
    )


def test_explain_arithmetic_reproduces_the_printed_factor(catalog: Catalog) -> None:
    """2022-09-20 → 2024-09-01 is 731 − 19 = 712 days = 1.9493 years. The note must print an
    equation that gives its own result by hand: 1 − 0.4 · exp(−1.95 / 1.5) = 1 − 0.4 · 0.272532
    = 0.890987 → 0.891 (the exact age gives 0.890940 → 0.891). One decimal of age printed
    exp(−1.9 / 1.5) = 1 − 0.4 · 0.281754 = 0.887, not the 0.891 it claimed."""
    note = dict(_h100_1b(catalog, age=712 / 365.25).factors)["maturity"]
    assert "1.95 years before the run" in note
    assert "1 − 0.4 × exp(−1.95 / 1.5) = 0.891 " in note
    assert round(1 - 0.4 * math.exp(-1.95 / 1.5), 3) == 0.891


def test_run_dated_before_launch_says_so_and_warns(catalog: Catalog) -> None:
    """Age −0.5 (the run half a year before launch) counts as age 0: 1 − 0.4 · e^0 = 0.6, so the
    kernels take 1 / 0.6 = 1.667× the mature time; the note must not claim "0.0 years before the
    run", and the plan gets a warning. Mature hours: timed FLOPs 6 · 1e9 · 1e11 + 0.5 · 12 · 16 ·
    4096 · 2048 · 1e11 (fused causal attention at half its count) = 6.8053e20 over 8 × 989e12 ×
    0.5 FLOP/s = 47.78 h; at maturity 0.6: 79.64 h."""
    flops = 6 * 1e9 * 1e11 + 0.5 * 12 * 16 * 4096 * 2048 * 1e11
    est = _h100_1b(catalog, age=-0.5)
    note = dict(est.factors)["maturity"]
    assert "0.50 years after the run date" in note
    assert "= 0.600 of mature efficiency" in note
    assert any("0.50 years before h100 launched" in w for w in est.warnings)
    assert est.compute_hours == pytest.approx(flops / (8 * 989e12 * 0.5 * 0.6) / 3600)
    assert est.compute_hours == pytest.approx(79.64, abs=0.01)


def test_measured_mfu_ignores_maturity_and_says_so(catalog: Catalog) -> None:
    """A measured MFU of 0.4 replaces the model, whatever the chip's age (age 0 would be ×0.6):
    7.6106e20 FLOPs / (8 × 989e12 × 0.4) = 240,477 s = 66.80 h, no host overhead (it is inside
    the measured step). The kernel line must not print the modelled e_max × maturity formula
    as if it gave the measured 40.0%."""
    flops = 6 * 1e9 * 1e11 + 12 * 16 * 4096 * 2048 * 1e11
    young = _h100_1b(catalog, age=0.0, measured_mfu=0.4)
    unknown = _h100_1b(catalog, age=None, measured_mfu=0.4)
    assert young.compute_hours == unknown.compute_hours
    assert young.compute_hours == pytest.approx(flops / (8 * 989e12 * 0.4) / 3600)
    assert young.compute_hours == pytest.approx(66.80, abs=0.01)
    # The measured MFU counts causal attention in full, so nothing says half of it is timed.
    assert "causal" not in dict(young.factors)
    factors = dict(young.factors)
    assert "maturity" not in factors
    assert "e_max" not in factors["kernel"]
    assert "measured 40.0%" in factors["kernel"]


@pytest.mark.parametrize(
    ("immaturity", "tau"),
    [
        (1.0, 1.5),
        (1.2, 1.5),
        (-0.1, 1.5),
        (math.nan, 1.5),
        (0.4, 0.0),
        (0.4, -1.0),
        (0.4, math.inf),
        (0.4, math.nan),
    ],
)
def test_fit_params_outside_the_model_are_refused(immaturity: float, tau: float) -> None:
    """immaturity 1 gives maturity 1 − 1 · e^0 = 0 at launch (division by zero), 1.2 gives −0.2
    (negative hours), −0.1 gives 1.1 (faster than mature); τ 0 divides by zero, τ −1 makes
    exp(+age) overflow: all refused when the parameters are built."""
    with pytest.raises(ValueError, match=r"immaturity|maturity_tau_years"):
        _fit(immaturity, tau)


def test_maturity_stays_in_its_range_at_the_extremes() -> None:
    """1 − 0.4 · exp(−age / 1.5): age +inf → 1; −inf (before launch) → age 0 → 0.6; NaN refused."""
    fp = _fit()
    assert fp.maturity(math.inf) == 1.0
    assert fp.maturity(-math.inf) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="NaN"):
        fp.maturity(math.nan)


def test_as_of_changes_kernel_hours_by_the_ratio_of_maturities(catalog: Catalog) -> None:
    """H100 launched 2022-09-20. To 2024-09-01: 731 − 19 = 712 days = 1.949350 years; to
    2026-06-01: 1461 − (29 + 31 + 31 + 20) = 1350 days = 3.696099 years. With the shipped fit
    (a = 0.3736, τ = 1.5): 1 − a · e^(−1.299567) = 1 − 0.3736 · 0.272650 = 0.898138 and
    1 − a · e^(−2.464066) = 1 − 0.3736 · 0.085088 = 0.968211, ratio 1.078020. Kernel time is
    exactly FLOPs / (... × maturity), so the kernel hours scale by that ratio; the fixed host
    overhead per step (same step count) dilutes the ratio of compute_hours slightly."""
    a = float(catalog.value("time.fit.immaturity"))
    tau = float(catalog.value("time.maturity_tau_years"))
    expected = (1 - a * math.exp(-1350 / 365.25 / tau)) / (1 - a * math.exp(-712 / 365.25 / tau))
    plan = {
        "model": {"params": 7e9, "tokens": 1e11},
        "cluster": {"instance": "p5.48xlarge", "nodes": 2},
    }
    kernel, hours = {}, {}
    for day in ("2024-09-01", "2026-06-01"):
        usage = forecast(
            plan_from_dict({**plan, "prices": {"as_of": day}}), catalog, today=date(2026, 12, 3)
        ).usage
        lay = usage.time.layout
        assert lay is not None
        kernel[day] = lay.compute_s
        hours[day] = usage.compute.hours
    assert kernel["2024-09-01"] / kernel["2026-06-01"] == pytest.approx(expected, rel=1e-12)
    if a == 0.3736 and tau == 1.5:  # the shipped fit: the docstring's figures
        assert expected == pytest.approx(1.078020, abs=1e-6)
    ratio = hours["2024-09-01"] / hours["2026-06-01"]
    assert 1.0 < ratio < expected
    assert ratio == pytest.approx(expected, rel=1e-3)
