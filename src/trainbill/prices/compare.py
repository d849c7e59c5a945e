"""Per-accelerator price comparison: what one GPU-hour costs, and what a PFLOP-hour costs, by cloud.

An engineer choosing hardware compares chips, not instance sizes: ``prices list`` turns each
instance quote into per-accelerator figures (instance rate ÷ accelerators per instance), next
to the chip's memory and dense peak from ``accelerators.csv``. $ per PFLOP-hour is at the dense
BF16 **peak**: the catalog has no per-chip achievable MFU to apply (``time.base_mfu_*`` is the
time model's starting point, not a measured utilisation of each chip), and a ratio at peak
ranks chips the same as at any MFU they share.

Commitment rates are shown only where a price point is published (``sp_1yr``/``sp_3yr``,
EC2 Capacity Blocks): a rate worked out of a claimed discount is never shown.

Pure: takes a catalog and the quotes ``price_table`` built.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.prices._view import InstanceQuote

__all__ = ["SORT_KEYS", "GpuPriceRow", "gpu_price_rows", "ranked", "sort_rows"]

#: Published commitment-like options, in the order a tie is shown.
_COMMITMENTS = {"sp_3yr": "3yr", "sp_1yr": "1yr", "capacity_block": "Capacity Block"}
#: --sort names: what an engineer ranks by.
SORT_KEYS = ("gpu", "on-demand", "spot", "commitment", "pflop", "hbm", "age")


@record
class GpuPriceRow:
    """One (cloud, region, instance) quote per accelerator."""

    accelerator: str
    cloud: str
    region: str
    instance: str
    per_instance: int
    unit: str
    on_demand: float | None
    spot_low: float | None
    spot_high: float | None
    commitment: float | None
    commitment_option: str | None
    hbm_gb: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    usd_per_pflop_hour: float | None
    price_date: date | None
    age_days: int | None
    #: A catalog stand-in (``InstanceQuote.stand_in``): marked, and ranked only when asked.
    stand_in: bool = False

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``per_gpu`` of ``prices list --json``)."""
        return {
            "accelerator": self.accelerator,
            "accelerators_per_instance": self.per_instance,
            "on_demand_usd_per_gpu_hour": self.on_demand,
            "spot_usd_per_gpu_hour_low": self.spot_low,
            "spot_usd_per_gpu_hour_high": self.spot_high,
            "commitment_usd_per_gpu_hour": self.commitment,
            "commitment_option": self.commitment_option,
            "hbm_gb": self.hbm_gb,
            "peak_bf16_tflops": self.bf16_tflops,
            "peak_fp8_tflops": self.fp8_tflops,
            "usd_per_pflop_hour_bf16_at_peak": self.usd_per_pflop_hour,
            "price_date": self.price_date.isoformat() if self.price_date else None,
            "age_days": self.age_days,
            "stand_in": self.stand_in,
        }


def _spot_range(catalog: Catalog, q: InstanceQuote, as_of: date) -> tuple[float, float] | None:
    """Lowest and highest spot rate in force in the region and each of its zones (per-AZ spot
    prices differ: p5.48xlarge $20.99-$30.33 across us-east-1's zones in one snapshot)."""
    newest: dict[str, tuple[date, float]] = {}
    for p in catalog.prices:
        if (
            p.item != q.instance
            or p.option != "spot"
            or p.provider != q.provider
            or p.effective_from > as_of
        ):
            continue
        if p.region != q.region and catalog.zone_region(p.provider, p.region) != q.region:
            continue
        if p.region not in newest or p.effective_from > newest[p.region][0]:
            newest[p.region] = (p.effective_from, p.usd)
    if not newest:
        return None
    # A zone's price older than the region's price in force is superseded: the 2025 per-zone
    # snapshot of p5 spot is not a range for the 2026 regional price after the June-2025 cut.
    since = newest[q.region][0] if q.region in newest else date.min
    rates = [usd for day, usd in newest.values() if day >= since]
    return min(rates), max(rates)


def gpu_price_rows(
    catalog: Catalog, quotes: Sequence[InstanceQuote], *, as_of: date
) -> tuple[GpuPriceRow, ...]:
    """Per-accelerator rows of ``quotes``; quotes with no known accelerator are left out."""
    rows: list[GpuPriceRow] = []
    for q in quotes:
        if q.accelerator is None or not q.accelerator_count:
            continue
        n = q.accelerator_count
        acc = catalog.accelerators.get(q.accelerator)
        od = q.usd("on_demand")
        spot = _spot_range(catalog, q, as_of)
        published = [(o.usd_per_hour, name) for name, o in q.options.items()
                     if name in _COMMITMENTS and o.basis == "price_point"]  # fmt: skip
        commit = min(published) if published else None
        od_per = od / n if od is not None else None
        bf16 = acc.peak_bf16_tflops if acc else None
        dated = q.options.get("on_demand") or next(iter(q.options.values()), None)
        rows.append(
            GpuPriceRow(
                accelerator=q.accelerator,
                cloud=q.provider,
                region=q.region,
                instance=q.instance,
                per_instance=n,
                unit=q.unit,
                on_demand=od_per,
                spot_low=spot[0] / n if spot else None,
                spot_high=spot[1] / n if spot else None,
                commitment=commit[0] / n if commit else None,
                commitment_option=_COMMITMENTS[commit[1]] if commit else None,
                hbm_gb=acc.hbm_gb if acc else None,
                bf16_tflops=bf16,
                fp8_tflops=acc.peak_fp8_tflops if acc else None,
                # $/GPU-hour ÷ PFLOP/s = $ per PFLOP/s sustained for an hour (PFLOP-hour).
                usd_per_pflop_hour=od_per / (bf16 / 1000.0)
                if od_per is not None and bf16
                else None,
                price_date=dated.effective_from if dated else None,
                age_days=(as_of - dated.effective_from).days if dated else None,
                stand_in=q.stand_in,
            )
        )
    return tuple(rows)


_GETTERS: dict[str, Any] = {
    "gpu": lambda r: (r.accelerator, r.on_demand if r.on_demand is not None else float("inf")),
    "on-demand": lambda r: r.on_demand,
    "spot": lambda r: r.spot_low,
    "commitment": lambda r: r.commitment,
    "pflop": lambda r: r.usd_per_pflop_hour,
    "hbm": lambda r: -r.hbm_gb if r.hbm_gb is not None else None,
    "age": lambda r: r.age_days,
}


def _getter(key: str) -> Any:
    if key not in _GETTERS:
        raise SpecError(
            f"{key!r} is not a sort key; allowed: {', '.join(SORT_KEYS)}", field="--sort"
        )
    return _GETTERS[key]


def sort_rows(
    rows: Sequence[GpuPriceRow], key: str, *, allow_stand_ins: bool = False
) -> tuple[GpuPriceRow, ...]:
    """Rows ranked by ``key`` (one of ``SORT_KEYS``); rows without the figure go last.

    A catalog stand-in (an H800 node at DeepSeek's assumed $2/GPU-hour, a trn2 priced at trn1's
    per-chip rate) is not something a provider sells at that price, so it is not ranked against
    prices that are: it goes after every ranked row (``ranked`` says which are), unless
    ``allow_stand_ins``."""
    get = _getter(key)

    def rank(r: GpuPriceRow) -> tuple[bool, bool, Any]:
        value = get(r)
        unranked = r.stand_in and not allow_stand_ins
        return (unranked, value is None, value if value is not None else 0)

    return tuple(sorted(rows, key=rank))


def ranked(row: GpuPriceRow, key: str, *, allow_stand_ins: bool = False) -> bool:
    """Whether ``sort_rows`` ranks the row by ``key``: it has the figure, and it is not a
    stand-in (unless allowed)."""
    return _getter(key)(row) is not None and (allow_stand_ins or not row.stand_in)
