"""The time model's software-maturity factor: young chips run below their mature efficiency."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest

from trainbill.catalog import Catalog, load_catalog
from trainbill.errors import CatalogSchemaError
from trainbill.forecast import forecast
from trainbill.spec import plan_from_dict
from trainbill.timemodel import FitParams, estimate_time
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
    at age 1.5 the kernels take 1 / 0.85285 = 1.1725× as long as with the age unknown (mature)."""
    fp = FitParams(e_max=0.5, k_mem=0.0, eta_fp8=1.0, overlap=0.0, step_overhead_s=0.0, k_attn=0.0,
                   immaturity=0.4, maturity_tau_years=1.5)  # fmt: skip
    flops = 6 * 1e9 * 1e11 + 12 * 16 * 4096 * 2048 * 1e11
    hours = {}
    for age in (None, 1.5):
        est = estimate_time(
            catalog=catalog, accelerator=catalog.accelerator("h100"), instance=catalog.instance("p5.48xlarge"),
            nodes=1, precision="bf16", hours=None, params=1e9, active_params=None, tokens=1e11,
            global_batch_tokens=4e6, seq_len=2048, layers=16, d_model=4096, straggler_cv=0.0, recompute=False,
            fit=fp, software_age_years=age,
        )  # fmt: skip
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
    S3 price point) runs slower than for 2026-06-01 (3.70 years): the pure-training hours differ by the ratio of the maturities, with
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
        hours[day] = fc.usage.compute_hours
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


_LEGACY_HEADER = "id,name,vendor,peak_bf16_tflops,peak_fp8_tflops,hbm_gb,hbm_tbps,intra_node_gbytes_per_s,tdp_w,source,as_of\n"


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
