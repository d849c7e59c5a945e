"""SkyPilot task YAML: ``resources`` (accelerators, instance_type, use_spot, cloud, region) and
``num_nodes``.

SkyPilot writes accelerators as ``H100:8``, ``{H100: 8}`` or a set of alternatives; a task with
alternatives (``any_of``/``ordered`` or several accelerators) is priced on the first one and the
report says so. ``infra: aws/us-east-1`` (newer SkyPilot) is read like ``cloud`` + ``region``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from trainbill._record import record
from trainbill.catalog import Accelerator, Catalog
from trainbill.errors import PriceNotFoundError
from trainbill.importers import ClusterImportError, ImportReport, import_error
from trainbill.importers._groups import Group, assemble, aws_zone_region, number

__all__ = ["SKYPILOT_ACCELERATOR_NAMES", "accelerator_id", "parse"]

#: SkyPilot accelerator names whose catalog id is not simply the lower-cased name.
SKYPILOT_ACCELERATOR_NAMES: Mapping[str, str] = {
    "A100": "a100-40gb",
    "A100-80GB": "a100-80gb",
    "A10G": "a10g",
    "L40S": "l40s",
    "H100": "h100",
    "H200": "h200",
    "B200": "b200",
    "Trainium": "trainium1",
    "Trainium2": "trainium2",
}
_CLOUDS = ("aws", "gcp", "azure")
_PRICED = frozenset(
    {
        "cloud",
        "infra",
        "region",
        "accelerators",
        "instance_type",
        "use_spot",
        "disk_size",
        "zone",
        "any_of",
        "ordered",
    }
)
_NO_COST = frozenset({"name", "run", "setup", "envs", "workdir", "secrets", "config"})
#: (plan sections, [(plan field, task element)]) as one step of ``parse`` builds them.
_Sections = tuple[dict[str, Any], list[tuple[str, str]]]


def accelerator_id(name: str) -> str:
    """Catalog accelerator id of a SkyPilot accelerator name (``A100-80GB`` → ``a100-80gb``)."""
    return SKYPILOT_ACCELERATOR_NAMES.get(
        name, SKYPILOT_ACCELERATOR_NAMES.get(name.upper(), name.lower())
    )


def _load(text: str, source: str) -> Any:
    """The YAML document, through the input gate's parser (safe types, no duplicate keys:
    ``num_nodes: 4 … num_nodes: 999`` was priced at 999; depth and number caps)."""
    from trainbill._io import parse_yaml

    return parse_yaml(text, source=source, error=import_error)


def _accelerators(value: Any, source: str, notes: list[str]) -> tuple[str, int]:
    field = "resources.accelerators"
    if isinstance(value, list | set | tuple):
        if not value:
            msg = "empty list of accelerators"
            raise ClusterImportError(msg, source=source, field=field)
        if len(value) > 1:
            notes.append(f"{field} lists alternatives; priced on the first ({next(iter(value))})")
        value = next(iter(value))
    if isinstance(value, Mapping):
        if (
            not value
        ):  # ``{}`` (or ``[{}]``) ended in a StopIteration traceback (property tests, #23)
            msg = "empty mapping of accelerators (expected NAME: COUNT such as H100: 8)"
            raise ClusterImportError(msg, source=source, field=field)
        if len(value) != 1:
            notes.append(f"{field} lists alternatives; priced on the first ({next(iter(value))})")
        name, count = next(iter(value.items()))
        value = f"{name}:{count if count is not None else 1}"
    if not isinstance(value, str) or not value.strip():
        msg = f"expected NAME:COUNT such as H100:8 (got {value!r})"
        raise ClusterImportError(msg, source=source, field=field)
    name, _, count_text = value.strip().partition(":")
    try:
        count = int(count_text) if count_text else 1
    except ValueError:
        msg = f"accelerator count {count_text!r} is not a whole number (e.g. H100:8)"
        raise ClusterImportError(msg, source=source, field=field) from None
    if count <= 0:
        msg = f"accelerator count must be > 0 (got {count})"
        raise ClusterImportError(msg, source=source, field=field)
    return name, count


def _resources(data: Any, source: str, notes: list[str]) -> Mapping[str, Any]:
    """The task's ``resources``, with its first ``any_of``/``ordered`` alternative merged in."""
    if not isinstance(data, Mapping):
        msg = f"a SkyPilot task must be a YAML mapping (got {type(data).__name__})"
        raise ClusterImportError(msg, source=source)
    res = data.get("resources") or {}
    if not isinstance(res, Mapping):
        msg = f"must be a mapping (got {type(res).__name__})"
        raise ClusterImportError(msg, source=source, field="resources")
    for alt_key in ("any_of", "ordered"):
        alts = res.get(alt_key)
        if isinstance(alts, list) and alts and isinstance(alts[0], Mapping):
            notes.append(f"resources.{alt_key} lists {len(alts)} alternatives; priced on the first")
            res = {**{k: v for k, v in res.items() if k != alt_key}, **alts[0]}
    return res


def _num_nodes(data: Mapping[str, Any], source: str) -> int:
    nodes = data.get("num_nodes", 1)
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes <= 0:
        msg = f"must be a whole number > 0 (got {nodes!r})"
        raise ClusterImportError(msg, source=source, field="num_nodes")
    return nodes


def _where(res: Mapping[str, Any], source: str, notes: list[str]) -> tuple[str, str | None]:
    """(provider, region or None) from ``cloud``/``region``, else from ``infra: cloud/region``."""
    cloud = res.get("cloud")
    region = res.get("region")
    infra = res.get("infra")
    if infra is not None and not isinstance(infra, str):
        msg = f"must be a string such as aws/us-east-1 (got {infra!r})"
        raise ClusterImportError(msg, source=source, field="resources.infra")
    if region is not None and not isinstance(region, str):
        msg = f"must be a region name such as us-east-1 (got {region!r})"
        raise ClusterImportError(msg, source=source, field="resources.region")
    if isinstance(infra, str):
        parts = infra.split("/")
        cloud = cloud or parts[0]
        if len(parts) > 1 and parts[1] not in ("", "*"):
            region = region or parts[1]
    provider = str(cloud or "aws").lower()
    if provider not in _CLOUDS:
        msg = f"{cloud!r} is not priced; allowed values: {', '.join(_CLOUDS)}"
        raise ClusterImportError(msg, source=source, field="resources.cloud")
    if cloud is None:
        notes.append("resources.cloud not given; priced on aws")
    return provider, region


def _zone(res: Mapping[str, Any], source: str) -> str | None:
    """The zone from ``zone`` or the third part of ``infra: cloud/region/zone``, else None."""
    zone = res.get("zone")
    if zone is not None and not isinstance(zone, str):
        msg = f"must be a zone name such as us-east-1a (got {zone!r})"
        raise ClusterImportError(msg, source=source, field="resources.zone")
    infra = res.get("infra")
    if zone is None and isinstance(infra, str):
        parts = infra.split("/")
        if len(parts) > 2 and parts[2] not in ("", "*"):
            zone = parts[2]
    return zone


@record
class _Ask:
    """What the task asks for, read and checked: the input of the cluster step."""

    source: str
    provider: str
    region: str | None
    nodes: int
    spot: bool
    accel: tuple[str, int] | None


def _catalog_accelerator(catalog: Catalog, ask: _Ask, name: str) -> Accelerator:
    try:
        return catalog.accelerator(accelerator_id(name))
    except PriceNotFoundError as exc:
        raise ClusterImportError(
            str(exc), source=ask.source, field="resources.accelerators"
        ) from None


def _by_instance_type(itype: Any, ask: _Ask, catalog: Catalog, notes: list[str]) -> _Sections:
    """Cluster sections from ``instance_type``; ``accelerators``, if given, must agree with it."""
    if not isinstance(itype, str):
        msg = f"must be an instance type name (got {itype!r})"
        raise ClusterImportError(msg, source=ask.source, field="resources.instance_type")
    groups = [
        Group(
            element="resources.instance_type",
            name="workers",
            instance=itype,
            count=ask.nodes,
            spot=ask.spot,
        )
    ]
    sections, imported, more = assemble(groups, catalog, provider=ask.provider, source=ask.source)
    notes += more
    if ask.accel is not None:
        inst = catalog.instance(itype)
        want = _catalog_accelerator(catalog, ask, ask.accel[0]).id
        if want != inst.accelerator or ask.accel[1] != inst.accelerator_count:
            msg = (
                f"{ask.accel[0]}:{ask.accel[1]} does not match instance_type {itype} "
                f"({inst.accelerator_count} × {inst.accelerator})"
            )
            raise ClusterImportError(msg, source=ask.source, field="resources.accelerators")
    return sections, imported


def _by_accelerators(
    accel: tuple[str, int], ask: _Ask, catalog: Catalog, notes: list[str]
) -> _Sections:
    """Cluster sections from ``accelerators``: the provider's instance holding exactly that
    many, else the accelerator and GPU count priced on whole nodes of the first that holds it."""
    acc = _catalog_accelerator(catalog, ask, accel[0])
    provider = ask.provider
    options = [
        i for i in catalog.instances_with(acc.id, provider) if i.accelerator_count == accel[1]
    ]
    if options:
        groups = [
            Group(
                element="resources.accelerators",
                name="workers",
                instance=options[0].instance,
                count=ask.nodes,
                spot=ask.spot,
            )
        ]
        sections, imported, more = assemble(groups, catalog, provider=provider, source=ask.source)
        notes += more
        notes.append(f"{accel[0]}:{accel[1]} on {provider} is {options[0].instance}")
        return sections, imported
    candidates = catalog.instances_with(acc.id, provider)
    if not candidates:
        msg = f"no {provider} instance in the catalog holds {acc.id!r}"
        raise ClusterImportError(msg, source=ask.source, field="resources.accelerators")
    notes.append(
        f"no {accel[1]}-GPU {acc.id} instance in the catalog; priced on whole "
        f"{candidates[0].instance} nodes ({candidates[0].accelerator_count} GPUs each)"
    )
    sections = {
        "cluster": {"provider": provider, "gpu": acc.id, "gpus": accel[1] * ask.nodes},
        "purchase": {"spot_fraction": 1.0 if ask.spot else 0.0},
    }
    imported = [
        ("cluster.provider", "resources.cloud"),
        ("cluster.gpu", "resources.accelerators"),
        ("cluster.gpus", "resources.accelerators × num_nodes"),
        ("purchase.spot_fraction", "resources.use_spot"),
    ]
    return sections, imported


def _unsupported(data: Mapping[str, Any], res: Mapping[str, Any]) -> list[str]:
    """Keys read but not priced: resources we do not model, mounts, unknown task keys."""
    unsupported = [f"resources.{key}: not priced" for key in res if key not in _PRICED]
    for key in data:
        if key in {"file_mounts", "storage_mounts", "volumes"}:
            unsupported.append(
                f"{key}: buckets/volumes are not priced; give [data] dataset_gb and location in "
                "the plan"
            )
        elif key not in _NO_COST and key not in {"resources", "num_nodes"}:
            unsupported.append(f"{key}: not recognised, not priced")
    return unsupported


def _read_ask(data: Any, source: str, notes: list[str]) -> tuple[Mapping[str, Any], _Ask]:
    """The task's resources and what they ask for, each value checked, in file order."""
    res = _resources(data, source, notes)
    nodes = _num_nodes(data, source)
    provider, region = _where(res, source, notes)
    accel: tuple[str, int] | None = None
    if res.get("accelerators") is not None:
        accel = _accelerators(res["accelerators"], source, notes)
    spot = res.get("use_spot", False)
    if not isinstance(spot, bool):
        msg = f"must be true or false (got {spot!r})"
        raise ClusterImportError(msg, source=source, field="resources.use_spot")
    ask = _Ask(source=source, provider=provider, region=region, nodes=nodes, spot=spot, accel=accel)
    return res, ask


def _cluster(res: Mapping[str, Any], ask: _Ask, catalog: Catalog, notes: list[str]) -> _Sections:
    itype = res.get("instance_type")
    if itype is not None:
        return _by_instance_type(itype, ask, catalog, notes)
    if ask.accel is not None:
        return _by_accelerators(ask.accel, ask, catalog, notes)
    msg = (
        "no GPU: give resources.accelerators (e.g. H100:8) or resources.instance_type (e.g. "
        "p5.48xlarge)"
    )
    raise ClusterImportError(msg, source=ask.source, field="resources")


def parse(text: str, *, source: str, catalog: Catalog) -> ImportReport:
    """A SkyPilot task into cluster/purchase/storage plan sections."""
    data = _load(text, source)
    notes: list[str] = []
    res, ask = _read_ask(data, source, notes)
    sections, imported = _cluster(res, ask, catalog, notes)
    if ask.region is not None:
        sections["cluster"]["region"] = ask.region
        imported.append(
            ("cluster.region", "resources.region" if res.get("region") else "resources.infra")
        )
    zone = _zone(res, source)
    zone_region = aws_zone_region(zone) if ask.provider == "aws" else None
    if ask.region is None and zone_region is not None:
        # An AWS zone names its region (us-east-1c is in us-east-1): the zone alone was dropped.
        sections["cluster"]["region"] = zone_region
        imported.append(("cluster.region", "resources.zone"))
        ask = replace(ask, region=zone_region)
    if zone is not None and ask.region is not None:
        # The zone decides inter-AZ transfer to zonal data (FSx, EBS): it was dropped.
        sections["cluster"]["zone"] = zone
        imported.append(
            ("cluster.zone", "resources.zone" if res.get("zone") else "resources.infra")
        )
    if "use_spot" in res:
        imported = [
            (f, "resources.use_spot" if f == "purchase.spot_fraction" else e) for f, e in imported
        ]
    else:
        imported = [(f, e) for f, e in imported if f != "purchase.spot_fraction"]
        sections.pop("purchase", None)
    disk = res.get("disk_size")
    if disk is not None:
        # SkyPilot takes GB as a number; "256GB" used to be dropped silently.
        gb = number(disk, source=source, element="resources.disk_size", minimum=1, allow_str=False)
        sections["storage"] = {"ebs_gb_per_node": gb}
        imported.append(("storage.ebs_gb_per_node", "resources.disk_size"))
    return ImportReport(
        kind="skypilot",
        source=source,
        plan=sections,
        imported=tuple(imported),
        unsupported=tuple(_unsupported(data, res)),
        notes=tuple(notes),
    )
