"""SkyPilot task YAML: ``resources`` (accelerators, instance_type, use_spot, cloud, region) and ``num_nodes``.

SkyPilot writes accelerators as ``H100:8``, ``{H100: 8}`` or a set of alternatives; a task with
alternatives (``any_of``/``ordered`` or several accelerators) is priced on the first one and the
report says so. ``infra: aws/us-east-1`` (newer SkyPilot) is read like ``cloud`` + ``region``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from trainbill.catalog import Catalog
from trainbill.errors import PriceNotFoundError, unreadable_value_message
from trainbill.importers import ClusterImportError, ImportReport
from trainbill.importers._groups import Group, assemble, number

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
        "any_of",
        "ordered",
    }
)
_NO_COST = frozenset({"name", "run", "setup", "envs", "workdir", "secrets", "config"})


def accelerator_id(name: str) -> str:
    """Catalog accelerator id of a SkyPilot accelerator name (``A100-80GB`` → ``a100-80gb``)."""
    return SKYPILOT_ACCELERATOR_NAMES.get(
        name, SKYPILOT_ACCELERATOR_NAMES.get(name.upper(), name.lower())
    )


def _load(text: str, source: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc.__class__.__name__
        msg = f"invalid YAML: {problem}{where}"
        raise ClusterImportError(msg, source=source) from None
    except ValueError as exc:  # parsed, but a value cannot be built (2024-02-30, !!int x)
        raise ClusterImportError(
            f"invalid YAML: {unreadable_value_message(exc)}", source=source
        ) from None


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


def parse(text: str, *, source: str, catalog: Catalog) -> ImportReport:
    """A SkyPilot task into cluster/purchase/storage plan sections."""
    data = _load(text, source)
    if not isinstance(data, Mapping):
        msg = f"a SkyPilot task must be a YAML mapping (got {type(data).__name__})"
        raise ClusterImportError(msg, source=source)
    notes: list[str] = []
    unsupported: list[str] = []
    res = data.get("resources") or {}
    if not isinstance(res, Mapping):
        msg = f"must be a mapping (got {type(res).__name__})"
        raise ClusterImportError(msg, source=source, field="resources")
    for alt_key in ("any_of", "ordered"):
        alts = res.get(alt_key)
        if isinstance(alts, list) and alts and isinstance(alts[0], Mapping):
            notes.append(f"resources.{alt_key} lists {len(alts)} alternatives; priced on the first")
            res = {**{k: v for k, v in res.items() if k != alt_key}, **alts[0]}
    nodes = data.get("num_nodes", 1)
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes <= 0:
        msg = f"must be a whole number > 0 (got {nodes!r})"
        raise ClusterImportError(msg, source=source, field="num_nodes")
    imported: list[tuple[str, str]] = []
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
    accel: tuple[str, int] | None = None
    if res.get("accelerators") is not None:
        accel = _accelerators(res["accelerators"], source, notes)
    itype = res.get("instance_type")
    spot = res.get("use_spot", False)
    if not isinstance(spot, bool):
        msg = f"must be true or false (got {spot!r})"
        raise ClusterImportError(msg, source=source, field="resources.use_spot")
    sections: dict[str, Any]
    if itype is not None:
        if not isinstance(itype, str):
            msg = f"must be an instance type name (got {itype!r})"
            raise ClusterImportError(msg, source=source, field="resources.instance_type")
        groups = [
            Group(
                element="resources.instance_type",
                name="workers",
                instance=itype,
                count=nodes,
                spot=spot,
            )
        ]
        sections, imp, more = assemble(groups, catalog, provider=provider, source=source)
        imported += imp
        notes += more
        if accel is not None:
            inst = catalog.instance(itype)
            try:
                want = catalog.accelerator(accelerator_id(accel[0])).id
            except PriceNotFoundError as exc:
                raise ClusterImportError(
                    str(exc), source=source, field="resources.accelerators"
                ) from None
            if want != inst.accelerator or accel[1] != inst.accelerator_count:
                msg = (
                    f"{accel[0]}:{accel[1]} does not match instance_type {itype} "
                    f"({inst.accelerator_count} × {inst.accelerator})"
                )
                raise ClusterImportError(msg, source=source, field="resources.accelerators")
    elif accel is not None:
        try:
            acc = catalog.accelerator(accelerator_id(accel[0]))
        except PriceNotFoundError as exc:
            raise ClusterImportError(
                str(exc), source=source, field="resources.accelerators"
            ) from None
        options = [
            i for i in catalog.instances_with(acc.id, provider) if i.accelerator_count == accel[1]
        ]
        if options:
            groups = [
                Group(
                    element="resources.accelerators",
                    name="workers",
                    instance=options[0].instance,
                    count=nodes,
                    spot=spot,
                )
            ]
            sections, imp, more = assemble(groups, catalog, provider=provider, source=source)
            imported += imp
            notes += more
            notes.append(f"{accel[0]}:{accel[1]} on {provider} is {options[0].instance}")
        else:
            candidates = catalog.instances_with(acc.id, provider)
            if not candidates:
                msg = f"no {provider} instance in the catalog holds {acc.id!r}"
                raise ClusterImportError(msg, source=source, field="resources.accelerators")
            sections = {
                "cluster": {"provider": provider, "gpu": acc.id, "gpus": accel[1] * nodes},
                "purchase": {"spot_fraction": 1.0 if spot else 0.0},
            }
            imported += [
                ("cluster.provider", "resources.cloud"),
                ("cluster.gpu", "resources.accelerators"),
                ("cluster.gpus", "resources.accelerators × num_nodes"),
                ("purchase.spot_fraction", "resources.use_spot"),
            ]
            notes.append(
                f"no {accel[1]}-GPU {acc.id} instance in the catalog; priced on whole "
                f"{candidates[0].instance} nodes ({candidates[0].accelerator_count} GPUs each)"
            )
    else:
        msg = "no GPU: give resources.accelerators (e.g. H100:8) or resources.instance_type (e.g. p5.48xlarge)"
        raise ClusterImportError(msg, source=source, field="resources")
    cluster = sections["cluster"]
    if region is not None:
        cluster["region"] = str(region)
        imported.append(
            ("cluster.region", "resources.region" if res.get("region") else "resources.infra")
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
    for key in res:
        if key not in _PRICED:
            unsupported.append(f"resources.{key}: not priced")
    for key in data:
        if key in {"file_mounts", "storage_mounts", "volumes"}:
            unsupported.append(
                f"{key}: buckets/volumes are not priced; give [data] dataset_gb and location in the plan"
            )
        elif key not in _NO_COST and key not in {"resources", "num_nodes"}:
            unsupported.append(f"{key}: not recognised, not priced")
    return ImportReport(
        kind="skypilot",
        source=source,
        plan=sections,
        imported=tuple(imported),
        unsupported=tuple(unsupported),
        notes=tuple(notes),
    )
