"""``usage_for`` composes one record per aspect of the run; each quantity is checked by hand.

The plan states every input the arithmetic needs (hours, checkpoint size and write rate,
failure and reclaim rates, restart, evaluation cadence), so no catalog figure enters the
expected values: a change of the packaged assumptions cannot move them.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace
from datetime import date
from typing import Any

import numpy as np
import pytest

from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, lustre_gb_per_gib, lustre_size_gib, resolve_job, usage_for

TODAY = date(2025, 6, 1)


def _plan(nodes: int = 4) -> dict[str, Any]:
    return {
        "run": {"name": "tiny", "hours": 10},
        "cluster": {"instance": "p5.48xlarge", "nodes": nodes},  # 8 GPUs per node
        "prices": {"as_of": "2025-05-01"},
        "purchase": {"spot_fraction": 0.5},
        "checkpoint": {
            "size_gb": 100,
            "interval_hours": 2,
            "write_gbytes_per_s_per_node": 5,
            "asynchronous": False,
            "target": "s3",
        },
        "reliability": {
            "gpu_failure_rate_per_gpu_day": 0.024,
            "spot_reclaim_rate_per_node_hour": 0.01,
            "restart_hours": 0.5,
            "straggler_cv": 0,
        },
        "evaluation": {"interval_steps": 1000, "steps": 100},
        "storage": {"ebs_gb_per_node": 0, "fsx_capacity_gb": 0},
        "data": {"dataset_gb": 500, "epochs": 2},
        "network": {"nat_gateways": 0, "public_ips_per_node": 0, "nat_gb_per_node_hour": 0},
        "monitoring": {"custom_metrics_per_node": 0, "logs_gb_per_node_hour": 0},
    }


def _usage(catalog: Catalog, **changes: Any) -> Usage:
    return usage_for(plan_from_dict({**_plan(), **changes}), catalog, today=TODAY)


# Hand arithmetic for _plan() (4 nodes × 8 GPUs = 32 GPUs, 10 h of training stated):
STALL_EACH = 100 / (5 * 4) / 3600  # 100 GB at 5 GB/s × 4 nodes = 5 s = 1/720 h
COUNT = 10 / 2  # training hours / interval = 5 checkpoints
# No model size: no layout, so an evaluation step is a plain third of a training step (forward
# only); 100 eval steps every 1,000 → 10 h × 100 / 1000 × 1/3 = 1/3 h.
EVAL_HOURS = 10 * 100 / 1000 / 3
EXPOSED = 10 + EVAL_HOURS + 0.0 + COUNT * STALL_EACH  # training, evaluation, sync (cv 0), stall
FAILURES = 0.024 * 32 / 24 * EXPOSED  # 0.032 failures per cluster-hour
RECLAIMS = 0.01 * 4 * 0.5 * EXPOSED  # hazard × 2 spot nodes = 0.02 reclaims per hour
LOST_EACH = 2 / 2 + 0.5  # half an interval of work + the restart


def test_records_hold_the_hand_computed_quantities(catalog: Catalog) -> None:
    u = _usage(catalog)
    assert u.nodes == 4
    assert u.gpus == 32
    assert u.compute.hours == pytest.approx(10.0)
    assert u.compute.sync_stall_hours == 0.0  # straggler cv 0, no model to sync
    assert u.evaluation.step_fraction == pytest.approx(1 / 3)
    assert u.evaluation.hours == pytest.approx(EVAL_HOURS)
    ck = u.checkpoint
    assert (ck.size_gb, ck.target, ck.asynchronous, ck.interval_hours) == (100, "s3", False, 2)
    assert ck.stall_hours_each == pytest.approx(STALL_EACH)
    assert ck.count == pytest.approx(COUNT)
    assert ck.stall_hours == pytest.approx(COUNT * STALL_EACH)  # 5 × 5 s = 25 s
    assert ck.write_gb == pytest.approx(COUNT * 100)  # 500 GB written
    r = u.reliability
    assert (r.failure_rate_per_gpu_day, r.spot_reclaim_rate_per_node_hour) == (0.024, 0.01)
    assert r.failure_events == pytest.approx(FAILURES)  # ≈ 0.331
    assert r.failure_lost_hours == pytest.approx(FAILURES * LOST_EACH)
    assert r.reclaim_events == pytest.approx(RECLAIMS)  # ≈ 0.207
    assert r.reclaim_lost_hours == pytest.approx(RECLAIMS * LOST_EACH)
    assert u.exposed_hours == pytest.approx(EXPOSED)
    assert u.wall_hours == pytest.approx(EXPOSED + (FAILURES + RECLAIMS) * LOST_EACH)
    assert u.data.read_gb == pytest.approx(500 * 2)
    assert u.purchase.spot_fraction == 0.5
    assert u.purchase.savings_plan_coverage == 0.0  # no commitment: nothing covered
    assert u.purchase.spot_price_scale == 1.0
    assert u.storage.ebs_gb_per_node == 0.0
    assert u.network.nat_gateways == 0
    assert u.monitoring.custom_metrics_per_node == 0.0


def test_records_are_frozen(catalog: Catalog) -> None:
    u = _usage(catalog)
    with pytest.raises(FrozenInstanceError):
        u.checkpoint.count = 1.0  # type: ignore[misc]


def test_with_values_replaces_by_dotted_name_and_keeps_the_rest(catalog: Catalog) -> None:
    u = _usage(catalog)
    v = u.with_values({"checkpoint.count": 7.0, "reliability.restart_hours": 2.0, "nodes": 8})
    assert v.value("checkpoint.count") == 7.0
    assert v.checkpoint.interval_hours == u.checkpoint.interval_hours
    assert v.reliability.restart_hours == 2.0
    assert v.reliability.failure_events == u.reliability.failure_events
    assert v.nodes == 8
    assert u.checkpoint.count == pytest.approx(COUNT)  # the original is untouched


def test_with_schedule_rederives_checkpoints_and_interruptions_elementwise(
    catalog: Catalog,
) -> None:
    u = _usage(catalog)
    grid: dict[str, Any] = {"interval_hours": np.array([1.0, 2.0, 4.0])}
    g = u.with_schedule(**grid)
    # 10 h / [1, 2, 4] h = [10, 5, 2.5] checkpoints, each stalling 1/720 h.
    count = np.array([10.0, 5.0, 2.5])
    np.testing.assert_allclose(g.checkpoint.count, count)
    exposed = 10 + EVAL_HOURS + count * STALL_EACH
    # (0.032 + 0.02) interruptions per hour, each losing interval / 2 + 0.5 h.
    lost = (0.032 + 0.02) * exposed * (np.array([1.0, 2.0, 4.0]) / 2 + 0.5)
    np.testing.assert_allclose(
        g.reliability.failure_lost_hours + g.reliability.reclaim_lost_hours, lost
    )
    # The plan's own interval gives back the plan's usage.
    assert g.value("checkpoint.count")[1] == pytest.approx(u.checkpoint.count)


def test_a_resolved_job_gives_the_same_usage(catalog: Catalog) -> None:
    """``usage_for(..., job=...)`` is the planner's short cut: the job of one node count, with
    the count replaced, prices another count exactly as resolving it afresh does."""
    four, eight = plan_from_dict(_plan(4)), plan_from_dict(_plan(8))
    job = resolve_job(four, catalog, today=TODAY)
    assert usage_for(four, catalog, job=job) == usage_for(four, catalog, today=TODAY)
    shared = usage_for(eight, catalog, job=replace(job, nodes=8))
    assert shared == usage_for(eight, catalog, today=TODAY)
    assert shared.gpus == 64


def test_a_checkpoint_to_ebs_is_written_no_faster_than_each_node_s_volume(
    catalog: Catalog,
) -> None:
    """Each node writes its shard to its own gp3 volume, so the volume's provisioned throughput
    bounds the write: 100 GB over 4 nodes = 25 GB per node; at 125 MiB/s = 131.072 MB/s that
    is 25e9 / 131.072e6 = 190.7 s, not the 5 s of 5 GB/s per node. With 0.5 GB/s per node
    stated and a 1,000 MiB/s (1.049 GB/s) volume, the stated rate is the bound: 50 s."""
    ck = {**_plan()["checkpoint"], "target": "ebs"}
    storage = {"ebs_gb_per_node": 500, "ebs_throughput_mibps": 125, "fsx_capacity_gb": 0}
    slow = _usage(catalog, checkpoint=ck, storage=storage).checkpoint
    assert slow.stall_hours_each == pytest.approx(25e9 / (125 * 1048576) / 3600)
    fast = _usage(
        catalog,
        checkpoint={**ck, "write_gbytes_per_s_per_node": 0.5},
        storage={**storage, "ebs_iops": 4000, "ebs_throughput_mibps": 1000},
    ).checkpoint
    assert fast.stall_hours_each == pytest.approx(25 / 0.5 / 3600)


@pytest.mark.parametrize(
    ("storage", "field", "allowed"),
    [
        # 500 IOPS per GiB: a 10 GB volume takes at most 5,000 (above the 3,000 baseline).
        ({"ebs_gb_per_node": 10, "ebs_iops": 1_000_000}, "storage.ebs_iops", "3,000 to 5,000"),
        # 1,000 GB would allow 500,000 by the ratio; the volume limit is 80,000.
        ({"ebs_gb_per_node": 1000, "ebs_iops": 90_000}, "storage.ebs_iops", "3,000 to 80,000"),
        # 0.25 MiB/s per IOPS: 4,000 IOPS allow at most 1,000 MiB/s.
        (
            {"ebs_gb_per_node": 1000, "ebs_iops": 4000, "ebs_throughput_mibps": 1500},
            "storage.ebs_throughput_mibps",
            "125 to 1,000",
        ),
    ],
)
def test_a_gp3_volume_aws_would_not_create_is_refused(
    catalog: Catalog, storage: dict[str, float], field: str, allowed: str
) -> None:
    """On a run dated after AWS raised gp3's limits (September 2025: 80,000 IOPS, 2,000 MiB/s)."""
    with pytest.raises(SpecError, match=f"gp3 allows {allowed} here") as err:
        _usage(catalog, storage={**_plan()["storage"], **storage}, prices={"as_of": "2026-01-05"})
    assert err.value.field == field


def test_a_gp3_volume_within_its_limits_is_priced(catalog: Catalog) -> None:
    """100 GB allows 50,000 IOPS; 20,000 IOPS allow 5,000 MiB/s, capped at 2,000 per volume
    (a run dated after AWS raised gp3's limits in September 2025)."""
    st = {"ebs_gb_per_node": 100, "ebs_iops": 20_000, "ebs_throughput_mibps": 2000}
    u = _usage(catalog, storage={**_plan()["storage"], **st}, prices={"as_of": "2026-01-05"})
    assert (u.storage.ebs_iops, u.storage.ebs_throughput_mibps) == (20_000, 2000)


def test_gp3_limits_are_those_of_the_runs_date(catalog: Catalog) -> None:
    """Before AWS raised them (2025-09-01 in the catalog), gp3 stopped at 16,000 IOPS and
    1,000 MiB/s per volume: 20,000 IOPS on a 1,000 GB volume (500 × 1,000 = 500,000 by the
    ratio) is refused for the seed's 2025-05-01, allowed from the raise on."""
    st = {**_plan()["storage"], "ebs_gb_per_node": 1000, "ebs_iops": 20_000}
    with pytest.raises(SpecError, match="gp3 allows 3,000 to 16,000 here") as err:
        _usage(catalog, storage=st)
    assert "before AWS raised them on 2025-09-01" in str(err.value)
    ok = _usage(catalog, storage=st, prices={"as_of": "2025-09-01"})
    assert ok.storage.ebs_iops == 20_000
    st = {**st, "ebs_iops": 8000, "ebs_throughput_mibps": 1500}  # 8,000 × 0.25 = 2,000 allowed
    with pytest.raises(SpecError, match="gp3 allows 125 to 1,000 here"):
        _usage(catalog, storage=st)


def test_an_fsx_size_aws_does_not_create_is_priced_as_the_one_it_would_and_said(
    catalog: Catalog,
) -> None:
    """3,000 GiB is not an FSx for Lustre size (1,200, 2,400, then multiples of 2,400): the next
    one up, 4,800, is what the usage carries and what the warning names; 24,000 (10 × 2,400) is
    one, so nothing is said."""
    odd = plan_from_dict({**_plan(), "storage": {**_plan()["storage"], "fsx_capacity_gb": 3000}})
    assert usage_for(odd, catalog, today=TODAY).storage.fsx_capacity_gb == 4800
    (note,) = [w for w in resolve_job(odd, catalog, today=TODAY).warnings if "fsx" in w]
    assert note.startswith(
        "storage.fsx_capacity_gb = 3,000 is not a size FSx for Lustre creates in the "
        "persistent_250 tier"
    )
    assert "priced as the 4,800 GiB file system" in note
    whole = plan_from_dict({**_plan(), "storage": {**_plan()["storage"], "fsx_capacity_gb": 24000}})
    assert not [w for w in resolve_job(whole, catalog, today=TODAY).warnings if "fsx" in w]


@pytest.mark.parametrize(
    ("provider", "tier", "asked", "made"),
    [
        # FSx for Lustre: 1,200, then multiples of 2,400: 3,000 -> 2 x 2,400 = 4,800.
        ("aws", "persistent_250", 3000, 4800),
        ("aws", "scratch_2", 100, 1200),
        # Google Cloud Managed Lustre, 1000 MBps/TiB: multiples of 9,000 GiB from 9,000:
        # 3,000 -> 9,000; 10,000 -> 2 x 9,000 = 18,000; above 1,530,000 the step is 72,000:
        # 1,600,000 / 72,000 = 22.2 -> 23 x 72,000 = 1,656,000.
        ("gcp", "persistent_1000", 3000, 9000),
        ("gcp", "persistent_1000", 10_000, 18_000),
        ("gcp", "persistent_1000", 1_600_000, 1_656_000),
        ("gcp", "persistent_125", 100, 72_000),
        # Azure Managed Lustre, 4 TiB steps at 500 MBps/TiB: 5,000 GiB -> 2 x 4,096 = 8,192.
        ("azure", "persistent_500", 5000, 8192),
        ("azure", "persistent_250", 100, 8192),
        # Google sells no Scratch tier: the stated size stands (its price is the catalog's).
        ("gcp", "scratch_2", 3000, 3000),
    ],
)
def test_each_cloud_creates_lustre_at_its_own_sizes(
    catalog: Catalog, provider: str, tier: str, asked: float, made: float
) -> None:
    """Sources: AWS FSx for Lustre user guide (storage capacity), Google Cloud Managed Lustre
    performance tiers, Azure Managed Lustre throughput configurations (assumptions.toml)."""
    assert lustre_size_gib(catalog, provider, tier, asked) == made


def test_a_gcp_lustre_request_is_billed_at_googles_minimum(catalog: Catalog) -> None:
    """3,000 GiB at 1000 MBps/TiB on Google Cloud is a 9,000 GiB instance (its minimum): the
    priced quantity is 9,000 GiB x 1.073741824 GB/GiB = 9,663.676416 GB (the catalog's rate is
    per GB), its throughput 9,000 / 1,000 x 1,000 MB/s = 9 GB/s, and the warning says so."""
    plan = plan_from_dict(
        {
            **_plan(),
            "cluster": {"provider": "gcp", "instance": "a3-highgpu-8g", "nodes": 4},
            "storage": {"fsx_capacity_gb": 3000, "fsx_tier": "persistent_1000"},
            "checkpoint": {**_plan()["checkpoint"], "target": "fsx"},
        }
    )
    u = usage_for(plan, catalog, today=TODAY)
    assert u.storage.fsx_capacity_gb == pytest.approx(9000 * 1.073741824)
    # The 100 GB checkpoint: 4 nodes x 5 GB/s = 20 GB/s asked, the file system takes 9 GB/s.
    assert u.checkpoint.stall_hours_each == pytest.approx(100 / 9 / 3600)
    assert lustre_gb_per_gib(catalog, "gcp") == 1.073741824
    (note,) = [w for w in resolve_job(plan, catalog, today=TODAY).warnings if "fsx" in w]
    assert "not a size Google Cloud Managed Lustre creates in the persistent_1000 tier" in note
    assert "priced as the 9,000 GiB file system" in note


def test_a_spot_share_of_part_of_a_node_is_said(catalog: Catalog) -> None:
    """0.1 of 3 nodes = 0.3 spot nodes: priced as the mix, warned; 0 or 1 node is 0 or 1/3.
    Half of _plan()'s 4 nodes is 2 whole nodes: nothing said."""
    odd = plan_from_dict(
        {
            **_plan(),
            "cluster": {"instance": "p5.48xlarge", "nodes": 3},
            "purchase": {"spot_fraction": 0.1},
        }
    )
    (note,) = [w for w in resolve_job(odd, catalog, today=TODAY).warnings if "spot_fraction" in w]
    assert note.startswith("purchase.spot_fraction = 0.1 of 3 nodes is 0.3 spot nodes")
    assert note.endswith("is a spot_fraction of 0 or 0.3333")
    whole = resolve_job(plan_from_dict(_plan()), catalog, today=TODAY)
    assert not [w for w in whole.warnings if "spot_fraction" in w]


def test_a_spot_share_of_part_of_a_node_is_said_when_gpus_set_the_nodes(
    catalog: Catalog,
) -> None:
    """Was silent when the node count came from ``gpus``: 3 GPUs round up to 1 p5 node (8 GPUs);
    half of it on spot is 0.5 spot nodes. Both the rounding and the split are said."""
    d = _plan()
    d["cluster"] = {"instance": "p5.48xlarge", "gpus": 3}
    d["purchase"] = {"spot_fraction": 0.5}
    notes = resolve_job(plan_from_dict(d), catalog, today=TODAY).warnings
    assert any(w.startswith("cluster.gpus = 3") for w in notes)
    assert any(
        w.startswith("purchase.spot_fraction = 0.5 of 1 node is 0.5 spot nodes") for w in notes
    )


def test_checkpoints_that_do_not_fit_on_the_file_system_are_said(catalog: Catalog) -> None:
    """Was silent: 3 kept checkpoints of 980 GB on a 1,200 GiB FSx were priced as if they fit.
    Here 3 × 100 GB kept + a 500 GB dataset read from the same FSx = 800 GB on a 1,200 GiB
    scratch_2 file system (1,200 GB billed): fits. With 10 kept, 1,000 + 500 = 1,500 GB: said."""

    def fsx_plan(keep: int) -> Usage:
        d = _plan()
        d["checkpoint"] = {**d["checkpoint"], "target": "fsx", "keep_last": keep}
        d["storage"] = {"ebs_gb_per_node": 0, "fsx_capacity_gb": 1200, "fsx_tier": "scratch_2"}
        d["data"] = {**d["data"], "source": "fsx"}
        return usage_for(plan_from_dict(d), catalog, today=TODAY)

    assert fsx_plan(3).storage.fsx_capacity_gb == 1200
    assert not [w for w in fsx_plan(3).warnings if "do not fit" in w]
    (note,) = [w for w in fsx_plan(10).warnings if "do not fit" in w]
    assert note.startswith(
        "checkpoint.keep_last = 10 checkpoints of 100 GB (1,000 GB) and the 500 GB dataset do "
        "not fit on the 1,200 GB FSx file system"
    )
    assert "at least 1,500 GB" in note


def test_checkpoint_shards_that_do_not_fit_on_ebs_are_said(catalog: Catalog) -> None:
    """Was silent: 3 kept checkpoints of 5,670 GB (405e9 × 14 bytes) written as 16 node shards
    to 200 GB volumes. Here _plan()'s 100 GB checkpoints on 4 nodes: 3 × 100 / 4 = 75 GB of
    shards per node; on 50 GB volumes that is said, on 100 GB it fits."""

    def on_ebs(gb: int) -> Usage:
        d = _plan()
        d["checkpoint"] = {**d["checkpoint"], "target": "ebs", "keep_last": 3}
        d["storage"] = {"ebs_gb_per_node": gb, "fsx_capacity_gb": 0}
        return usage_for(plan_from_dict(d), catalog, today=TODAY)

    (note,) = [w for w in on_ebs(50).warnings if "EBS volumes" in w]
    assert note.startswith(
        "checkpoint.keep_last = 3 checkpoints of 100 GB put 75 GB of shards on each of the 4 "
        "nodes' EBS volumes, which hold 50 GB"
    )
    assert not [w for w in on_ebs(100).warnings if "EBS volumes" in w]


def test_checkpoint_retention_is_assumed_only_where_it_is_priced(catalog: Catalog) -> None:
    """Was: ``defaults.checkpoint.retention_days`` listed among a forecast's assumptions when the
    checkpoints go to FSx or EBS, where no line prices keeping them after the run. Now it is
    assumed for S3 only, and a stated retention on FSx is said to have no effect."""
    s3 = _usage(catalog)
    assert any(a.startswith("defaults.checkpoint.retention_days") for a in s3.assumed)
    d = _plan()
    d["checkpoint"] = {**d["checkpoint"], "target": "fsx"}
    d["storage"] = {"ebs_gb_per_node": 0, "fsx_capacity_gb": 1200}
    fsx = usage_for(plan_from_dict(d), catalog, today=TODAY)
    assert not any(a.startswith("defaults.checkpoint.retention_days") for a in fsx.assumed)
    d["checkpoint"]["retention_days"] = 30
    stated = usage_for(plan_from_dict(d), catalog, today=TODAY)
    assert any(
        w.startswith("checkpoint.retention_days = 30 is not priced") for w in stated.warnings
    )


def test_a_plan_that_cannot_size_its_checkpoints_says_they_are_not_priced(
    catalog: Catalog,
) -> None:
    """No model.params and no checkpoint.size_gb: the checkpoint lines are $0, and said so;
    _plan() states a 100 GB checkpoint, so nothing is said there."""
    d = _plan()
    d["checkpoint"] = {k: v for k, v in d["checkpoint"].items() if k != "size_gb"}
    blind = plan_from_dict(d)
    assert usage_for(blind, catalog, today=TODAY).checkpoint.size_gb == 0
    (note,) = [w for w in resolve_job(blind, catalog, today=TODAY).warnings if "checkpoint" in w]
    assert note.startswith("no checkpoint size: checkpoint writes, their storage and requests")
    sized = resolve_job(plan_from_dict(_plan()), catalog, today=TODAY)
    assert not [w for w in sized.warnings if "checkpoint size" in w]


@pytest.mark.parametrize(
    ("region", "why"),
    [
        ("mars-1", "'mars-1' is not a region name of aws"),
        ("", "'' is not a region name of aws"),
        ("us-central1", "'us-central1' is a gcp region, not aws"),
    ],
)
def test_a_region_that_cannot_be_the_cloud_s_is_refused(
    catalog: Catalog, region: str, why: str
) -> None:
    """AWS regions read like us-east-1 or us-gov-west-1: a name of another shape is a typo, not a
    region the catalog has no prices for, and an empty one is not the default region."""
    d = _plan()
    d["cluster"] = {**d["cluster"], "region": region}
    with pytest.raises(SpecError, match=why) as err:
        resolve_job(plan_from_dict(d), catalog, today=TODAY)
    assert err.value.field == "cluster.region"


def test_a_well_formed_region_the_catalog_lacks_is_priced_at_the_reference_region(
    catalog: Catalog,
) -> None:
    """ap-southeast-4 (Melbourne) is a real AWS region without prices in the catalog."""
    d = _plan()
    d["cluster"] = {**d["cluster"], "region": "ap-southeast-4"}
    assert resolve_job(plan_from_dict(d), catalog, today=TODAY).region == "ap-southeast-4"


@pytest.mark.parametrize(
    ("section", "fields", "said"),
    [
        ("purchase", {"savings_plan_coverage": 1.0}, "purchase.savings_plan_coverage = 1 has no"),
        (
            "purchase",
            {"savings_plan": "3yr", "spot_fraction": 1.0},
            "purchase.savings_plan = 3yr with every node on spot",
        ),
        ("storage", {"fsx_tier": "scratch_2"}, "storage.fsx_tier = scratch_2 has no effect"),
        (
            "network",
            {"s3_via_nat": True, "nat_gateways": 0},
            "network.s3_via_nat = true with network.nat_gateways = 0",
        ),
    ],
)
def test_a_stated_input_another_makes_moot_is_said(
    catalog: Catalog, section: str, fields: dict[str, Any], said: str
) -> None:
    d = _plan()
    d[section] = {**d.get(section, {}), **fields}
    warnings = resolve_job(plan_from_dict(d), catalog, today=TODAY).warnings
    assert [w for w in warnings if w.startswith(said)]
    assert not [
        w
        for w in resolve_job(plan_from_dict(_plan()), catalog, today=TODAY).warnings
        if w.startswith(said)
    ]


def test_iops_on_no_volume_names_the_volume_size(catalog: Catalog) -> None:
    """0 GB of EBS with 6,000 IOPS: the size is what is missing, not an IOPS range of 3,000 to
    3,000."""
    st = {**_plan()["storage"], "ebs_gb_per_node": 0, "ebs_iops": 6000}
    with pytest.raises(SpecError, match="no EBS volume") as err:
        _usage(catalog, storage=st)
    assert err.value.field == "storage.ebs_gb_per_node"


def test_tpu_chips_share_their_host_vm(catalog: Catalog) -> None:
    """Was: a 256-chip TPU v5p plan counted 256 "nodes" for every per-node line (boot disks,
    NAT traffic, metrics, logs), though a v5p slice runs on VMs of 4 chips: 64 hosts (Google
    Cloud TPU documentation; ``defaults.cluster.chips_per_host``). The chips are still what the
    compute line bills (per chip-hour); the disks are 64 × 1,000 GB (the default per node)."""
    plan = plan_from_dict({
        "model": {"params": 7e9, "tokens": 1e11},
        "cluster": {"provider": "gcp", "gpu": "tpu-v5p", "gpus": 256},
        "prices": {"as_of": "2026-12-01"},
    })  # fmt: skip
    u = usage_for(plan, catalog, today=TODAY)
    assert (u.nodes, u.gpus, u.chips_per_host, u.hosts) == (256, 256, 4, 64)
    assert any(a.startswith("defaults.cluster.chips_per_host: 4 tpu-v5p") for a in u.assumed)
    gpu_plan = usage_for(plan_from_dict(_plan()), catalog, today=TODAY)
    assert gpu_plan.hosts == gpu_plan.nodes == 4  # a GPU instance is its own host


def test_a_dataset_larger_than_its_file_system_is_said(catalog: Catalog) -> None:
    """Was silent when the checkpoints go elsewhere: a 3,000 GB dataset read from a 2,400 GiB
    scratch_2 FSx (2,400 GB billed) does not fit on it."""
    d = _plan()
    d["storage"] = {"ebs_gb_per_node": 0, "fsx_capacity_gb": 2400, "fsx_tier": "scratch_2"}
    d["data"] = {"dataset_gb": 3000, "epochs": 1, "source": "fsx"}
    (note,) = [w for w in usage_for(plan_from_dict(d), catalog, today=TODAY).warnings
               if "does not fit" in w]  # fmt: skip
    assert note.startswith("the 3,000 GB dataset does not fit on the 2,400 GB FSx file system")
