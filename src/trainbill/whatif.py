"""The seed article's what-ifs, answered with the forecast's own numbers.

* ``compare_orchestrators``: the same job on raw EC2, SageMaker HyperPod and EKS (+ Karpenter):
  each is a full forecast with only the orchestrator swapped, so the premium, the control plane
  and the restart time (which scales every failure's and reclaim's lost hours) all move together.
* ``storage_check``: can per-node gp3 volumes feed the data loader and absorb checkpoints, and if
  not, which FSx for Lustre file system would, at what price, and what the stall costs otherwise.
* ``sparse_attention``: how much of the FLOPs attention is at each sequence length, what removing a
  share of it saves, and whether the article's "38% faster above 8K tokens" is possible at all.
* ``rule_of_thumb``: the article's ``instances × rate × hours × 1.3–1.5 × 1.1`` next to the
  itemized bill, with the gap explained category by category.

Pure functions of a plan and a catalog; every figure comes from the catalog's ``[whatif]`` and
other assumptions, cited in the results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.costs import storage as storage_driver
from trainbill.costs._pricing import cluster_rate, service
from trainbill.errors import PriceNotFoundError, SpecError
from trainbill.forecast import Forecast, forecast, quote_of
from trainbill.ledger import CATEGORIES
from trainbill.spec import Plan, WhatIf
from trainbill.timemodel import executed_flops, training_flops
from trainbill.usage import (
    FSX_TIER_MBPS_PER_TIB,
    Usage,
    fsx_throughput_mbps,
    gp3_limits,
    hyperpod_spot_note,
    hyperpod_unpriced,
    lustre_gb_per_gib,
    lustre_size_gib,
    sagemaker_price,
    usage_for,
)

__all__ = [
    "ORCHESTRATORS",
    "OrchestratorRow",
    "RuleOfThumb",
    "SparseRow",
    "SparsityReport",
    "StorageReport",
    "apply_attention_sparsity",
    "attention_share",
    "attention_time_share",
    "cheapest_priced",
    "compare_orchestrators",
    "rule_of_thumb",
    "sparse_attention",
    "storage_check",
    "with_orchestrator",
]

ORCHESTRATORS = ("ec2", "hyperpod", "eks")
_LABELS = {"ec2": "Raw EC2", "hyperpod": "SageMaker HyperPod", "eks": "EKS + Karpenter"}
_MIB = 1048576.0


# --- orchestrators ---------------------------------------------------------------------------
@record
class OrchestratorRow:
    """One orchestrator's forecast of the same job."""

    orchestrator: str
    label: str
    forecast: Forecast
    orchestration_usd: float
    restart_hours: float
    disruption_usd: float
    setup_time: str
    failure_risk: str
    article_cost_100h_usd: float
    #: Charges of this orchestrator the catalog cannot price (HyperPod's ml.* premium, a
    #: HyperPod Spot rate; ``usage.hyperpod_unpriced``): the total is then a lower bound.
    unpriced: tuple[str, ...] = ()
    #: How the provider bills this orchestrator's time (``orchestration.billing_<o>``): the
    #: ledger bills the exact wall-clock, which is what per-second billing charges.
    billing: str = ""
    #: False when the managed-service premium itself (HyperPod's ml.* rate) could not be priced
    #: (``usage.sagemaker_price`` is None): the orchestration figure is then a gap, said on the
    #: row, never shown as a $0 price.
    premium_priced: bool = True
    #: What this orchestrator changed in the plan as bought (``usage.hyperpod_spot_note``: no
    #: Spot on HyperPod before HyperPod offered it), said beside the row.
    notes: tuple[str, ...] = ()

    @property
    def total_usd(self) -> float:
        """The real bill under this orchestrator."""
        return self.forecast.total_usd

    @property
    def per_100h_usd(self) -> float:
        """The real bill per 100 wall-clock hours of this run: the article's "cost per 100 h"
        column worked out from the forecast (total ÷ wall hours × 100) instead of copied."""
        return self.forecast.total_usd / self.forecast.usage.wall_hours * 100.0


def cheapest_priced(rows: Sequence[OrchestratorRow]) -> OrchestratorRow | None:
    """The cheapest orchestrator whose bill is whole: a row missing a charge (``unpriced``)
    would win by what it leaves out. None when every row misses one."""
    priced = [r for r in rows if not r.unpriced]
    return min(priced, key=lambda r: r.total_usd) if priced else None


def with_orchestrator(plan: Plan, orchestrator: str) -> Plan:
    """The plan with its orchestrator swapped and its restart time left to that orchestrator.

    A plan's own ``reliability.restart_hours`` describes its own orchestrator, so it is cleared:
    otherwise every row would share one restart time and the comparison would be moot.
    """
    cluster = plan.cluster.model_copy(update={"orchestrator": orchestrator})
    rel = plan.reliability.model_copy(update={"restart_hours": None})
    return plan.model_copy(update={"cluster": cluster, "reliability": rel})


def compare_orchestrators(
    plan: Plan, catalog: Catalog, *, today: date | None = None
) -> list[OrchestratorRow]:
    """Forecast the plan on each orchestrator (rows in ``ORCHESTRATORS`` order).

    The article's comparison is of AWS services (raw EC2, SageMaker HyperPod, EKS); a GCP or
    Azure plan has no such choice, so it is an error rather than AWS fees on another cloud.
    """
    if plan.cluster.provider != "aws":
        msg = (
            f"compare-orchestrators compares AWS orchestrators ({', '.join(ORCHESTRATORS)}); "
            f"this plan's provider is {plan.cluster.provider}, which offers only self-managed VMs"
        )
        raise SpecError(msg, field="cluster.provider")
    rows = []
    for o in ORCHESTRATORS:
        fc = forecast(with_orchestrator(plan, o), catalog, today=today)
        cats = fc.ledger.by_category()
        u = fc.usage
        spot = float(u.purchase.spot_fraction)
        gaps = hyperpod_unpriced(catalog, u.instance, o, spot, u.provider, u.region, u.as_of)
        rows.append(
            OrchestratorRow(
                orchestrator=o,
                label=_LABELS[o],
                forecast=fc,
                orchestration_usd=cats["orchestration"],
                restart_hours=fc.usage.reliability.restart_hours,
                disruption_usd=cats["failures"] + cats["spot_reclaim"],
                setup_time=str(catalog.value(f"whatif.setup_time_{o}")),
                failure_risk=str(catalog.value(f"whatif.failure_risk_{o}")),
                article_cost_100h_usd=float(catalog.value(f"whatif.article_cost_100h_{o}")),
                unpriced=gaps,
                notes=hyperpod_spot_note(catalog, o, plan.purchase.spot_fraction, u.run_date),
                billing=str(catalog.value(f"orchestration.billing_{o}")),
                premium_priced=o != "hyperpod"
                or sagemaker_price(
                    catalog,
                    u.instance.instance,
                    provider=u.provider,
                    region=u.region,
                    as_of=u.as_of,
                )
                is not None,
            )
        )
    return rows


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


# --- sparse attention ------------------------------------------------------------------------
def attention_share(*, active_params: float, layers: int, d_model: int, seq_len: int) -> float:
    """Attention's share of training FLOPs: 12·L·d·s / (6·N + 12·L·d·s), via ``training_flops``."""
    total = training_flops(
        active_params=active_params, tokens=1.0, layers=layers, d_model=d_model, seq_len=seq_len
    )
    dense = training_flops(active_params=active_params, tokens=1.0)
    return (total - dense) / total


def attention_time_share(
    catalog: Catalog, *, active_params: float, layers: int, d_model: int, seq_len: int
) -> float:
    """Attention's share of the training *time*: of the FLOPs the kernels execute
    (``timemodel.executed_flops``: a fused causal kernel runs half the counted score work), so
    smaller than its share of the counted FLOPs."""
    total = executed_flops(catalog, active_params=active_params, tokens=1.0, layers=layers,
                           d_model=d_model, seq_len=seq_len)  # fmt: skip
    return (total - training_flops(active_params=active_params, tokens=1.0)) / total


@record
class SparseRow:
    """Attention's shares and the savings at one sequence length: of the counted FLOPs (what
    MFU is quoted in) and of the time (what the hours and the bill follow)."""

    seq_len: int
    attention_share: float
    flops_saving: float
    time_share: float
    time_saving: float


@record
class SparsityReport:
    """Savings against sequence length and whether the article's claim can hold."""

    sparsity: float
    rows: tuple[SparseRow, ...]
    plan_seq_len: int
    plan_saving: float
    hours_before: float
    hours_after: float
    usd_before: float
    usd_after: float
    claimed_saving: float
    claimed_min_seq_len: int
    min_seq_len_for_claim: int | None
    claim_possible_at_plan: bool
    notes: tuple[str, ...]


def _min_seq_for(
    target: float, sparsity: float, active: float, layers: int, d_model: int, causal: float
) -> int | None:
    """Smallest s with time_share(s)·S ≥ target, the attention work timed at ``causal`` of its
    count: s = target·6N / ((S − target)·causal·12·L·d); None if S ≤ target."""
    if sparsity <= target:
        return None
    work = causal * 12.0 * layers * d_model
    return math.ceil(target * 6.0 * active / ((sparsity - target) * work))


def sparse_attention(
    plan: Plan,
    catalog: Catalog,
    *,
    sparsity: float,
    seq_lens: Sequence[int] = (2048, 4096, 8192, 16384, 32768, 65536, 131072),
    today: date | None = None,
    source: str | None = None,
) -> SparsityReport:
    """Remove ``sparsity`` of attention FLOPs; savings vs sequence length and the article's claim.

    The hours fall by ``sparsity`` of attention's share of the executed work, timed as the time
    model times it (``timemodel.executed_flops``: a causal kernel already skips half the score
    matrix, so sparsity removes a share of the other half), at the model's average speed, which
    is generous to sparse kernels: the article itself reports numerical and engineering trouble.
    """
    if not 0.0 <= sparsity <= 1.0:
        msg = f"must be between 0 and 1 (got {sparsity})"
        raise SpecError(msg, source="command line", field="--attention-sparsity")
    m = plan.model
    active = m.active_params or m.params
    if active is None or m.layers is None or m.d_model is None:
        msg = "the sparse-attention what-if needs model.params, model.layers and model.d_model"
        raise SpecError(msg, source=source, field="model")
    seq = m.seq_len or int(catalog.value("defaults.model.seq_len"))
    rows = _sparse_rows(catalog, active, m.layers, m.d_model, sparsity, sorted({*seq_lens, seq}))
    row = next(r for r in rows if r.seq_len == seq)
    before = forecast(plan, catalog, today=today)
    after = forecast(_with_sparsity(plan, row, note=""), catalog, today=today)
    claimed = float(catalog.value("whatif.sparse_claimed_speedup"))
    claimed_seq = int(catalog.value("whatif.sparse_claimed_min_seq_len"))
    causal = float(catalog.value("time.causal_attention_work_share"))
    return SparsityReport(
        sparsity=sparsity,
        rows=rows,
        plan_seq_len=seq,
        plan_saving=row.time_saving,
        hours_before=before.usage.compute.hours,
        hours_after=after.usage.compute.hours,
        usd_before=before.total_usd,
        usd_after=after.total_usd,
        claimed_saving=claimed,
        claimed_min_seq_len=claimed_seq,
        min_seq_len_for_claim=_min_seq_for(claimed, sparsity, active, m.layers, m.d_model, causal),
        claim_possible_at_plan=row.time_saving >= claimed,
        notes=_sparse_notes(claimed, claimed_seq),
    )


def _sparse_rows(
    catalog: Catalog,
    active: float,
    layers: int,
    d_model: int,
    sparsity: float,
    seq_lens: Sequence[int],
) -> tuple[SparseRow, ...]:
    """Attention's shares of the FLOPs and of the time, and what ``sparsity`` of it saves, per
    sequence length."""
    rows = []
    for s in seq_lens:
        a = attention_share(active_params=active, layers=layers, d_model=d_model, seq_len=s)
        t = attention_time_share(
            catalog, active_params=active, layers=layers, d_model=d_model, seq_len=s
        )
        rows.append(SparseRow(seq_len=s, attention_share=a, flops_saving=a * sparsity,
                              time_share=t, time_saving=t * sparsity))  # fmt: skip
    return tuple(rows)


def _sparse_notes(claimed: float, claimed_seq: int) -> tuple[str, ...]:
    """The time assumption, and what the article's claim needs."""
    return (
        (
            "time assumed proportional to the executed FLOPs (attention at the model's average "
            "MFU; a causal kernel runs half its counted score work)"
        ),
        (
            f"the article's claim: {claimed:.0%} less training time for sequences over "
            f"{claimed_seq:,} tokens; needs attention > {claimed:.0%} of the time even at 100% "
            "sparsity"
        ),
    )


# --- rule of thumb ---------------------------------------------------------------------------
@record
class RuleOfThumb:
    """The article's formula next to the itemized bill, and the gap by category."""

    base_usd: float
    base_basis: str
    utilization_low: float
    utilization_high: float
    risk: float
    low_usd: float
    high_usd: float
    itemized_usd: float
    #: (category, itemized $, what the category adds beyond the rule's base); sums to itemized −
    #: base.
    by_category: tuple[tuple[str, float, float], ...]
    #: The forecast's P90 budget (``headline.budget``), when known: the rule's uplift is a
    #: budget, so it is judged against the budget too, not only the expected bill.
    budget_usd: float | None = None

    @property
    def mid_usd(self) -> float:
        """Midpoint of the rule's range."""
        return (self.low_usd + self.high_usd) / 2.0

    def _where(self, usd: float) -> str:
        if usd < self.low_usd:
            return "below"
        return "above" if usd > self.high_usd else "inside"

    @property
    def verdict(self) -> str:
        """Where the itemized bill, and the P90 budget when known, fall against the rule's range.

        The expected bill alone once made "the rule over-budgets this plan" the verdict on a
        plan whose own P90 budget was far above the rule's range."""
        expected = self._where(self.itemized_usd)
        if self.budget_usd is None:
            return {
                "below": "below the rule's range: the rule over-budgets this plan",
                "above": "above the rule's range: the rule under-budgets this plan",
                "inside": "inside the rule's range",
            }[expected]
        p90 = self._where(self.budget_usd)
        said = f"the expected bill is {expected} the rule's range, the P90 budget {p90} it"
        if p90 == "below":
            return f"{said}: the rule over-budgets this plan"
        if expected == "above":
            return f"{said}: the rule under-budgets this plan"
        if p90 == "above":
            return f"{said}: the rule covers the expected bill, not a 1-in-10 overrun"
        return f"{said}: the rule covers the P90 budget"


def rule_of_thumb(fc: Forecast, catalog: Catalog, budget_usd: float | None = None) -> RuleOfThumb:
    """``instances × on-demand rate × planned hours × utilization (1.3–1.5) × risk (1.1 if spot)``.

    The rule multiplies one base; the itemized bill adds categories. The gap is explained as:
    compute minus the base (negative when spot or a Savings Plan makes compute cheaper than list),
    plus every other category in full, minus the rule's uplift ``base × (factor − 1)``.
    """
    u = fc.usage
    quote = quote_of(u, catalog)  # the rule's base is the forecast's quote
    base = quote.usd
    lo = float(catalog.value("whatif.rule_utilization_low"))
    hi = float(catalog.value("whatif.rule_utilization_high"))
    risk = float(catalog.value("whatif.rule_risk_spot")) if u.purchase.spot_fraction > 0 else 1.0
    cats = fc.ledger.by_category()
    rows = []
    for c in CATEGORIES:
        amount = cats.get(c, 0.0)
        beyond = amount - base if c == "compute" else amount
        rows.append((c, amount, beyond))
    return RuleOfThumb(
        base_usd=base,
        base_basis=f"{u.nodes} × ${quote.rate_usd:,.2f}/h × {u.compute.hours:,.2f} h",
        utilization_low=lo,
        utilization_high=hi,
        risk=risk,
        low_usd=base * lo * risk,
        high_usd=base * hi * risk,
        itemized_usd=fc.total_usd,
        by_category=tuple(rows),
        budget_usd=budget_usd,
    )


def apply_attention_sparsity(
    plan: Plan,
    catalog: Catalog,
    sparsity: float,
    *,
    today: date | None = None,
    source: str | None = None,
) -> tuple[Plan, str]:
    """The plan with its pure-training hours cut by the sparse-attention saving, and a note why.

    The saving is worked out at the plan's sequence length (``sparse_attention``) and carried in
    ``plan.whatif`` (``WhatIf``): the forecast cuts the time model's hours by it, so they stay
    modelled hours with their error band (a measured-MFU calibration still sets them before the
    cut), MFU is on the FLOPs performed, and the note becomes a forecast warning.
    """
    rep = sparse_attention(
        plan, catalog, sparsity=sparsity, seq_lens=(), today=today, source=source
    )
    # The attention shares themselves, not saving / sparsity (undefined at sparsity 0).
    row = next(r for r in rep.rows if r.seq_len == rep.plan_seq_len)
    note = (
        f"attention sparsity {sparsity:.0%} at seq len {rep.plan_seq_len:,}: attention is "
        f"{row.attention_share:.1%} of FLOPs and {row.time_share:.1%} of the time (a causal "
        f"kernel skips half its score work), so the pure-training hours fall "
        f"by {rep.plan_saving:.1%}; MFU is on the FLOPs performed"
    )
    return _with_sparsity(plan, row, note=note), note


def _with_sparsity(plan: Plan, row: SparseRow, *, note: str) -> Plan:
    """``plan`` with the saving of ``row`` added to its what-if (``note``: its warning, or "" for
    the report's own before/after comparison, which needs none)."""
    earlier = plan.whatif
    applied = WhatIf(
        # Applied twice, the second cut is of the time and FLOPs the first left.
        time_saving=1.0 - (1.0 - earlier.time_saving) * (1.0 - row.time_saving),
        flops_saving=1.0 - (1.0 - earlier.flops_saving) * (1.0 - row.flops_saving),
        notes=(*earlier.notes, note) if note else earlier.notes,
    )
    return plan.with_whatif(applied)
