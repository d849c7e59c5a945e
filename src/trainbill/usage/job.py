"""The plan resolved against the catalog (``Job``): cluster, region, zone, data placement,
dates, commitment kind and every warning about how the plan was read.

Resolved once, before any quantity: a planner pricing many variants of one cluster passes the
same ``Job`` to each ``usage_for``.
"""

from __future__ import annotations

from datetime import date

from trainbill._record import record
from trainbill.catalog import Accelerator, Catalog, Instance
from trainbill.spec import Plan
from trainbill.usage._defaults import _Defaults
from trainbill.usage.cluster import (
    _orchestrator_on,
    _savings_plan_kind,
    check_region,
    hyperpod_spot_note,
    hyperpod_unpriced,
    resolve_cluster,
    resolve_zone,
)
from trainbill.usage.placement import _data_placement
from trainbill.usage.plan_warnings import (
    _checkpoint_size_warnings,
    _cluster_warnings,
    _data_read_warnings,
    _date_warnings,
    _fsx_size_warnings,
    _gpu_name_warnings,
    _ignored_input_warnings,
    _slice_warnings,
    _spot_before_cut_warnings,
)


@record
class Job:
    """A plan resolved against the catalog: which cluster, where, when, whose data, which
    commitment kind, and what the user should be told about how the plan was read.

    ``resolve_job`` makes every look-up, default and validation of this context once;
    ``usage_for`` works out the quantities from it (time model, checkpoints, interruptions).
    """

    instance: Instance
    accelerator: Accelerator
    nodes: int
    provider: str
    orchestrator: str
    region: str
    zone_id: str | None
    as_of: date
    run_date: date
    data_source: str
    data_location: str
    data_provider: str
    data_region: str
    data_zone: str | None
    savings_plan_kind: str
    warnings: tuple[str, ...]
    #: Notes of the what-ifs applied to the plan (``Plan.whatif``), forecast warnings of their own
    #: kind.
    whatif_notes: tuple[str, ...]
    #: Catalog assumptions used to fill what the plan left out, cited, in order of use.
    assumed: tuple[str, ...]

    @property
    def gpus(self) -> int:
        """Accelerators in the cluster."""
        return self.nodes * self.instance.accelerator_count


def resolve_job(plan: Plan, catalog: Catalog, *, today: date | None = None) -> Job:
    """Resolve the plan's cluster, region, zone, data placement, dates and commitment kind.

    Raises the plan's context errors (``SpecError``, ``PriceNotFoundError``, ``CatalogError``)
    with the field named, before any quantity is worked out.
    """
    d = _Defaults(catalog)
    inst, nodes = resolve_cluster(plan, catalog)
    provider = inst.provider
    orchestrator = _orchestrator_on(plan, provider)
    given = plan.cluster.region
    region = str(given if given is not None else d.get(None, f"defaults.cluster.region_{provider}"))
    check_region(catalog, provider, region)
    zone_notes: list[str] = []
    zone_id: str | None = None
    if plan.cluster.zone is not None:
        zone_id, note = resolve_zone(catalog, provider, region, plan.cluster.zone, "cluster.zone")
        zone_notes += [note] if note else []
    placement = _data_placement(plan, catalog, d, provider, region, plan.cluster.zone)
    data_source, data_location, data_provider, data_region, data_zone, data_notes = placement
    day = today or date.today()  # noqa: DTZ011 - a calendar date, not a time
    as_of = plan.prices.as_of or day
    run_date = plan.run.date or as_of
    spot = plan.purchase.spot_fraction
    spot_note = hyperpod_spot_note(catalog, orchestrator, spot, run_date)
    spot = 0.0 if spot_note else spot
    warnings = (
        *_gpu_name_warnings(plan, catalog),
        *_cluster_warnings(plan, inst, nodes),
        *_slice_warnings(catalog, inst, nodes),
        *_data_read_warnings(plan, catalog),
        *_spot_before_cut_warnings(catalog, inst, provider, region, as_of, spot),
        *spot_note,
        *hyperpod_unpriced(catalog, inst, orchestrator, spot, provider, region, as_of),
        *_fsx_size_warnings(plan, catalog, provider),
        *_checkpoint_size_warnings(plan),
        *_ignored_input_warnings(plan),
        *_date_warnings(catalog, as_of, run_date, day),
        *zone_notes,
        *data_notes,
    )
    return Job(
        instance=inst,
        accelerator=catalog.accelerator(inst.accelerator),
        nodes=nodes,
        provider=provider,
        orchestrator=orchestrator,
        region=region,
        zone_id=zone_id,
        as_of=as_of,
        run_date=run_date,
        data_source=data_source,
        data_location=data_location,
        data_provider=data_provider,
        data_region=data_region,
        data_zone=data_zone,
        savings_plan_kind=_savings_plan_kind(plan, inst, provider, orchestrator, region),
        warnings=warnings,
        whatif_notes=plan.whatif.notes,
        assumed=tuple(d.used),
    )
