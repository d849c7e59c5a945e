"""Terraform: the ``terraform show -json`` plan (``planned_values``) or state (``values``).

Resources are read from the root module and every child module. Instances come from
``aws_instance`` (one per resource), ``aws_eks_node_group`` (``scaling_config.desired_size``)
and ``aws_autoscaling_group`` (``desired_capacity``), with the instance type taken from a
referenced ``aws_launch_template`` when the group does not state it. ``aws_ebs_volume``,
``aws_fsx_lustre_file_system``, ``aws_nat_gateway`` and ``aws_eip`` set storage and network
values. Every other resource type is listed as unsupported (not priced), never dropped silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from trainbill.catalog import Catalog
from trainbill.importers import ClusterImportError, ImportReport
from trainbill.importers._groups import Group, assemble, aws_zone_region, number

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
_FSX_PERSISTENT = (125, 250, 500, 1000)


def _load(text: str, source: str) -> Any:
    """The JSON document, through the input gate's parser (depth and number caps)."""
    from trainbill._io import parse_json

    def error(message: str, src: str) -> ClusterImportError:
        if message.startswith("invalid JSON:") and " at line " in message:
            message += (
                "; the terraform importer reads the JSON of 'terraform show -json plan.out' (or "
                "of the state), not .tf (HCL) files"
            )
        return ClusterImportError(message, source=src)

    return parse_json(text, source=source, error=error)


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
    if dep == "PERSISTENT_2" and per in _FSX_PERSISTENT:
        return f"persistent_{per}"
    # PERSISTENT_1 offers 50, 100 or 200 MB/s/TiB on SSD (12 or 40 on HDD), PERSISTENT_2 125,
    # 250, 500 or 1000 (AWS FSx for Lustre deployment options): only the latter are priced.
    msg = (
        f"deployment_type {dep} with per_unit_storage_throughput {per!r} is not priced; allowed: "
        "SCRATCH_1/SCRATCH_2, or PERSISTENT_2 with "
        f"{', '.join(map(str, _FSX_PERSISTENT))} (the catalog has no PERSISTENT_1 tier: add "
        "its price with --catalog, or price it as the nearest PERSISTENT_2 tier)"
    )
    raise ClusterImportError(msg, source=source, field=address)


def _root_resources(data: Any, source: str) -> list[Mapping[str, Any]]:
    """Every managed resource of the plan (or state), each with an object of attributes."""
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
            msg = f"must be an object of resource attributes (got {type(vals).__name__})"
            raise ClusterImportError(msg, source=source, field=f"{_address(r)}.values")
    return resources


def _address(r: Mapping[str, Any]) -> str:
    return str(r.get("address") or f"{r.get('type')}.{r.get('name')}")


class _Templates:
    """The plan's launch templates, by every name a group may use to refer to one."""

    def __init__(self, resources: list[Mapping[str, Any]], source: str) -> None:
        self.source = source
        self.by_name: dict[str, tuple[str | None, str]] = {}
        #: Each template's attributes by its address (market options, block devices).
        self.values: dict[str, Mapping[str, Any]] = {}
        self.used: set[str] = set()
        for r in resources:
            if r.get("type") == "aws_launch_template":
                tv = r.get("values") or {}
                self.values[str(r.get("address"))] = tv
                for key in (tv.get("name"), r.get("name"), r.get("address")):
                    if isinstance(key, str):
                        self.by_name[key] = (tv.get("instance_type"), str(r.get("address")))

    def template(self, ref: Mapping[str, Any]) -> Mapping[str, Any]:
        """The attributes of the template ``ref`` names (marking it used), or {} when the plan
        has none by that name."""
        name = ref.get("name") or ref.get("launch_template_name") or ref.get("id")
        if not isinstance(name, str) or name not in self.by_name:
            return {}
        address = self.by_name[name][1]
        self.used.add(address)
        return self.values.get(address, {})

    def instance_type(self, ref: Mapping[str, Any], address: str) -> str:
        """The instance type of the template ``ref`` names (marking it used), else an error."""
        itype = self.template(ref).get("instance_type")
        if itype:
            return str(itype)
        msg = "no instance type: neither the resource nor a launch template in this plan states one"
        raise ClusterImportError(msg, source=self.source, field=address)

    def unused(self, groups: list[Group]) -> list[str]:
        """One unsupported-resource line per template no instance or group used."""
        return [
            f"{address} (aws_launch_template): not used by an instance or group here, not priced"
            for _itype, address in self.by_name.values()
            if address not in self.used and not any(g.element == address for g in groups)
        ]


@dataclass(kw_only=True)
class _Scan:
    """What the resources add up to, filled in resource by resource (``add``)."""

    source: str
    templates: _Templates
    groups: list[Group] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ebs_gib: float = 0.0
    #: Each ``aws_ebs_volume``'s provisioned IOPS and throughput (0: the free baseline).
    ebs_iops: list[float] = field(default_factory=list)
    ebs_tput: list[float] = field(default_factory=list)
    ebs_elements: list[str] = field(default_factory=list)
    fsx_gib: float = 0.0
    fsx_tier: str | None = None
    fsx_elements: list[str] = field(default_factory=list)
    nat_elements: list[str] = field(default_factory=list)
    eips: int = 0
    eks: bool = False
    region: str | None = None

    def number(self, value: Any, element: str) -> float:
        return number(value, source=self.source, element=element)

    def add(self, r: Mapping[str, Any]) -> None:
        """Fold one resource in: its zone's region, then what its type contributes."""
        rtype = str(r.get("type"))
        address = _address(r)
        v: Mapping[str, Any] = r.get("values") or {}
        az = v.get("availability_zone")
        zones = v.get("availability_zones")  # an autoscaling group's list
        if az is None and isinstance(zones, list) and zones and isinstance(zones[0], str):
            az = zones[0]
        if self.region is None:
            self.region = aws_zone_region(az)
        handler = _HANDLERS.get(rtype)
        if handler is not None:
            handler(self, v, address, r)
        elif rtype != "aws_launch_template":
            self.unsupported.append(f"{address} ({rtype}): resource type not supported, not priced")

    def instance(self, v: Mapping[str, Any], address: str, _r: Mapping[str, Any]) -> None:
        """``aws_instance``: one node (spot by its market options) and its root volume."""
        itype = v.get("instance_type") or self.templates.instance_type(
            _block(v, "launch_template"), address
        )
        market = _block(v, "instance_market_options").get("market_type")
        self.groups.append(
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
            self.ebs_gib += self.number(root_gb, f"{address}.root_block_device.volume_size")
            self.ebs_elements.append(f"{address}.root_block_device")
        self.block_devices(v.get("ebs_block_device"), f"{address}.ebs_block_device", 1)

    def block_devices(self, devices: Any, element: str, count: int) -> None:
        """EBS volumes declared inside an instance, or a launch template's block device
        mappings, once per instance: sizes add up, IOPS and throughput per volume (they were
        dropped, and only the root volume priced)."""
        if isinstance(devices, Mapping):
            devices = [devices]
        if not isinstance(devices, list):
            return
        for i, dev in enumerate(d for d in devices if isinstance(d, Mapping)):
            ebs = _block(dev, "ebs") or dev  # a template nests it under "ebs"
            size = ebs.get("volume_size")
            if size is None:
                continue
            where = f"{element}[{i}]"
            self.ebs_gib += count * self.number(size, f"{where}.volume_size")
            self.ebs_iops += [self.number(ebs.get("iops") or 0, f"{where}.iops")] * count
            self.ebs_tput += [
                self.number(ebs.get("throughput") or 0, f"{where}.throughput")
            ] * count
            self.ebs_elements.append(where)

    def eks_node_group(self, v: Mapping[str, Any], address: str, r: Mapping[str, Any]) -> None:
        """``aws_eks_node_group``: ``desired_size`` nodes of its first instance type."""
        self.eks = True
        types = v.get("instance_types") or []
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            msg = f"must be a list of instance type names (got {types!r})"
            raise ClusterImportError(msg, source=self.source, field=f"{address}.instance_types")
        if len(types) > 1:
            self.notes.append(
                f"{address} lists {len(types)} instance types; priced on the first ({types[0]})"
            )
        itype = (
            types[0]
            if types
            else self.templates.instance_type(_block(v, "launch_template"), address)
        )
        size = _count(
            _block(v, "scaling_config").get("desired_size"),
            address,
            "scaling_config.desired_size",
            self.source,
        )
        if size:
            spot = str(v.get("capacity_type") or "ON_DEMAND").upper() == "SPOT"
            name = str(v.get("node_group_name") or r.get("name"))
            disk = v.get("disk_size")
            if disk is not None:  # each node's root volume (EKS default 20 GiB when unset)
                self.ebs_gib += size * self.number(disk, f"{address}.disk_size")
                self.ebs_elements.append(f"{address}.disk_size")
            # A node group's launch template (its volumes; the instance type when not listed).
            self.block_devices(
                self.templates.template(_block(v, "launch_template")).get("block_device_mappings"),
                f"{address} launch template block_device_mappings",
                size,
            )
            self.groups.append(
                Group(element=address, name=name, instance=str(itype), count=size, spot=spot)
            )

    def autoscaling_group(self, v: Mapping[str, Any], address: str, r: Mapping[str, Any]) -> None:
        """``aws_autoscaling_group``: ``desired_capacity`` nodes, split on-demand / spot."""
        size = _count(
            v.get("desired_capacity", v.get("min_size")), address, "desired_capacity", self.source
        )
        mip = _block(v, "mixed_instances_policy")
        base = 0.0
        if mip:
            itype, on_demand_pct, base = self._mixed_policy(mip, address)
            spec = _block(_block(mip, "launch_template"), "launch_template_specification")
        else:
            spec = _block(v, "launch_template")
            itype = self.templates.instance_type(spec, address)
            market = _block(self.templates.template(spec), "instance_market_options")
            # A template that asks for spot makes every instance of the group spot.
            on_demand_pct = 0.0 if market.get("market_type") == "spot" else 100.0
        self.block_devices(
            self.templates.template(spec).get("block_device_mappings"),
            f"{address} launch template block_device_mappings",
            size,
        )
        # The percentage applies above the on-demand base only (AWS Auto Scaling, instances
        # distribution): 10 instances, base 4, 50% above it: 4 + 3 on demand, 3 on spot.
        above = max(size - int(base), 0)
        # A fractional on-demand count is rounded up (in favour of on-demand, an assumption:
        # the AWS Auto Scaling documentation was not read on this point): 3 at 50% is 2 + 1.
        # Python's round() rounded halves to even, so 3 gave 2 on spot and 5 gave 2.
        spot_count = above - math.ceil(above * on_demand_pct / 100.0 - 1e-9)
        name = str(r.get("name"))
        if size - spot_count:
            self.groups.append(
                Group(element=address, name=name, instance=str(itype), count=size - spot_count)
            )
        if spot_count:
            self.groups.append(
                Group(element=address, name=name, instance=str(itype), count=spot_count, spot=True)
            )
            self.notes.append(
                f"{address}: {spot_count} of {size} instances on spot "
                + (
                    f"(on_demand_base_capacity {base:g}, on_demand_percentage_above_base_capacity "
                    f"{on_demand_pct:g})"
                    if mip
                    else "(its launch template's instance_market_options)"
                )
            )

    def _mixed_policy(self, mip: Mapping[str, Any], address: str) -> tuple[Any, float, float]:
        """(instance type, on-demand percentage above the base, on-demand base) of a
        mixed-instances policy."""
        spec = _block(_block(mip, "launch_template"), "launch_template_specification")
        overrides = _block(mip, "launch_template").get("override") or []
        if not isinstance(overrides, list) or not all(isinstance(o, Mapping) for o in overrides):
            msg = f"must be a list of override blocks (got {overrides!r})"
            raise ClusterImportError(
                msg,
                source=self.source,
                field=f"{address}.mixed_instances_policy.launch_template.override",
            )
        self.templates.template(spec)  # used by the group, whichever type it runs
        itype = (overrides[0].get("instance_type") if overrides else None) or (
            self.templates.instance_type(spec, address)
        )
        if len(overrides) > 1:
            self.notes.append(
                f"{address} lists {len(overrides)} instance types; priced on the first ({itype})"
            )
        dist = _block(mip, "instances_distribution")
        pct_el = (
            f"{address}.mixed_instances_policy.instances_distribution"
            ".on_demand_percentage_above_base_capacity"
        )
        on_demand_pct = self.number(
            dist.get("on_demand_percentage_above_base_capacity", 100), pct_el
        )
        if on_demand_pct > 100:
            msg = f"must be a percentage between 0 and 100 (got {on_demand_pct:g})"
            raise ClusterImportError(msg, source=self.source, field=pct_el)
        base_el = f"{address}.mixed_instances_policy.instances_distribution.on_demand_base_capacity"
        base = self.number(dist.get("on_demand_base_capacity", 0) or 0, base_el)
        return itype, on_demand_pct, base

    def ebs_volume(self, v: Mapping[str, Any], address: str, _r: Mapping[str, Any]) -> None:
        """``aws_ebs_volume``: its size adds up; its IOPS and throughput are billed per volume
        (``_storage`` spreads what they add above the baseline over the nodes)."""
        self.ebs_gib += self.number(v.get("size") or 0, f"{address}.size")
        self.ebs_iops.append(self.number(v.get("iops") or 0, f"{address}.iops"))
        self.ebs_tput.append(self.number(v.get("throughput") or 0, f"{address}.throughput"))
        self.ebs_elements.append(address)
        if v.get("type") not in (None, "gp3"):
            self.notes.append(f"{address}: volume type {v.get('type')} priced as gp3")

    def fsx(self, v: Mapping[str, Any], address: str, _r: Mapping[str, Any]) -> None:
        """``aws_fsx_lustre_file_system``: capacity adds up, priced at the first tier found."""
        tier = _fsx_tier(v, address, self.source)
        if self.fsx_tier is not None and tier != self.fsx_tier:
            self.notes.append(
                f"{address}: FSx tier {tier} priced as {self.fsx_tier} (one tier per plan)"
            )
        self.fsx_tier = self.fsx_tier or tier
        self.fsx_gib += self.number(v.get("storage_capacity") or 0, f"{address}.storage_capacity")
        self.fsx_elements.append(address)

    def nat_gateway(self, _v: Mapping[str, Any], address: str, _r: Mapping[str, Any]) -> None:
        self.nat_elements.append(address)

    def eip(self, _v: Mapping[str, Any], _address: str, _r: Mapping[str, Any]) -> None:
        self.eips += 1

    def eks_cluster(self, _v: Mapping[str, Any], _address: str, _r: Mapping[str, Any]) -> None:
        self.eks = True


#: What each supported resource type contributes (``aws_launch_template`` is read up front).
_HANDLERS: dict[str, Callable[[_Scan, Mapping[str, Any], str, Mapping[str, Any]], None]] = {
    "aws_instance": _Scan.instance,
    "aws_eks_node_group": _Scan.eks_node_group,
    "aws_autoscaling_group": _Scan.autoscaling_group,
    "aws_ebs_volume": _Scan.ebs_volume,
    "aws_fsx_lustre_file_system": _Scan.fsx,
    "aws_nat_gateway": _Scan.nat_gateway,
    "aws_eip": _Scan.eip,
    "aws_eks_cluster": _Scan.eks_cluster,
}


def _config_region(data: Mapping[str, Any]) -> str | None:
    """The AWS provider's ``region`` when the configuration states it as a constant."""
    cfg = data.get("configuration") or {}
    if not isinstance(cfg, Mapping):
        cfg = {}
    expressions = _block(_block(cfg, "provider_config"), "aws").get("expressions", {})
    cfg_region = expressions.get("region", {}) if isinstance(expressions, Mapping) else None
    if isinstance(cfg_region, Mapping) and isinstance(cfg_region.get("constant_value"), str):
        return str(cfg_region["constant_value"])
    return None


def _above(values: list[float], free: float) -> float:
    """What volumes provision above the free baseline, summed (each volume is billed for its
    own excess; one that states none, or less, has the baseline)."""
    return sum(max(v - free, 0.0) for v in values)


def _storage(
    scan: _Scan, nodes: int, imported: list[tuple[str, str]], catalog: Catalog
) -> dict[str, Any]:
    """The plan's storage section: EBS spread over the GPU nodes, FSx as stated.

    Sizes are taken as written: AWS bills a volume's or file system's GiB as "GB-month" (the
    catalog's FSx rule does too, ``usage.lustre_gb_per_gib``); converting them to decimal GB
    priced 7.4% more, and pushed a valid FSx size to the next one. A volume's IOPS and
    throughput above the gp3 baseline are billed per volume: what the volumes provision above
    it is spread over the nodes (the plan's per-node figures bill the same total), not one
    volume's figure given to every node."""
    storage: dict[str, Any] = {}
    if scan.ebs_elements:
        storage["ebs_gb_per_node"] = scan.ebs_gib / nodes
        imported.append(("storage.ebs_gb_per_node", ", ".join(scan.ebs_elements)))
        scan.notes.append(
            f"EBS: {scan.ebs_gib:,.0f} GiB in {len(scan.ebs_elements)} volume(s) spread over "
            f"{nodes} GPU nodes"
        )
        # gp3's free baseline per volume (AWS EBS gp3 documentation, in the catalog).
        free_iops = float(catalog.value("defaults.storage.ebs_iops"))
        free_mibps = float(catalog.value("defaults.storage.ebs_throughput_mibps"))
        iops_above = _above(scan.ebs_iops, free_iops)
        if iops_above:
            storage["ebs_iops"] = free_iops + iops_above / nodes
            imported.append(("storage.ebs_iops", "aws_ebs_volume.iops"))
        tput_above = _above(scan.ebs_tput, free_mibps)
        if tput_above:
            storage["ebs_throughput_mibps"] = free_mibps + tput_above / nodes
            imported.append(("storage.ebs_throughput_mibps", "aws_ebs_volume.throughput"))
        if iops_above or tput_above:
            scan.notes.append(
                f"EBS: {iops_above:,.0f} IOPS and {tput_above:,.0f} MiB/s provisioned above the "
                f"gp3 baseline, summed over the volumes and spread over {nodes} nodes"
            )
    if scan.fsx_elements:
        storage["fsx_capacity_gb"] = scan.fsx_gib
        storage["fsx_tier"] = scan.fsx_tier
        imported += [
            ("storage.fsx_capacity_gb", ", ".join(scan.fsx_elements)),
            ("storage.fsx_tier", scan.fsx_elements[0]),
        ]
    return storage


def _network(scan: _Scan, nodes: int, imported: list[tuple[str, str]]) -> dict[str, Any]:
    """The plan's network section: NAT gateways, and Elastic IPs beyond one per NAT."""
    nat = len(scan.nat_elements)
    network: dict[str, Any] = {"nat_gateways": nat}
    imported.append(
        ("network.nat_gateways", ", ".join(scan.nat_elements) or "no aws_nat_gateway in plan")
    )
    if scan.eips:
        network["public_ips_per_node"] = max(0, scan.eips - nat) / nodes
        imported.append(("network.public_ips_per_node", f"{scan.eips} aws_eip"))
        scan.notes.append(
            f"{scan.eips} Elastic IP(s): one per NAT gateway is billed with the NAT, the rest "
            f"spread over {nodes} nodes"
        )
    return network


def parse(text: str, *, source: str, catalog: Catalog) -> ImportReport:
    """Instances, storage and network resources of a Terraform plan into plan sections."""
    data = _load(text, source)
    resources = _root_resources(data, source)
    templates = _Templates(resources, source)
    scan = _Scan(source=source, templates=templates)
    for r in resources:
        scan.add(r)
    unsupported = list(dict.fromkeys(scan.unsupported + templates.unused(scan.groups)))
    if not scan.groups:
        msg = (
            "no GPU instances found: no aws_instance, aws_eks_node_group or "
            "aws_autoscaling_group with instances"
        )
        raise ClusterImportError(msg, source=source)
    sections, imported, more = assemble(scan.groups, catalog, provider="aws", source=source)
    scan.notes += more
    cluster = sections["cluster"]
    nodes = int(cluster["nodes"])
    if scan.eks:
        cluster["orchestrator"] = "eks"
        imported.append(("cluster.orchestrator", "aws_eks_cluster/aws_eks_node_group"))
    imported_extra: list[tuple[str, str]] = []
    region = _config_region(data)
    if region is not None:
        imported_extra.append(("cluster.region", "configuration.provider_config.aws.region"))
    elif scan.region is not None:
        region = scan.region
        imported_extra.append(("cluster.region", "availability_zone"))
    if region is not None:
        cluster["region"] = region
    storage = _storage(scan, nodes, imported_extra, catalog)
    if storage:
        sections["storage"] = storage
    sections["network"] = _network(scan, nodes, imported_extra)
    return ImportReport(
        kind="terraform",
        source=source,
        plan=sections,
        imported=tuple(imported + imported_extra),
        unsupported=tuple(unsupported),
        notes=tuple(scan.notes),
    )
