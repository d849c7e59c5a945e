"""Audit a quote: does a claimed cost for a training run imply a possible throughput?

A quote of $X for training N parameters on D tokens with G GPUs buys X / (G × $/GPU-hour)
hours; doing 6·N·D FLOPs in those hours needs a certain TFLOP/s per GPU. Above the GPU's dense
peak the quote is impossible; above the best MFU any published run reached it is implausible.
The seed article's "$1.5M for 70B on 1.4T tokens on 512 H100s" at $98.32 per p5 hour needs
~1,338 TFLOP/s per H100, above its 989 TFLOP/s BF16 peak.
"""

from __future__ import annotations

import math
from dataclasses import fields
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.spec import (
    MAX_COST_USD,
    MAX_GPUS,
    MAX_PARAMS,
    MAX_TOKENS,
    MAX_USD_PER_GPU_HOUR,
    MIN_USD_PER_GPU_HOUR,
)
from trainbill.timemodel import training_flops
from trainbill.usage import instance_for_gpu

__all__ = ["QuoteAudit", "audit_quote"]


@record
class QuoteAudit:
    """What a quote implies and whether it is physically possible."""

    cost_usd: float
    gpus: int
    accelerator: str
    usd_per_gpu_hour: float
    price_source: str
    hours: float
    flops: float
    implied_tflops_per_gpu: float
    peak_tflops_per_gpu: float
    implied_mfu: float
    best_published_mfu: float
    verdict: str
    explanation: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _num(x: float, decimals: int) -> str:
    """Thousands-separated with ``decimals`` below ten million, else 3 significant digits: an
    audit of an absurd quote should say 1.2e+15 h, not print 290 digits."""
    return f"{x:,.{decimals}f}" if abs(x) < 1e7 else f"{x:.3g}"


def _pct(share: float) -> str:
    """A share as a percentage people can read at any size (811594202899% is 8.12e+11%)."""
    return f"{share:.0%}" if share < 100 else f"{share * 100:.3g}%"


def _against_least(cost_usd: float, mfu: float, best: float) -> str:
    """How far the quote is from the least the work can cost (at the best published MFU), in
    dollars either way: the cost scales as 1 / MFU, so least = quote × MFU / best. An
    understated quote is below it; one above it says how much it pays over the best practice."""
    least = cost_usd * mfu / best
    gap = cost_usd - least
    side = "UNDERSTATED: below" if gap < 0 else "above"
    return (
        f"at the best published MFU ({best:.0%}) the work costs at least ${_num(least, 0)} "
        f"(${_num(cost_usd, 0)} × {_pct(mfu)} / {best:.0%}): the quote is {side} it by "
        f"${_num(abs(gap), 0)} ({cost_usd / least:.3g}× it)"
    )


def _check_values(
    *, cost_usd: float, params: float, tokens: float, gpus: int, usd_per_gpu_hour: float | None
) -> None:
    """Each number finite and in its range (``field`` names the argument)."""
    for name, value, low, high in (
        ("cost_usd", cost_usd, 1.0, MAX_COST_USD),  # below a dollar is no training quote
        ("params", params, 1.0, MAX_PARAMS),
        ("tokens", tokens, 1.0, MAX_TOKENS),
        ("gpus", gpus, 1.0, MAX_GPUS),
        ("usd_per_gpu_hour", usd_per_gpu_hour, MIN_USD_PER_GPU_HOUR, MAX_USD_PER_GPU_HOUR),
    ):
        if value is None:
            continue
        if isinstance(value, bool) or not math.isfinite(value) or value <= 0 or value < low:
            bound = "> 0" if low == 0.0 else f">= {low:g}"
            raise SpecError(f"must be a finite number {bound} (got {value})", field=name)
        if value > high:
            raise SpecError(
                f"must be at most {high:.3g}: too large for any real run, a typo? (got {value:g})",
                field=name,
            )


def _listed_rate(
    catalog: Catalog, gpu: str, accel_id: str, instance: str | None, as_of: date | None
) -> tuple[float, str]:
    """The catalog's on-demand price per GPU-hour of the instance (named, else the default
    provider's for the accelerator, as ``forecast --gpu``), and its citation."""
    inst = catalog.instance(instance) if instance else instance_for_gpu(catalog, accel_id, "aws")
    if inst.accelerator != accel_id:
        # Pricing one chip against another's peak would call any quote plausible.
        msg = (
            f"{inst.instance} carries {inst.accelerator}, not {accel_id}; give --gpu "
            f"{inst.accelerator} or an instance with {accel_id}"
        )
        raise SpecError(msg, field="instance")
    day = as_of or date.today()  # noqa: DTZ011 - a calendar date
    region = catalog.reference_region(inst.provider)
    p = catalog.price(inst.instance, "on_demand", provider=inst.provider, region=region, as_of=day)
    rate = p.usd / inst.accelerator_count
    if inst.billing == "chip":  # priced per chip-hour already (TPUs)
        source = f"{inst.instance} ${p.usd:,.2f} per chip-hour; {p.cite()}"
    else:
        source = f"{inst.instance} ${p.usd:,.2f}/h ÷ {inst.accelerator_count} GPUs; {p.cite()}"
    others = catalog.accelerator_namesakes(gpu)
    if others:  # a family name (``a100``): the price is one part's, so say which
        source += f" (gpu {gpu!r} read as {accel_id}; {' or '.join(others)} is priced apart)"
    return rate, source


def _verdict(
    catalog: Catalog, accel_id: str, precision: str, *, implied: float, peak: float, mfu: float
) -> tuple[str, str]:
    """Impossible (above the chip's peak), implausible (above the best published MFU) or
    plausible, and why."""
    best = float(catalog.value("time.best_published_mfu"))
    if mfu > 1.0:
        verdict = "impossible"
        why = (
            f"needs {_num(implied, 0)} TFLOP/s per {accel_id}, above its dense {precision} peak of "
            f"{peak:,.0f} TFLOP/s ({_pct(mfu)} MFU)"
        )
    elif mfu > best:
        verdict = "implausible"
        why = (
            f"needs {_pct(mfu)} MFU, above the best published run ({best:.0%}; "
            f"{catalog.assumption('time.best_published_mfu').source})"
        )
    else:
        verdict = "plausible"
        why = (
            f"needs {_pct(mfu)} MFU ({_num(implied, 0)} of {peak:,.0f} TFLOP/s), within "
            "published practice"
        )
    return verdict, why


def audit_quote(
    *,
    catalog: Catalog,
    cost_usd: float,
    params: float,
    tokens: float,
    gpu: str,
    gpus: int,
    precision: str = "bf16",
    usd_per_gpu_hour: float | None = None,
    instance: str | None = None,
    as_of: date | None = None,
) -> QuoteAudit:
    """Implied hours, TFLOP/s per GPU and MFU for a quoted cost, with a verdict.

    Raises:
        SpecError: a value that is not a finite number in its range (``field`` names the
            argument): ``inf`` or a negative price would give a negative or NaN MFU verdict.
    """
    _check_values(
        cost_usd=cost_usd, params=params, tokens=tokens, gpus=gpus,
        usd_per_gpu_hour=usd_per_gpu_hour,
    )  # fmt: skip
    accel = catalog.accelerator(gpu)
    if usd_per_gpu_hour is None:
        rate, source = _listed_rate(catalog, gpu, accel.id, instance, as_of)
    else:
        rate = usd_per_gpu_hour
        source = "given on the command line"
    hours = cost_usd / (gpus * rate)
    flops = training_flops(active_params=params, tokens=tokens)
    implied = flops / (gpus * hours * 3600.0) / 1e12
    peak = accel.peak_tflops(precision)
    mfu = implied / peak
    best = float(catalog.value("time.best_published_mfu"))
    verdict, why = _verdict(catalog, accel.id, precision, implied=implied, peak=peak, mfu=mfu)
    explanation = (
        f"${_num(cost_usd, 0)} / ({gpus} GPUs × ${rate:,.4g}/GPU-hour) = {_num(hours, 1)} h; 6 × "
        f"{params:.3g} × {tokens:.3g} = {flops:.3g} FLOPs / ({gpus} × {_num(hours, 1)} h × 3600 "
        f"s) = {_num(implied, 0)} TFLOP/s per GPU: {why}; {_against_least(cost_usd, mfu, best)}"
    )
    return QuoteAudit(
        cost_usd=cost_usd,
        gpus=gpus,
        accelerator=accel.id,
        usd_per_gpu_hour=rate,
        price_source=source,
        hours=hours,
        flops=flops,
        implied_tflops_per_gpu=implied,
        peak_tflops_per_gpu=peak,
        implied_mfu=mfu,
        best_published_mfu=best,
        verdict=verdict,
        explanation=explanation,
    )
