"""Storage sizing: FSx for Lustre (and its Azure/GCP counterparts) capacity and throughput,
EBS gp3 limits, and the storage record.

The same sizing rules serve the usage, the what-ifs and the warnings, so a file system is sized
once whichever of them asks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Any

from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.spec import Plan
from trainbill.usage.records import Storage

if TYPE_CHECKING:
    from trainbill.usage._defaults import _Defaults
    from trainbill.usage.checkpoints import _Writes

#: FSx for Lustre throughput per TiB of storage, by deployment tier: the tier's name *is* its
#: throughput (AWS FSx for Lustre performance documentation; scratch_2 is 200 MB/s/TiB).
FSX_TIER_MBPS_PER_TIB = {
    "scratch_2": 200.0,
    "persistent_125": 125.0,
    "persistent_250": 250.0,
    "persistent_500": 500.0,
    "persistent_1000": 1000.0,
}
_MIB = 1048576.0


def _storage(plan: Plan, d: _Defaults, writes: _Writes, provider: str, on: date) -> Storage:
    """Block storage per node (the plan's, else defaults) and the file system already read."""
    st = plan.storage
    out = Storage(
        ebs_gb_per_node=float(d.get(st.ebs_gb_per_node, "defaults.storage.ebs_gb_per_node")),
        ebs_iops=float(d.get(st.ebs_iops, "defaults.storage.ebs_iops")),
        ebs_throughput_mibps=float(
            d.get(st.ebs_throughput_mibps, "defaults.storage.ebs_throughput_mibps")
        ),
        fsx_capacity_gb=writes.to.fsx_gb,
        fsx_tier=writes.to.fsx_tier,
    )
    if provider == "aws":
        _check_gp3(d.catalog, out, on)
    return out


def gp3_limits(catalog: Catalog, on: date) -> tuple[float, float, str]:
    """gp3's per-volume (IOPS, MiB/s) limits for a volume used on ``on``, and their basis: AWS
    raised them from 16,000 / 1,000 to 80,000 / 2,000 (``whatif.gp3_limits_raised``), so a run
    dated before the raise is held to the old ones (the seed article's gp3 wall was real then).
    """
    raised = date.fromisoformat(str(catalog.value("whatif.gp3_limits_raised")))
    if on < raised:
        iops = float(catalog.value("whatif.gp3_max_iops_before"))
        mibps = float(catalog.value("whatif.gp3_max_throughput_mibps_before"))
        return iops, mibps, f"gp3's limits before AWS raised them on {raised.isoformat()}"
    iops = float(catalog.value("whatif.gp3_max_iops"))
    mibps = float(catalog.value("whatif.gp3_max_throughput_mibps"))
    return iops, mibps, f"gp3's limits since AWS raised them on {raised.isoformat()}"


def _check_gp3(catalog: Catalog, st: Storage, on: date) -> None:
    """A gp3 volume AWS would not create is an error, not a bill: IOPS above the baseline need
    500 per GiB of volume and at most the per-volume limit; throughput above the baseline needs
    0.25 MiB/s per provisioned IOPS and at most the per-volume limit (AWS EBS volume types;
    ``whatif.gp3_*`` in the catalog). Priced as stated, 1,000,000 IOPS on a 10 GB volume billed
    thousands of dollars of IOPS no volume can have."""
    free_iops = float(catalog.value("defaults.storage.ebs_iops"))
    free_mibps = float(catalog.value("defaults.storage.ebs_throughput_mibps"))
    max_iops, max_mibps, when = gp3_limits(catalog, on)
    per_gib = float(catalog.value("whatif.gp3_max_iops_per_gib"))
    per_iops = float(catalog.value("whatif.gp3_max_mibps_per_iops"))
    most_iops = min(max_iops, max(free_iops, per_gib * st.ebs_gb_per_node))
    most_mibps = min(max_mibps, max(free_mibps, per_iops * st.ebs_iops))
    if st.ebs_gb_per_node <= 0 and (
        st.ebs_iops > free_iops or st.ebs_throughput_mibps > free_mibps
    ):
        msg = (
            f"no EBS volume (0 GB) to provision {st.ebs_iops:,.0f} IOPS and "
            f"{st.ebs_throughput_mibps:,.0f} MiB/s on; give the volume's size, or leave IOPS "
            f"and throughput at gp3's {free_iops:,.0f} / {free_mibps:,.0f} baseline"
        )
        raise SpecError(msg, field="storage.ebs_gb_per_node")
    checks = (
        (
            "storage.ebs_iops",
            st.ebs_iops > most_iops,
            (
                f"{st.ebs_iops:,.0f} IOPS on a {st.ebs_gb_per_node:,.0f} GB gp3 volume: gp3 allows "
                f"{free_iops:,.0f} to {most_iops:,.0f} here ({per_gib:,.0f} IOPS per GiB, at most "
                f"{max_iops:,.0f} per volume, {when}; AWS EBS volume types)"
            ),
        ),
        (
            "storage.ebs_throughput_mibps",
            st.ebs_throughput_mibps > most_mibps,
            (
                f"{st.ebs_throughput_mibps:,.0f} MiB/s on a gp3 volume with "
                f"{st.ebs_iops:,.0f} IOPS: gp3 allows {free_mibps:,.0f} to {most_mibps:,.0f} here "
                f"({per_iops:g} MiB/s per provisioned IOPS, at most {max_mibps:,.0f} per volume, "
                f"{when}; "
                "raise storage.ebs_iops for more)"
            ),
        ),
    )
    for name, beyond, msg in checks:
        if beyond:
            raise SpecError(msg, field=name)


def lustre_size_gib(catalog: Catalog, provider: str, tier: str, gib: float) -> float:
    """The Lustre file system ``provider`` creates when asked for ``gib`` GiB in ``tier``: 0 for
    none, else the smallest size it offers that holds the request, billed whole.

    Each cloud has its own sizes (``whatif.lustre_sizes_<provider>``, per tier: minimum, step,
    and the size above which a larger step applies): FSx for Lustre 1,200 GiB, 2,400 or a
    multiple of 2,400; Google Cloud Managed Lustre 9,000 GiB and multiples at 1000 MBps per TiB
    (18,000 / 36,000 / 72,000 for the slower tiers); Azure Managed Lustre 4, 8 or 16 TiB steps.
    So a 3,000 GiB request pays for 4,800 GiB on AWS and for 9,000 on Google Cloud. A tier a
    provider's table lacks keeps the stated size (its price is then the catalog's to answer)."""
    if gib <= 0:
        return 0.0
    rule = _lustre_rule(catalog, provider, tier)
    if rule is None:
        return gib
    minimum, step, threshold, large_step = rule
    size = minimum if gib <= minimum else math.ceil(gib / step - 1e-12) * step
    if threshold > 0 and size > threshold:
        size = math.ceil(gib / large_step - 1e-12) * large_step
    return float(size)


def lustre_gb_per_gib(catalog: Catalog, provider: str) -> float:
    """GB priced per GiB of Lustre capacity: AWS bills the GiB capacity as "GB-month" (1); the
    catalog's Google and Azure rates are per decimal GB, converted from per-GiB list prices."""
    table = _lustre_table(catalog, provider)
    return 1.0 if table is None else float(table["gb_per_gib"])


def _lustre_rule(
    catalog: Catalog, provider: str, tier: str
) -> tuple[float, float, float, float] | None:
    table = _lustre_table(catalog, provider)
    rule = None if table is None else table["tiers"].get(tier)
    if rule is None:
        return None
    minimum, step, threshold, large_step = (float(x) for x in rule)
    return minimum, step, threshold, large_step


def _lustre_table(catalog: Catalog, provider: str) -> Mapping[str, Any] | None:
    """``whatif.lustre_sizes_<provider>``, or None for a provider without one."""
    return catalog.table(f"whatif.lustre_sizes_{provider}")


def fsx_throughput_mbps(catalog: Catalog, gb: float, tier: str) -> float:
    """MB/s an FSx for Lustre file system of ``gb`` GiB serves: AWS's 'TiB' of the per-unit
    throughput is 1,000 of its GiB (``whatif.fsx_gib_per_tib``)."""
    return gb / float(catalog.value("whatif.fsx_gib_per_tib")) * FSX_TIER_MBPS_PER_TIB[tier]


def _lustre_product(catalog: Catalog, provider: str) -> str:
    spec = catalog.value(f"services.{provider}.shared_fs")
    assert isinstance(spec, Mapping)
    return str(spec["product"])
