"""Quote audit: the seed article's $1.5M claim is physically impossible."""

from __future__ import annotations

from datetime import date

import pytest

from conftest import run_cli
from trainbill.catalog import Catalog
from trainbill.check import QuoteAudit, audit_quote
from trainbill.errors import SpecError


def test_article_claim_is_impossible(catalog: Catalog) -> None:
    """$1.5M / (512 × $98.32/8) = 238.4 h; 5.88e23 FLOPs / (512 × 238.4 h × 3600) ≈ 1,338 TFLOP/s >
    989."""
    a = audit_quote(
        catalog=catalog,
        cost_usd=1.5e6,
        params=70e9,
        tokens=1.4e12,
        gpu="h100",
        gpus=512,
        as_of=date(2025, 5, 1),
    )
    hours = 1.5e6 / (512 * 98.32 / 8)
    implied = 6 * 70e9 * 1.4e12 / (512 * hours * 3600) / 1e12
    assert a.hours == pytest.approx(hours)
    assert a.implied_tflops_per_gpu == pytest.approx(implied)
    assert 1330 < a.implied_tflops_per_gpu < 1345
    assert a.verdict == "impossible"


def test_generous_quote_is_plausible(catalog: Catalog) -> None:
    """At $5M the same run needs 5.88e23 / (512 × (5e6/(512×12.29)) h × 3600) ≈ 401 TFLOP/s: 41%
    MFU."""
    a = audit_quote(
        catalog=catalog,
        cost_usd=5e6,
        params=70e9,
        tokens=1.4e12,
        gpu="h100",
        gpus=512,
        usd_per_gpu_hour=12.29,
    )
    assert a.implied_mfu == pytest.approx(6 * 70e9 * 1.4e12 / (5e6 / 12.29 * 3600) / 989e12)
    assert a.verdict == "plausible"


@pytest.mark.parametrize(
    ("kwargs", "field", "needle"),
    [
        ({"cost_usd": float("inf")}, "cost_usd", "finite number >= 1"),
        ({"params": float("nan")}, "params", "finite number >= 1"),
        (
            {"usd_per_gpu_hour": -1.0},
            "usd_per_gpu_hour",
            "finite number >= 0.001",
        ),  # gave -12% MFU, "plausible"
        (
            {"usd_per_gpu_hour": float("inf")},
            "usd_per_gpu_hour",
            "finite number >= 0.001",
        ),  # ZeroDivisionError
        ({"tokens": 0.5}, "tokens", ">= 1"),
        ({"gpus": 10**11}, "gpus", "at most 1e+06"),
        ({"cost_usd": 1e300}, "cost_usd", "at most 1e+12"),  # printed a 300-digit "plausible" audit
        ({"usd_per_gpu_hour": 1e-300}, "usd_per_gpu_hour", ">= 0.001"),  # 300-digit hours
        ({"cost_usd": 1e-5}, "cost_usd", ">= 1"),  # "$0 ... = 0.0 h"
    ],
)
def test_bad_numbers_are_refused(
    catalog: Catalog, kwargs: dict[str, float], field: str, needle: str
) -> None:
    args = {"cost_usd": 1e6, "params": 70e9, "tokens": 1e12, "gpus": 512, **kwargs}
    with pytest.raises(SpecError) as err:
        audit_quote(catalog=catalog, gpu="h100", **args)  # type: ignore[arg-type]
    assert err.value.field == field
    assert needle in str(err.value)


def test_default_price_is_the_forecasts_instance(catalog: Catalog) -> None:
    """`forecast --gpu h100` prices p5.48xlarge (AWS, the default provider); so does the audit:
    $55.04 / 8 = $6.88 per GPU-hour after the June 2025 price cut."""
    a = audit_quote(
        catalog=catalog,
        cost_usd=1e6,
        params=70e9,
        tokens=1e12,
        gpu="h100",
        gpus=512,
        as_of=date(2026, 1, 1),
    )
    assert a.price_source.startswith("p5.48xlarge $55.04/h ÷ 8 GPUs")
    assert a.usd_per_gpu_hour == pytest.approx(55.04 / 8)


def test_family_gpu_name_says_which_part_it_priced(catalog: Catalog) -> None:
    """`--gpu A100` audits against the 40 GB part (p4d, as `forecast --gpu a100` prices it) and
    the price source says so; the exact id needs no such note."""

    def audit(gpu: str) -> QuoteAudit:
        return audit_quote(catalog=catalog, cost_usd=1e6, params=70e9, tokens=1e12, gpu=gpu,
                           gpus=512, as_of=date(2026, 1, 1))  # fmt: skip

    family, exact = audit("A100"), audit("a100-40gb")
    assert family.price_source.startswith("p4d.24xlarge")
    assert "gpu 'A100' read as a100-40gb; a100-80gb is priced apart" in family.price_source
    assert "read as" not in exact.price_source
    assert family.usd_per_gpu_hour == exact.usd_per_gpu_hour


def test_cli_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(
        capsys,
        "check",
        "--cost",
        "1e6",
        "--params",
        "70e9",
        "--tokens",
        "1e12",
        "--gpu",
        "h100",
        "--gpus",
        "512",
        "--usd-per-gpu-hour",
        "inf",
    )
    assert code == 1
    assert (
        err.strip()
        == "trainbill: error: command line: --usd-per-gpu-hour: must be a finite number >= "
        "0.001 (got inf)"
    )


def test_an_instance_with_another_gpu_is_refused(catalog: Catalog) -> None:
    """--gpu h100 priced with p4d.24xlarge (A100s) was judged against the H100 peak: PLAUSIBLE."""
    with pytest.raises(
        SpecError, match=r"p4d\.24xlarge carries a100-40gb, not h100; give --gpu a100-40gb"
    ) as err:
        audit_quote(
            catalog=catalog,
            cost_usd=1e6,
            params=7e9,
            tokens=1e12,
            gpu="h100",
            gpus=64,
            instance="p4d.24xlarge",
        )
    assert err.value.field == "instance"


def test_an_absurd_quote_prints_short_numbers(catalog: Catalog) -> None:
    """A $1 quote for 7B × 1T tokens on 64 H100 at $6.88/GPU-h reads 8.1e+06% MFU, not 10 digits."""
    audit = audit_quote(catalog=catalog, cost_usd=1.0, params=7e9, tokens=1e12, gpu="h100", gpus=64,
                        usd_per_gpu_hour=6.88)  # fmt: skip
    # hours = 1 / (64 × 6.88) = 0.00227 h; FLOPs 6 × 7e9 × 1e12 = 4.2e22;
    # TFLOP/s per GPU = 4.2e22 / (64 × 0.00227 × 3600) / 1e12 = 8.03e7; / 989 = 81,173 = 8.12e+06 %
    assert audit.verdict == "impossible"
    assert "8.03e+07 TFLOP/s per h100" in audit.explanation
    assert "(8.12e+06% MFU)" in audit.explanation
