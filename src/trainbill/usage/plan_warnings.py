"""The warnings ``resolve_job`` and ``usage_for`` attach to a usage: what the user should
know about how the plan was read (GPU namesakes, rounding to nodes, TPU slices, stale dates,
ignored inputs, Lustre and checkpoint sizes that cannot fit).

Each builder returns a tuple of lines and decides nothing about the quantities: the forecast
shows them as cautions.
"""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import TYPE_CHECKING

from trainbill.catalog import Catalog, Instance
from trainbill.errors import SpecError
from trainbill.spec import Plan
from trainbill.usage._defaults import _DAYS_PER_YEAR
from trainbill.usage.cluster import tpu_slice_sizes
from trainbill.usage.storage import _lustre_product, lustre_size_gib

if TYPE_CHECKING:
    from trainbill.usage.records import Checkpoint, Data, Storage
#: A run dated this many days after its price date is priced at stale prices: warn.
_RUN_AFTER_PRICES_DAYS = 365


def _gpu_name_warnings(plan: Plan, catalog: Catalog) -> tuple[str, ...]:
    """A GPU named by a family (``a100``) is priced as one part of it: say which, and what
    else the name covers, since memory, bandwidth and the instance's price differ."""
    gpu = plan.cluster.gpu
    others = () if gpu is None else catalog.accelerator_namesakes(gpu)
    if gpu is None or not others:
        return ()
    acc = catalog.accelerator(gpu)
    note = (
        f"cluster.gpu {gpu!r} read as {acc.id} ({acc.name}); give {' or '.join(others)} to "
        "price the other part by that name"
    )
    return (note,)


def _cluster_warnings(plan: Plan, inst: Instance, nodes: int) -> tuple[str, ...]:
    """Whole nodes are billed: a GPU count that is not a multiple of the node size rounds up.

    A plan giving both ``nodes`` and ``gpus`` that disagree is an error: which one was meant?
    """
    asked = plan.cluster.gpus
    got = nodes * inst.accelerator_count
    if plan.cluster.nodes is not None and asked is not None and asked != got:
        msg = (
            f"{asked} GPUs, but cluster.nodes = {nodes} × {inst.instance} "
            f"({inst.accelerator_count} per node) hold {got}; give nodes or gpus, or make them "
            "agree"
        )
        raise SpecError(msg, field="cluster.gpus")
    if plan.cluster.nodes is None and asked is not None and asked != got:
        msg = (
            f"cluster.gpus = {asked}, but {inst.instance} holds {inst.accelerator_count} per "
            f"node: priced {nodes} node{'s' if nodes != 1 else ''} = {got} GPUs (clouds bill "
            "whole instances)"
        )
        return (msg, *_spot_share_warnings(plan, nodes))
    return _spot_share_warnings(plan, nodes)


def _spot_share_warnings(plan: Plan, nodes: int) -> tuple[str, ...]:
    """A spot share that is not a whole number of nodes is priced as the share (an expected mix,
    as the simulation and the planner need it), but a cluster buys whole nodes: say so."""
    share = plan.purchase.spot_fraction
    spot_nodes = share * nodes
    if abs(spot_nodes - round(spot_nodes)) < 1e-9:
        return ()
    lo, hi = math.floor(spot_nodes), math.ceil(spot_nodes)
    note = (
        f"purchase.spot_fraction = {share:g} of {nodes} node{'s' if nodes != 1 else ''} is "
        f"{spot_nodes:.3g} spot nodes: clouds bill whole instances, so the bill is a {share:g} "
        f"mix, not a cluster you can launch; {lo} or {hi} spot nodes is a spot_fraction of "
        f"{lo / nodes:.4g} or {hi / nodes:.4g}"
    )
    return (note,)


def _slice_warnings(catalog: Catalog, inst: Instance, nodes: int) -> tuple[str, ...]:
    """A TPU cluster of a chip count Google does not sell is priced as asked, with a warning
    naming the sold sizes on either side."""
    sizes = tpu_slice_sizes(catalog, inst, max(nodes, 1) * 2 + 1)
    if sizes is None or nodes in sizes:
        return ()
    below = max((c for c in sizes if c < nodes), default=None)
    above = min((c for c in sizes if c > nodes), default=None)
    near = " or ".join(f"{c:,}" for c in (below, above) if c is not None)
    a = catalog.assumption("defaults.cluster.tpu_slice_chips")
    note = (
        f"{nodes:,} {inst.accelerator} chips is not a slice size Google Cloud sells (single "
        f"slices {', '.join(str(c) for c in a.value[inst.accelerator])} chips, then Multislice "
        f"in whole multiples of the largest; {a.source.split(';')[0]}): the bill is of a "
        f"cluster that cannot be created; the nearest sold sizes are {near} chips"
    )
    return (note,)


def _date_warnings(catalog: Catalog, as_of: date, run_date: date, today: date) -> tuple[str, ...]:
    """Dates a careless plan gets wrong: a run long after its prices, or prices past anything the
    catalog knows.

    A price date before the instance was sold is the catalog's error (``Catalog.price`` knows the
    launch date); a run date before the accelerator existed is the time model's warning (it knows
    the maturity it then assumes).
    """
    out = []
    if (run_date - as_of).days > _RUN_AFTER_PRICES_DAYS:
        years = (run_date - as_of).days / _DAYS_PER_YEAR
        out.append(
            f"run.date {run_date.isoformat()} is {years:.1f} years after prices.as_of "
            f"{as_of.isoformat()}: the run is priced at prices older than it; set prices.as_of "
            "(--as-of) nearer the run date"
        )
    beyond = beyond_price_data(catalog, as_of, today)
    if beyond is not None:
        out.append(f"prices.as_of {beyond}")
    return tuple(out)


def beyond_price_data(catalog: Catalog, as_of: date, today: date) -> str | None:
    """Why a price date past the catalog's snapshot and today is priced at the newest points
    (every command pricing at a date says it: the forecast, the commitment advisor), or None."""
    if as_of <= max(catalog.snapshot, today):
        return None
    return (
        f"{as_of.isoformat()} is beyond the price data (catalog snapshot "
        f"{catalog.snapshot.isoformat()}, today {today.isoformat()}): no price after it is "
        "known, so the newest price points are carried forward"
    )


def _spot_before_cut_warnings(
    catalog: Catalog, inst: Instance, provider: str, region: str, as_of: date, spot: float
) -> tuple[str, ...]:
    """A plan dated after an on-demand price cut whose spot price point is from before the cut:
    spot prices follow the on-demand price they are a discount from, so a pre-cut spot rate
    set against a post-cut on-demand rate makes spot look worse (or better) than it was, and
    the forecast says both dates rather than blend two eras silently."""
    if spot <= 0:
        return ()
    item = inst.instance
    od = catalog.find_price(item, "on_demand", provider=provider, region=region, as_of=as_of)
    sp = catalog.find_price(item, "spot", provider=provider, region=region, as_of=as_of)
    if od is None or sp is None or sp.effective_from >= od.effective_from:
        return ()
    before = catalog.find_price(
        item, "on_demand", provider=provider, region=region,
        as_of=od.effective_from - timedelta(days=1),
    )  # fmt: skip
    if before is None or before.usd <= od.usd:
        return ()
    note = (
        f"the {item} spot price (${sp.usd:,.4g}/h) is dated {sp.effective_from.isoformat()}, "
        f"before the on-demand price cut of {od.effective_from.isoformat()} (${before.usd:,.4g} → "
        f"${od.usd:,.4g}/h) that the plan's date {as_of.isoformat()} is priced after: spot is "
        "priced from before the cut; add a spot price point after the cut (--catalog DIR or "
        "'trainbill prices update')"
    )
    return (note,)


def _data_read_warnings(plan: Plan, catalog: Catalog) -> tuple[str, ...]:
    """The data a plan reads (dataset × epochs) against what its tokens take at the catalog's
    bytes per token: two figures of the same thing, so a gap beyond
    ``defaults.model.read_mismatch_factor`` is a wrong field, and the forecast says so rather
    than price data reads that do not match the training it prices."""
    gb, tokens = plan.data.dataset_gb, plan.model.tokens
    if gb is None or tokens is None or gb <= 0 or tokens <= 0:
        return ()
    epochs = float(
        plan.data.epochs if plan.data.epochs is not None else catalog.value("defaults.data.epochs")
    )
    bpt = float(catalog.value("defaults.model.bytes_per_token"))
    expected = tokens * bpt / 1e9
    read = gb * epochs
    factor = float(catalog.value("defaults.model.read_mismatch_factor"))
    if expected / factor <= read <= expected * factor:
        return ()
    note = (
        f"the data read (data.dataset_gb {gb:,.0f} GB × {epochs:g} epochs = {read:,.0f} GB) does "
        f"not match the tokens trained (model.tokens {tokens:.3g} × {bpt:g} bytes per token = "
        f"{expected:,.0f} GB): {max(read, expected) / min(read, expected):.1f}× apart, beyond "
        f"{factor:g}× (defaults.model.read_mismatch_factor); data lines price {read:,.0f} GB: "
        "check data.dataset_gb, data.epochs and model.tokens"
    )
    return (note,)


def _ignored_input_warnings(plan: Plan) -> tuple[str, ...]:
    """Stated inputs that another stated input makes moot: each is said, since a user who
    wrote one expects it to change the bill and it does not."""
    p, st, net = plan.purchase, plan.storage, plan.network
    out: list[str] = []
    if (p.savings_plan_coverage or 0) > 0 and p.savings_plan in (None, "none"):
        out.append(
            f"purchase.savings_plan_coverage = {p.savings_plan_coverage:g} has no effect without "
            "purchase.savings_plan (1yr or 3yr)"
        )
    if p.savings_plan not in (None, "none") and p.spot_fraction >= 1:
        out.append(
            f"purchase.savings_plan = {p.savings_plan} with every node on spot: a Savings Plan "
            "covers on-demand hours only, so it covers nothing here"
            + (
                ", and a term bought for the run is charged in full"
                if p.commitment != "existing"
                else ""
            )
        )
    if st.fsx_tier is not None and not st.fsx_capacity_gb:
        out.append(
            f"storage.fsx_tier = {st.fsx_tier} has no effect without storage.fsx_capacity_gb"
        )
    ck = plan.checkpoint
    if ck.retention_days and ck.target not in (None, "s3"):
        out.append(
            f"checkpoint.retention_days = {ck.retention_days:g} is not priced for checkpoints "
            f"on {ck.target}: only S3 keeps them after the run in this forecast (the file system "
            "or volume is billed for the run's length)"
        )
    if net.s3_via_nat and net.nat_gateways == 0:
        out.append(
            "network.s3_via_nat = true with network.nat_gateways = 0: there is no gateway to "
            "route object-storage traffic through, so none is billed as NAT processing"
        )
    return tuple(out)


def _checkpoint_size_warnings(plan: Plan) -> tuple[str, ...]:
    """Without the model's size or a stated checkpoint size nothing about checkpoints can be
    priced (stall, storage, requests); a $0 there must be said, not left to look like free."""
    if plan.checkpoint.size_gb is not None or plan.model.params is not None:
        return ()
    note = (
        "no checkpoint size: checkpoint writes, their storage and requests are not priced ($0); "
        "give model.params (14 bytes per parameter) or checkpoint.size_gb"
    )
    return (note,)


def _fsx_size_warnings(plan: Plan, catalog: Catalog, provider: str) -> tuple[str, ...]:
    """A stated Lustre size the provider does not create is priced at the size it would create,
    and said (the plan's size is what one would type in the console, in GiB)."""
    gib = plan.storage.fsx_capacity_gb
    if gib is None or gib <= 0:
        return ()
    tier = str(plan.storage.fsx_tier or catalog.value("defaults.storage.fsx_tier"))
    made = lustre_size_gib(catalog, provider, tier, gib)
    if made == gib:
        return ()
    product = _lustre_product(catalog, provider)
    note = (
        f"storage.fsx_capacity_gb = {gib:,.0f} is not a size {product} creates in the {tier} "
        f"tier: priced as the {made:,.0f} GiB file system it would create"
    )
    return (note,)


def _checkpoint_fit_warnings(
    ck: Checkpoint, st: Storage, data: Data, hosts: int
) -> tuple[str, ...]:
    """Checkpoints kept on the file system (and the dataset, when it is read from there), or
    each host's shards of them on its EBS volume, that do not fit there: the bill prices the
    storage as sized, but that run cannot keep them. Said, not refused: a team may prune or
    copy checkpoints out as it goes."""
    if ck.target == "ebs" and ck.size_gb > 0 and hosts > 0:
        shard = ck.size_gb * ck.keep_last / hosts
        if shard <= st.ebs_gb_per_node:
            return ()
        note = (
            f"checkpoint.keep_last = {ck.keep_last} checkpoints of {ck.size_gb:,.0f} GB put "
            f"{shard:,.0f} GB of shards on each of the {hosts} nodes' EBS volumes, which hold "
            f"{st.ebs_gb_per_node:,.0f} GB (storage.ebs_gb_per_node) as the bill prices them: "
            f"give each at least {shard:,.0f} GB (plus the system), keep fewer checkpoints, or "
            "write them to s3"
        )
        return (note,)
    if ck.target != "fsx" or ck.size_gb <= 0:
        # A dataset read from the file system still has to fit on it.
        if data.source == "fsx" and 0 < st.fsx_capacity_gb < data.dataset_gb:
            note = (
                f"the {data.dataset_gb:,.0f} GB dataset does not fit on the "
                f"{st.fsx_capacity_gb:,.0f} GB FSx file system the bill prices "
                f"(storage.fsx_capacity_gb): give it at least {data.dataset_gb:,.0f} GB"
            )
            return (note,)
        return ()
    if st.fsx_capacity_gb <= 0:
        return ()
    kept = ck.size_gb * ck.keep_last
    on_it = data.dataset_gb if data.source == "fsx" else 0.0
    if kept + on_it <= st.fsx_capacity_gb:
        return ()
    dataset = f" and the {on_it:,.0f} GB dataset" if on_it else ""
    note = (
        f"checkpoint.keep_last = {ck.keep_last} checkpoints of {ck.size_gb:,.0f} GB "
        f"({kept:,.0f} GB){dataset} do not fit on the {st.fsx_capacity_gb:,.0f} GB FSx file "
        "system the bill prices (storage.fsx_capacity_gb): give it at least "
        f"{kept + on_it:,.0f} GB, keep fewer checkpoints, or write them to s3"
    )
    return (note,)
