"""Terraform: the ``terraform show -json`` plan (``planned_values``) or state (``values``).

Resources are read from the root module and every child module. Instances come from
``aws_instance`` (one per resource), ``aws_eks_node_group`` (``scaling_config.desired_size``)
and ``aws_autoscaling_group`` (``desired_capacity``), with the instance type taken from a
referenced ``aws_launch_template`` when the group does not state it. ``aws_ebs_volume``,
``aws_fsx_lustre_file_system``, ``aws_nat_gateway`` and ``aws_eip`` set storage and network
values. Every other resource type is listed as unsupported (not priced), never dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from trainbill.catalog import Catalog
from trainbill.errors import unreadable_value_message
from trainbill.importers import ClusterImportError, ImportReport
from trainbill.importers._groups import Group, assemble, number

__all__ = ["SUPPORTED_TYPES", "parse"]

SUPPORTED_TYPES = (
    "aws_instance",
    "aws_launch_template",
    "aws_eks_node_group",
    "aws_eks_cluster",
    "aws_autoscaling_group",
    "aws_ebs_volume",
    "aws_fsx_lustre_file_system",
    "aws_nat_gateway",
    "aws_eip",
)
#: Terraform sizes volumes and FSx in GiB; plans use GB.
_GB_PER_GIB = 1.073741824
_FSX_PERSISTENT = (125, 250, 500, 1000)


def _load(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        raise ClusterImportError(msg, source=source) from None
    except ValueError as exc:  # parsed, but a value cannot be built (a 5,000-digit number)
        raise ClusterImportError(
            f"invalid JSON: {unreadable_value_message(exc)}", source=source
        ) from None


def _list(module: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = module.get(key) or []
    if not isinstance(value, list):
        msg = f"must be a list (got {type(value).__name__})"
        raise ClusterImportError(msg, field=f"{where}.{key}")
    return value


def _resources(
    module: Mapping[str, Any], where: str = "planned_values.root_module"
) -> Iterator[Mapping[str, Any]]:
    for r in _list(module, "resources", where):
        if isinstance(r, Mapping) and r.get("mode", "managed") == "managed":
            yield r
    for i, child in enumerate(_list(module, "child_modules", where)):
        if isinstance(child, Mapping):
            yield from _resources(child, f"{where}.child_modules[{i}]")


def _block(values: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """Terraform nested blocks are lists of one object in JSON; missing → {}."""
    v = values.get(key)
    if isinstance(v, list) and v and isinstance(v[0], Mapping):
        return v[0]
    if isinstance(v, Mapping):
        return v
    return {}


def _count(value: Any, address: str, field: str, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"must be a whole number >= 0 (got {value!r})"
        raise ClusterImportError(msg, source=source, field=f"{address}.{field}")
    return value


def _fsx_tier(values: Mapping[str, Any], address: str, source: str) -> str:
    dep = str(values.get("deployment_type") or "SCRATCH_2").upper()
    if dep.startswith("SCRATCH"):
        return "scratch_2"
    per = values.get("per_unit_storage_throughput")
    if dep.startswith("PERSISTENT") and per in _FSX_PERSISTENT:
        return f"persistent_{per}"
    msg = (
        f"deployment_type {dep} with per_unit_storage_throughput {per!r} is not priced; allowed: "
        f"SCRATCH_1/SCRATCH_2, or PERSISTENT_1/PERSISTENT_2 with {', '.join(map(str, _FSX_PERSISTENT))}"
    )
    raise ClusterImportError(msg, source=source, field=address)


def parse(text: str, *, source: str, catalog: Catalog) -> ImportReport:
    """Instances, storage and network resources of a Terraform plan into plan sections."""
    data = _load(text, source)
    if not isinstance(data, Mapping):
        msg = "expected the JSON object written by 'terraform show -json'"
        raise ClusterImportError(msg, source=source)
    pv = data.get("planned_values") or data.get("values")
    root = pv.get("root_module") if isinstance(pv, Mapping) else None
    if not isinstance(root, Mapping):
        msg = "no planned_values.root_module (is this 'terraform show -json plan.out' output?)"
        raise ClusterImportError(msg, source=source)
    try:
        resources = list(_resources(root))
    except ClusterImportError as exc:
        raise ClusterImportError(str(exc), source=source) from None
    for r in resources:
        vals = r.get("values")
        if vals is not None and not isinstance(vals, Mapping):
            address = str(r.get("address") or f"{r.get('type')}.{r.get('name')}")
            msg = f"must be an object of resource attributes (got {type(vals).__name__})"
            raise ClusterImportError(msg, source=source, field=f"{address}.values")
    templates: dict[str, tuple[str | None, str]] = {}
    for r in resources:
        if r.get("type") == "aws_launch_template":
            tv = r.get("values") or {}
            for key in (tv.get("name"), r.get("name"), r.get("address")):
                if isinstance(key, str):
                    templates[key] = (tv.get("instance_type"), str(r.get("address")))
    used_templates: set[str] = set()

    def from_template(ref: Mapping[str, Any], address: str) -> str:
        name = ref.get("name") or ref.get("launch_template_name") or ref.get("id")
        if isinstance(name, str) and name in templates and templates[name][0]:
            used_templates.add(templates[name][1])
            return str(templates[name][0])
        msg = "no instance type: neither the resource nor a launch template in this plan states one"
        raise ClusterImportError(msg, source=source, field=address)

    groups: list[Group] = []
    unsupported: list[str] = []
    notes: list[str] = []
    imported_extra: list[tuple[str, str]] = []
    ebs_gib = 0.0
    ebs_iops = 0.0
    ebs_tput = 0.0
    ebs_elements: list[str] = []
    fsx_gib = 0.0
    fsx_tier: str | None = None
    fsx_elements: list[str] = []
    nat = 0
    nat_elements: list[str] = []
    eips = 0
    eks = False
    region: str | None = None
    for r in resources:
        rtype = str(r.get("type"))
        address = str(r.get("address") or f"{rtype}.{r.get('name')}")
        v: Mapping[str, Any] = r.get("values") or {}
        az = v.get("availability_zone")
        if region is None and isinstance(az, str) and az[-1:].isalpha():
            region = az[:-1]
        if rtype == "aws_instance":
            itype = v.get("instance_type") or from_template(_block(v, "launch_template"), address)
            market = _block(v, "instance_market_options").get("market_type")
            groups.append(
                Group(
                    element=address,
                    name="instances",
                    instance=str(itype),
                    count=1,
                    spot=market == "spot",
                )
            )
            root_gb = _block(v, "root_block_device").get("volume_size")
            if root_gb is not None:
                ebs_gib += number(
                    root_gb, source=source, element=f"{address}.root_block_device.volume_size"
                )
                ebs_elements.append(f"{address}.root_block_device")
        elif rtype == "aws_eks_node_group":
            eks = True
            types = v.get("instance_types") or []
            if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
                msg = f"must be a list of instance type names (got {types!r})"
                raise ClusterImportError(msg, source=source, field=f"{address}.instance_types")
            if len(types) > 1:
                notes.append(
                    f"{address} lists {len(types)} instance types; priced on the first ({types[0]})"
                )
            itype = types[0] if types else from_template(_block(v, "launch_template"), address)
            size = _count(
                _block(v, "scaling_config").get("desired_size"),
                address,
                "scaling_config.desired_size",
                source,
            )
            if size:
                spot = str(v.get("capacity_type") or "ON_DEMAND").upper() == "SPOT"
                groups.append(
                    Group(
                        element=address,
                        name=str(v.get("node_group_name") or r.get("name")),
                        instance=str(itype),
                        count=size,
                        spot=spot,
                    )
                )
        elif rtype == "aws_autoscaling_group":
            size = _count(
                v.get("desired_capacity", v.get("min_size")), address, "desired_capacity", source
            )
            mip = _block(v, "mixed_instances_policy")
            on_demand_pct = 100.0
            if mip:
                spec = _block(_block(mip, "launch_template"), "launch_template_specification")
                overrides = _block(mip, "launch_template").get("override") or []
                if not isinstance(overrides, list) or not all(
                    isinstance(o, Mapping) for o in overrides
                ):
                    msg = f"must be a list of override blocks (got {overrides!r})"
                    raise ClusterImportError(
                        msg,
                        source=source,
                        field=f"{address}.mixed_instances_policy.launch_template.override",
                    )
                itype = (overrides[0].get("instance_type") if overrides else None) or from_template(
                    spec, address
                )
                dist = _block(mip, "instances_distribution")
                pct_el = f"{address}.mixed_instances_policy.instances_distribution.on_demand_percentage_above_base_capacity"
                on_demand_pct = number(
                    dist.get("on_demand_percentage_above_base_capacity", 100),
                    source=source,
                    element=pct_el,
                )
                if on_demand_pct > 100:
                    msg = f"must be a percentage between 0 and 100 (got {on_demand_pct:g})"
                    raise ClusterImportError(msg, source=source, field=pct_el)
            else:
                itype = from_template(_block(v, "launch_template"), address)
            spot_count = round(size * (100.0 - on_demand_pct) / 100.0)
            name = str(r.get("name"))
            if size - spot_count:
                groups.append(
                    Group(element=address, name=name, instance=str(itype), count=size - spot_count)
                )
            if spot_count:
                groups.append(
                    Group(
                        element=address, name=name, instance=str(itype), count=spot_count, spot=True
                    )
                )
                notes.append(
                    f"{address}: {spot_count} of {size} instances on spot (on_demand_percentage_above_base_capacity)"
                )
        elif rtype == "aws_ebs_volume":
            ebs_gib += number(v.get("size") or 0, source=source, element=f"{address}.size")
            ebs_iops = max(
                ebs_iops, number(v.get("iops") or 0, source=source, element=f"{address}.iops")
            )
            ebs_tput = max(
                ebs_tput,
                number(v.get("throughput") or 0, source=source, element=f"{address}.throughput"),
            )
            ebs_elements.append(address)
            if v.get("type") not in (None, "gp3"):
                notes.append(f"{address}: volume type {v.get('type')} priced as gp3")
        elif rtype == "aws_fsx_lustre_file_system":
            tier = _fsx_tier(v, address, source)
            if fsx_tier is not None and tier != fsx_tier:
                notes.append(f"{address}: FSx tier {tier} priced as {fsx_tier} (one tier per plan)")
            fsx_tier = fsx_tier or tier
            fsx_gib += number(
                v.get("storage_capacity") or 0, source=source, element=f"{address}.storage_capacity"
            )
            fsx_elements.append(address)
        elif rtype == "aws_nat_gateway":
            nat += 1
            nat_elements.append(address)
        elif rtype == "aws_eip":
            eips += 1
        elif rtype == "aws_eks_cluster":
            eks = True
        elif rtype != "aws_launch_template":
            unsupported.append(f"{address} ({rtype}): resource type not supported, not priced")
    for _itype, address in templates.values():
        if address not in used_templates and not any(g.element == address for g in groups):
            unsupported.append(
                f"{address} (aws_launch_template): not used by an instance or group here, not priced"
            )
    unsupported = list(dict.fromkeys(unsupported))
    if not groups:
        msg = "no GPU instances found: no aws_instance, aws_eks_node_group or aws_autoscaling_group with instances"
        raise ClusterImportError(msg, source=source)
    sections, imported, more = assemble(groups, catalog, provider="aws", source=source)
    notes += more
    cluster = sections["cluster"]
    nodes = int(cluster["nodes"])
    if eks:
        cluster["orchestrator"] = "eks"
        imported.append(("cluster.orchestrator", "aws_eks_cluster/aws_eks_node_group"))
    cfg = data.get("configuration") or {}
    if not isinstance(cfg, Mapping):
        cfg = {}
    expressions = _block(_block(cfg, "provider_config"), "aws").get("expressions", {})
    cfg_region = expressions.get("region", {}) if isinstance(expressions, Mapping) else None
    if isinstance(cfg_region, Mapping) and isinstance(cfg_region.get("constant_value"), str):
        region = cfg_region["constant_value"]
        imported_extra.append(("cluster.region", "configuration.provider_config.aws.region"))
    elif region is not None:
        imported_extra.append(("cluster.region", "availability_zone"))
    if region is not None:
        cluster["region"] = region
    storage: dict[str, Any] = {}
    if ebs_elements:
        storage["ebs_gb_per_node"] = ebs_gib * _GB_PER_GIB / nodes
        imported_extra.append(("storage.ebs_gb_per_node", ", ".join(ebs_elements)))
        notes.append(
            f"EBS: {ebs_gib:,.0f} GiB in {len(ebs_elements)} volume(s) spread over {nodes} GPU nodes"
        )
        if ebs_iops:
            storage["ebs_iops"] = ebs_iops
            imported_extra.append(("storage.ebs_iops", "aws_ebs_volume.iops"))
        if ebs_tput:
            storage["ebs_throughput_mibps"] = ebs_tput
            imported_extra.append(("storage.ebs_throughput_mibps", "aws_ebs_volume.throughput"))
    if fsx_elements:
        storage["fsx_capacity_gb"] = fsx_gib * _GB_PER_GIB
        storage["fsx_tier"] = fsx_tier
        imported_extra += [
            ("storage.fsx_capacity_gb", ", ".join(fsx_elements)),
            ("storage.fsx_tier", fsx_elements[0]),
        ]
    if storage:
        sections["storage"] = storage
    network: dict[str, Any] = {"nat_gateways": nat}
    imported_extra.append(
        ("network.nat_gateways", ", ".join(nat_elements) or "no aws_nat_gateway in plan")
    )
    if eips:
        network["public_ips_per_node"] = max(0, eips - nat) / nodes
        imported_extra.append(("network.public_ips_per_node", f"{eips} aws_eip"))
        notes.append(
            f"{eips} Elastic IP(s): one per NAT gateway is billed with the NAT, the rest spread over {nodes} nodes"
        )
    sections["network"] = network
    return ImportReport(
        kind="terraform",
        source=source,
        plan=sections,
        imported=tuple(imported + imported_extra),
        unsupported=tuple(unsupported),
        notes=tuple(notes),
    )
