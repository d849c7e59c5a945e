"""Where the training data lives relative to the cluster, and how much of it moves.

Region and zone of the data (given, or derived from the cluster's), the cross-zone or
cross-region placement the data-transfer driver prices, and the dataset's size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.spec import Plan
from trainbill.usage.cluster import check_region, resolve_zone
from trainbill.usage.records import Data

if TYPE_CHECKING:
    from trainbill.usage._defaults import _Defaults
    from trainbill.usage.job import Job


def _derived_location(
    catalog: Catalog,
    provider: str,
    region: str,
    zone: str | None,
    data_region: str,
    data_zone: str | None,
) -> str | None:
    """Where the data sits relative to the cluster, when its region or zone says so (else None)."""
    if data_region != region:
        if data_zone is not None:
            resolve_zone(catalog, provider, data_region, data_zone, "data.zone")
        return "cross_region"
    if data_zone is None:
        return None
    data_id, _ = resolve_zone(catalog, provider, data_region, data_zone, "data.zone")
    if zone is None:
        msg = (
            "data.zone needs cluster.zone too: the transfer depends on whether the two zones differ"
        )
        raise SpecError(msg, field="data.zone")
    cluster_id, _ = resolve_zone(catalog, provider, region, zone, "cluster.zone")
    if catalog.zones(provider, region) is not None and (data_id is None) != (cluster_id is None):
        msg = (
            f"data.zone = {data_zone!r} and cluster.zone = {zone!r} mix an AZ ID and an "
            "account-specific AZ name, which cannot be compared; give both as AZ IDs"
        )
        raise SpecError(msg, field="data.zone")
    return "same_az" if data_zone == zone else "cross_az"


def _data_placement(
    plan: Plan, catalog: Catalog, d: _Defaults, provider: str, region: str, zone: str | None
) -> tuple[str, str, str, str, str | None, tuple[str, ...]]:
    """Source, location, provider, region and zone of the training data, and notes.

    ``location`` is derived from the data's own ``region``/``zone`` when the plan gives them
    (a region other than the cluster's is ``cross_region``; a zone other than the cluster's is
    ``cross_az``), else taken from ``data.location``. A stated location that contradicts them
    is an error: which one was meant?
    """
    data = plan.data
    source = str(d.get(data.source, "defaults.data.source"))
    notes: list[str] = []
    if source == "on_premises":
        notes.append(
            "data.source = on_premises: data comes in over your own network; the cloud charges "
            "nothing for data in, and your side's egress or Direct Connect/VPN fees are not cloud "
            "list prices, so they are not in this forecast"
        )
        return source, "external", "", "", None, tuple(notes)
    if source == "other_cloud":
        other = str(data.provider)
        if other == provider:
            msg = (
                f"provider {other!r} is the cluster's own cloud; for data there use source = "
                '"s3", "fsx" or "ebs" with region (and zone) instead'
            )
            raise SpecError(msg, field="data.provider")
        if data.region is not None:
            check_region(catalog, other, data.region, field="data.region")
        other_region = data.region or str(d.get(None, f"defaults.cluster.region_{other}"))
        return source, "external", other, other_region, None, ()
    data_region = data.region or region
    if data.region is not None:
        check_region(catalog, provider, data.region, field="data.region")
    data_zone = data.zone
    derived = _derived_location(catalog, provider, region, zone, data_region, data_zone)
    if derived is not None and data.location is not None and data.location != derived:
        msg = (
            f"location = {data.location!r}, but data.region/zone put the data "
            f"{derived.replace('_', ' ')} of the cluster; give one or make them agree"
        )
        raise SpecError(msg, field="data.location")
    if data.region == region and data.location == "cross_region":
        msg = (
            f"location = 'cross_region', but data.region = {region!r} is the cluster's own "
            'region; give the region the data is in, or location = "same_az" or "cross_az"'
        )
        raise SpecError(msg, field="data.location")
    location = derived or str(d.get(data.location, "defaults.data.location"))
    if source == "ebs" and location != "same_az" and provider == "aws":
        # An EBS volume attaches only to instances in its own Availability Zone (AWS EBS user
        # guide), and to one region's instances: the data would first need a server or a copy.
        msg = (
            f"data.source = ebs with location = {location!r}: an EBS volume attaches only to "
            "instances in its own Availability Zone, so the cluster cannot read it from there; "
            'use location = "same_az", or source = "fsx" or "s3" for data in another zone or region'
        )
        raise SpecError(msg, field="data.location")
    if source == "s3" and location == "cross_az":
        notes.append(
            "data.location = cross_az has no cost for data in s3: object storage is regional, and "
            "reads from any zone of its region carry no transfer charge (AWS S3 pricing, Data "
            "Transfer)"
        )
    return source, location, provider, data_region, data_zone, tuple(notes)


def _dataset_gb(plan: Plan, catalog: Catalog, d: _Defaults) -> float:
    """The plan's dataset size, else its tokens at the catalog's bytes per token, else 0."""
    if plan.data.dataset_gb is not None:
        return plan.data.dataset_gb
    if plan.model.tokens is not None:
        d.used.append(catalog.assumption("defaults.model.bytes_per_token").cite())
        return plan.model.tokens * float(catalog.value("defaults.model.bytes_per_token")) / 1e9
    return 0.0


def _data(plan: Plan, d: _Defaults, job: Job, dataset_gb: float) -> Data:
    """The dataset, its placement (``resolve_job``), epochs and object size."""
    data = plan.data
    return Data(
        dataset_gb=dataset_gb,
        source=job.data_source,
        location=job.data_location,
        provider=job.data_provider,
        region=job.data_region,
        zone=job.data_zone,
        epochs=float(d.get(data.epochs, "defaults.data.epochs")),
        object_mb=float(d.get(data.object_mb, "defaults.data.object_mb")),
    )
