"""Can per-node gp3 volumes feed the data loader and absorb checkpoints; if not, which FSx for
Lustre file system would, at what price, and what the stall costs otherwise."""

from __future__ import annotations

import math
from datetime import date

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.costs import storage as storage_driver
from trainbill.costs._pricing import cluster_rate, service
from trainbill.errors import PriceNotFoundError, SpecError
from trainbill.forecasting import forecast
from trainbill.spec import Plan
from trainbill.usage import (
    FSX_TIER_MBPS_PER_TIB,
    Usage,
    fsx_throughput_mbps,
    gp3_limits,
    lustre_gb_per_gib,
    lustre_size_gib,
    usage_for,
)

__all__ = ["StorageReport", "storage_check"]

_MIB = 1048576.0


# --- storage ---------------------------------------------------------------------------------
@record
class StorageReport:
    """Per-node gp3 demand against gp3's per-volume limits, and an FSx recommendation."""

    tokens_per_s: float
    read_mibps_per_node: float
    read_iops_per_node: float
    io_kib: float
    checkpoint_gb_per_node: float
    checkpoint_write_mibps_per_node: float
    gp3_max_iops: float
    gp3_max_mibps: float
    provisioned_iops: float
    provisioned_mibps: float
    #: A gp3 setting AWS would create that meets the demand (``_gp3_setting``): IOPS, MiB/s and
    #: the volume GB they need; the plan's own values where they suffice.
    suggested_iops: float
    suggested_mibps: float
    suggested_gb: float
    provisioned_gb: float
    ebs_fits: bool
    provisioning_fits: bool
    stall_hours: float
    stall_usd: float
    fsx_needed_mbps: float
    fsx_tier: str | None
    fsx_capacity_gb: float
    fsx_usd: float
    notes: tuple[str, ...]
    #: Checkpoints written to the plan's own FSx (``checkpoint.target = "fsx"``): its size (GB)
    #: and throughput (MB/s), and the training time its writes stall (h, USD); zeros otherwise.
    plan_fsx_gb: float = 0.0
    plan_fsx_mbps: float = 0.0
    fsx_stall_hours: float = 0.0
    fsx_stall_usd: float = 0.0
    #: What moving those checkpoints to the FSx recommended above saves, net of its extra cost
    #: and of the stall that remains (each checkpoint written at its throughput); 0 if nothing.
    fsx_switch_saving_usd: float = 0.0

    @property
    def recommendation(self) -> str:
        """One sentence: keep gp3, raise its provisioning, or move to FSx, and, when the
        checkpoints go to the plan's own FSx, whether that file system is fast enough (it was
        not judged at all: "gp3 keeps up" was said of a plan losing a quarter of its bill to
        checkpoint writes on a small FSx)."""
        if self.fsx_switch_saving_usd > 0:
            return (
                f"checkpoints written to the plan's {self.plan_fsx_gb:,.0f} GB FSx for Lustre "
                f"({self.plan_fsx_mbps:,.0f} MB/s) stall training {self.fsx_stall_hours:,.1f} h "
                f"(${self.fsx_stall_usd:,.0f}): a {self.fsx_tier} file system of "
                f"{self.fsx_capacity_gb:,.0f} GB carries {self.fsx_needed_mbps:,.0f} MB/s for "
                f"${self.fsx_usd:,.0f} in all and saves ${self.fsx_switch_saving_usd:,.0f} net"
            )
        if not self.ebs_fits and self.stall_usd <= self.fsx_usd:
            return (
                f"gp3 cannot keep up (per-volume limits {self.gp3_max_iops:,.0f} IOPS / "
                f"{self.gp3_max_mibps:,.0f} MiB/s), but the stall ({self.stall_hours:,.2f} h, "
                f"${self.stall_usd:,.0f}) costs less than FSx for Lustre {self.fsx_tier} "
                f"(${self.fsx_usd:,.0f}): keep gp3 at its limits"
            )
        if not self.ebs_fits:
            return (
                f"gp3 cannot keep up (per-volume limits {self.gp3_max_iops:,.0f} IOPS / "
                f"{self.gp3_max_mibps:,.0f} MiB/s): use FSx for Lustre {self.fsx_tier} with "
                f"{self.fsx_capacity_gb:,.0f} GB (${self.fsx_usd:,.0f} for the run) instead of "
                f"losing {self.stall_hours:,.1f} h (${self.stall_usd:,.0f}) to I/O stalls"
            )
        if not self.provisioning_fits:
            size = (
                f" on a volume of at least {self.suggested_gb:,.0f} GB"
                if self.suggested_gb > self.provisioned_gb
                else ""
            )
            return (
                f"gp3 can keep up, but provision {self.suggested_iops:,.0f} IOPS and "
                f"{self.suggested_mibps:,.0f} MiB/s per volume{size} (the plan has "
                f"{self.provisioned_iops:,.0f} IOPS / {self.provisioned_mibps:,.0f} MiB/s; "
                f"the demand is {self.read_iops_per_node:,.0f} IOPS and "
                f"{max(self.read_mibps_per_node, self.checkpoint_write_mibps_per_node):,.0f} "
                "MiB/s)"
            )
        return "gp3 as provisioned keeps up with the data loader and checkpoint writes"


@record
class _Gp3Load:
    """What each node's gp3 volume must sustain: data-loader reads and checkpoint writes."""

    tokens_per_s: float
    io_kib: float
    read_mibps: float
    read_iops: float
    ck_gb_node: float
    #: GB/s per node the plan writes checkpoints at (also what FSx must absorb per node).
    want_write: float
    write_mibps: float


def storage_check(plan: Plan, catalog: Catalog, *, today: date | None = None) -> StorageReport:
    """Check per-node gp3 against the data loader and checkpoint demand; size FSx if it fails.

    Read rate: the forecast's tokens per second of pure training × bytes per token, shared by
    the nodes; each sample (``seq_len`` tokens) is one random read, so IOPS = bytes/s ÷ I/O size
    (capped at EBS's 256 KiB I/O). Checkpoint writes: each node writes its shard of the checkpoint
    at the plan's per-node write rate, which a gp3 volume caps at its throughput limit. When gp3
    cannot keep up the shortfall slows every step (stall = compute hours × (need/limit − 1)), priced
    at the cluster rate; the FSx alternative is the cheapest tier whose throughput (capacity ×
    MB/s per TiB) covers the whole cluster's reads plus checkpoint writes.
    """
    u = forecast(plan, catalog, today=today).usage
    if u.provider != "aws":
        # The limits checked are EBS gp3's (per-volume IOPS/throughput, AWS's 2025 figures);
        # answering a Persistent Disk or Managed Disk plan in gp3 and FSx terms misled.
        msg = (
            f"storage-check models AWS EBS gp3 volumes and FSx for Lustre; this plan's provider "
            f"is {u.provider}, whose block storage has other limits (not modelled)"
        )
        raise SpecError(msg, field="cluster.provider")
    load = _gp3_load(plan, catalog, u)
    max_iops, max_mibps, _when = gp3_limits(catalog, u.run_date)
    stall_hours, ebs_fits = _gp3_stall(u, load, max_iops=max_iops, max_mibps=max_mibps)
    provisioning_fits = (
        load.read_iops <= u.storage.ebs_iops and load.read_mibps <= u.storage.ebs_throughput_mibps
    )
    rate, _words = cluster_rate(catalog, u)
    bpt = float(catalog.value("defaults.model.bytes_per_token"))
    ck_mbps = _checkpoint_burst_mbps(u, load.want_write)
    need_mbps = max(load.tokens_per_s * bpt / 1e6, ck_mbps)
    fsx_usd, fsx_tier, fsx_gb = _cheapest_fsx(catalog, u, need_mbps)
    iops, mibps, gb = _gp3_setting(
        catalog,
        need_iops=max(load.read_iops, u.storage.ebs_iops),
        need_mibps=max(load.read_mibps, load.write_mibps, u.storage.ebs_throughput_mibps),
        gb=u.storage.ebs_gb_per_node,
    )
    switch = _fsx_switch(plan, catalog, u, rate, (fsx_usd, fsx_tier, fsx_gb), today)
    return StorageReport(
        plan_fsx_gb=switch[0],
        plan_fsx_mbps=switch[1],
        fsx_stall_hours=switch[2],
        fsx_stall_usd=switch[2] * rate,
        fsx_switch_saving_usd=switch[3],
        tokens_per_s=load.tokens_per_s,
        read_mibps_per_node=load.read_mibps,
        read_iops_per_node=load.read_iops,
        io_kib=load.io_kib,
        checkpoint_gb_per_node=load.ck_gb_node,
        checkpoint_write_mibps_per_node=load.write_mibps,
        gp3_max_iops=max_iops,
        gp3_max_mibps=max_mibps,
        provisioned_iops=u.storage.ebs_iops,
        provisioned_mibps=u.storage.ebs_throughput_mibps,
        suggested_iops=iops,
        suggested_mibps=mibps,
        suggested_gb=gb,
        provisioned_gb=u.storage.ebs_gb_per_node,
        ebs_fits=ebs_fits,
        provisioning_fits=provisioning_fits and load.write_mibps <= u.storage.ebs_throughput_mibps,
        stall_hours=stall_hours,
        stall_usd=stall_hours * rate,
        fsx_needed_mbps=need_mbps,
        fsx_tier=fsx_tier,
        fsx_capacity_gb=fsx_gb,
        fsx_usd=fsx_usd,
        notes=_storage_notes(u, ck_mbps),
    )


def _fsx_switch(
    plan: Plan,
    catalog: Catalog,
    u: Usage,
    rate: float,
    fsx: tuple[float, str, float],
    today: date | None,
) -> tuple[float, float, float, float]:
    """(GB, MB/s, stall hours, net saving of the recommended file system) for checkpoints
    written synchronously to the plan's own FSx; zeros otherwise (an asynchronous checkpoint
    stalls only for its snapshot, whatever the file system's speed). The saving is the stall
    avoided, less the stall that remains on the recommended file system (``fsx``: its run USD,
    tier and size), and less its cost over the plan's."""
    ck = u.checkpoint
    if ck.target != "fsx" or ck.size_gb <= 0 or ck.asynchronous:
        return 0.0, 0.0, 0.0, 0.0
    fsx_usd, tier, gib = fsx
    gb = u.storage.fsx_capacity_gb
    own_gib = gb / lustre_gb_per_gib(catalog, u.provider)
    mbps = fsx_throughput_mbps(catalog, own_gib, u.storage.fsx_tier)
    price = service(catalog, u, "shared_fs", u.storage.fsx_tier)
    own_usd = _fsx_run_usd(catalog, u, u.storage.fsx_tier, gb) if price and price.priced else 0.0
    left = _stall_on(plan, catalog, tier, gib, today)
    saving = (ck.stall_hours - left) * rate - (fsx_usd - own_usd)
    return gb, mbps, ck.stall_hours, max(saving, 0.0)


def _stall_on(plan: Plan, catalog: Catalog, tier: str, gib: float, today: date | None) -> float:
    """Hours the plan's checkpoints stall on a file system of ``gib`` at ``tier``: the plan
    worked out again with that file system (``usage_for``: the one checkpoint-stall rule, the
    write rate capped by the file system's throughput and the nodes' own write speed)."""
    storage = plan.storage.model_copy(update={"fsx_tier": tier, "fsx_capacity_gb": gib})
    variant = plan.model_copy(update={"storage": storage})
    return usage_for(variant, catalog, today=today).checkpoint.stall_hours


def _gp3_setting(
    catalog: Catalog, *, need_iops: float, need_mibps: float, gb: float
) -> tuple[float, float, float]:
    """(IOPS, MiB/s, GB) of a gp3 volume AWS would create that gives ``need_iops`` and
    ``need_mibps``: never below the free baseline, throughput above it backed by 1 IOPS per
    0.25 MiB/s, IOPS above it by 1 GiB per 500 (AWS EBS volume types; the same rules the plan's
    own volume is checked by, ``usage._check_gp3``). Per-volume limits are ``_gp3_stall``'s
    business: beyond them gp3 does not keep up at all. Once "provision 10 IOPS and 1,907 MiB/s"
    was recommended, a volume the plan checker itself refuses."""
    free_iops = float(catalog.value("defaults.storage.ebs_iops"))
    free_mibps = float(catalog.value("defaults.storage.ebs_throughput_mibps"))
    per_gib = float(catalog.value("whatif.gp3_max_iops_per_gib"))
    per_iops = float(catalog.value("whatif.gp3_max_mibps_per_iops"))
    mibps = max(free_mibps, math.ceil(need_mibps))
    iops = max(free_iops, math.ceil(need_iops))
    if mibps > free_mibps:
        iops = max(iops, math.ceil(mibps / per_iops))
    if iops > free_iops:
        gb = max(gb, math.ceil(iops / per_gib))
    return float(iops), float(mibps), float(gb)


def _gp3_load(plan: Plan, catalog: Catalog, u: Usage) -> _Gp3Load:
    """Per-node read rate and IOPS of the data loader, and per-node checkpoint writes."""
    bpt = float(catalog.value("defaults.model.bytes_per_token"))
    seconds = u.compute.hours * 3600.0
    if u.compute.tokens is not None:
        tokens_per_s = u.compute.tokens / seconds
    elif u.data.dataset_gb > 0:
        tokens_per_s = u.data.dataset_gb * 1e9 * u.data.epochs / bpt / seconds
    else:
        tokens_per_s = 0.0
    seq_len = plan.model.seq_len or int(catalog.value("defaults.model.seq_len"))
    io_kib = min(seq_len * bpt / 1024.0, float(catalog.value("whatif.ebs_max_io_kib")))
    read_mibps = tokens_per_s * bpt / u.nodes / _MIB
    ck_gb_node = u.checkpoint.size_gb / u.nodes if u.checkpoint.target == "ebs" else 0.0
    want_write = float(
        plan.checkpoint.write_gbytes_per_s_per_node
        or catalog.value("defaults.checkpoint.write_gbytes_per_s_per_node")
    )
    return _Gp3Load(
        tokens_per_s=tokens_per_s,
        io_kib=io_kib,
        read_mibps=read_mibps,
        read_iops=read_mibps * 1024.0 / io_kib if io_kib > 0 else 0.0,
        ck_gb_node=ck_gb_node,
        want_write=want_write,
        write_mibps=want_write * 1e9 / _MIB if ck_gb_node > 0 else 0.0,
    )


def _gp3_stall(
    u: Usage, load: _Gp3Load, *, max_iops: float, max_mibps: float
) -> tuple[float, bool]:
    """Hours lost to gp3's per-volume limits, and whether gp3 keeps up at all.

    Reads throttled to the limit slow training in proportion; checkpoints are written at the
    cap.
    """
    ebs_fits = load.read_iops <= max_iops and load.read_mibps <= max_mibps
    slow = max(load.read_iops / max_iops, load.read_mibps / max_mibps, 1.0)
    stall_hours = u.compute.hours * (slow - 1.0)
    if load.write_mibps > max_mibps:
        per_ck = load.ck_gb_node * 1e9 / _MIB * (1.0 / max_mibps - 1.0 / load.write_mibps) / 3600.0
        stall_hours += u.checkpoint.count * per_ck
        ebs_fits = False
    return stall_hours, ebs_fits


def _checkpoints_on_shared_fs(u: Usage) -> bool:
    """Whether checkpoints would land on the file system FSx replaces (not S3)."""
    return u.checkpoint.size_gb > 0 and u.checkpoint.target in ("ebs", "fsx")


def _checkpoint_burst_mbps(u: Usage, want_write: float) -> float:
    """MB/s a checkpoint burst needs from shared storage, capped at writing one in a minute."""
    if not _checkpoints_on_shared_fs(u):
        return 0.0
    return min(want_write * u.nodes * 1e3, u.checkpoint.size_gb * 1e3 / 60.0)


def _cheapest_fsx(catalog: Catalog, u: Usage, need_mbps: float) -> tuple[float, str, float]:
    """(run USD, tier, GiB to create) of the cheapest priced Lustre tier that holds and feeds
    the run (the GiB is what ``storage.fsx_capacity_gb`` should say).

    Capacity: the dataset, plus the retained checkpoints only when they would live there too
    (checkpoints bound for S3 neither load nor fill the file system, as for the throughput).
    """
    kept_gb = (
        u.checkpoint.size_gb * u.checkpoint.keep_last
        if u.checkpoint.target in ("ebs", "fsx")
        else 0.0
    )
    gb_per_gib = lustre_gb_per_gib(catalog, u.provider)
    data_gib = (u.data.dataset_gb + kept_gb) / gb_per_gib
    best: tuple[float, str, float] | None = None
    per_tib = float(catalog.value("whatif.fsx_gib_per_tib"))
    for tier, mbps_per_tib in FSX_TIER_MBPS_PER_TIB.items():
        needed = max(data_gib, need_mbps / mbps_per_tib * per_tib, 1.0)
        gib = lustre_size_gib(catalog, u.provider, tier, needed)
        price = service(catalog, u, "shared_fs", tier)
        if price is None or not price.priced:
            continue  # a tier the plan's provider does not sell or the catalog does not price
        cost = _fsx_run_usd(catalog, u, tier, gib * gb_per_gib)
        if best is None or cost < best[0]:
            best = (cost, tier, gib)
    if best is None:
        msg = (
            f"no priced Lustre file system tier for {u.provider} in the catalog: add one with "
            "--catalog"
        )
        raise PriceNotFoundError(msg)
    return best


def _fsx_run_usd(catalog: Catalog, u: Usage, tier: str, gb: float) -> float:
    """A Lustre file system of ``gb`` at ``tier`` for the run, priced by the storage driver
    (``costs.storage``: its GB-month rule, the one place file systems are priced): the driver
    is given the run with that file system and nothing else to store."""
    alone = u.with_values(
        {
            "storage.fsx_capacity_gb": gb,
            "storage.fsx_tier": tier,
            "storage.ebs_gb_per_node": 0.0,
            "data.dataset_gb": 0.0,
        }
    )
    return float(sum(c.cost_usd for c in storage_driver.price(alone, catalog)))


def _storage_notes(u: Usage, ck_mbps: float) -> tuple[str, ...]:
    """Where the read rate came from, what loads gp3, and what else FSx was sized for."""
    notes: list[str] = []
    if u.compute.tokens is None and u.data.dataset_gb > 0:
        notes.append("no model.tokens: read rate from dataset_gb × epochs over the training hours")
    elif u.compute.tokens is None:
        notes.append(
            "no model.tokens or data.dataset_gb: the data loader's read rate is unknown (0)"
        )
    if u.checkpoint.target != "ebs":
        notes.append(
            f"checkpoints go to {u.checkpoint.target}, not EBS: only data-loader reads load the "
            "gp3 volumes"
        )
    if _checkpoints_on_shared_fs(u):
        notes.append(
            f"FSx also sized for checkpoint bursts of {ck_mbps:,.0f} MB/s (capped at writing one "
            "in a minute)"
        )
    return tuple(notes)
