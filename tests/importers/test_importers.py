"""Importers (HyperPod JSON, SkyPilot YAML, Terraform plan JSON) and the SkyPilot export."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from conftest import SEED, TODAY, run_argv
from trainbill.catalog import Catalog, load_catalog
from trainbill.errors import TrainbillError
from trainbill.forecasting import forecast
from trainbill.importers import (
    ClusterImportError,
    export_skypilot,
    import_cluster,
    import_text,
    provenance,
    read_cluster_file,
)
from trainbill.spec import load_plan, plan_from_dict

DATA = Path(__file__).parents[1] / "data" / "importers"


def test_hyperpod_article_instance_groups(catalog: Catalog) -> None:
    """The article's --instance-groups value is 16 × p5.48xlarge on HyperPod, all on-demand."""
    r = import_cluster("hyperpod", DATA / "hyperpod-article.json", catalog=catalog)
    assert r.plan["cluster"] == {
        "provider": "aws",
        "instance": "p5.48xlarge",
        "nodes": 16,
        "orchestrator": "hyperpod",
    }
    assert r.plan["purchase"] == {"spot_fraction": 0.0}
    assert ("cluster.nodes", "instance-groups[0].InstanceType") in r.imported


def test_hyperpod_create_cluster_head_node_and_prefix(catalog: Catalog) -> None:
    """ml. prefixes are stripped; the CPU controller group becomes an extra group; ARN gives the
    region."""
    r = import_cluster("hyperpod", DATA / "hyperpod-create-cluster.json", catalog=catalog)
    c = r.plan["cluster"]
    assert (c["instance"], c["nodes"], c["region"]) == ("p5.48xlarge", 16, "us-west-2")
    assert c["extra_groups"] == [
        {"name": "controller", "instance": "m5.xlarge", "count": 1, "spot": False}
    ]
    assert r.plan["storage"] == {"ebs_gb_per_node": 500.0}
    assert any(u.startswith("Orchestrator.Eks") for u in r.unsupported)


def test_extra_group_priced_as_its_own_line(catalog: Catalog) -> None:
    """A head node adds exactly count × wall hours × $0.192 (EC2 m5.xlarge): no ml.m5.xlarge price
    is published in the catalog, so no HyperPod premium is guessed (it was the article's 20%:
    $0.2304/h)."""
    base = {
        "run": {"hours": 10},
        "cluster": {"instance": "p5.48xlarge", "nodes": 2, "orchestrator": "hyperpod"},
    }
    with_head = {
        **base,
        "cluster": {**base["cluster"], "extra_groups": [{"name": "head", "instance": "m5.xlarge"}]},
    }
    a = forecast(plan_from_dict(base), catalog, today=TODAY)
    b = forecast(plan_from_dict(with_head), catalog, today=TODAY)
    line = next(x for x in b.ledger.lines if "head group" in x.item)
    assert line.category == "compute"
    assert line.unit_price_usd == pytest.approx(0.192)
    assert "premium is not included" in line.basis
    assert line.quantity == pytest.approx(b.usage.wall_hours)
    assert b.total_usd - a.total_usd == pytest.approx(0.192 * b.usage.wall_hours)


def test_skypilot_task(catalog: Catalog) -> None:
    """H100:8 on aws is a p5.48xlarge; num_nodes, use_spot, region and disk_size are imported."""
    r = import_cluster("skypilot", DATA / "skypilot-task.yaml", catalog=catalog)
    assert r.plan["cluster"]["instance"] == "p5.48xlarge"
    assert r.plan["cluster"]["nodes"] == 4
    assert r.plan["cluster"]["region"] == "us-west-2"
    assert r.plan["purchase"] == {"spot_fraction": 1.0}
    assert r.plan["storage"] == {"ebs_gb_per_node": 1024.0}
    assert any(u.startswith("resources.ports") for u in r.unsupported)
    assert any(u.startswith("file_mounts") for u in r.unsupported)


def test_skypilot_malformed_yaml_names_file_and_line(catalog: Catalog) -> None:
    """Malformed YAML: the error names the file and the line."""
    path = DATA / "skypilot-malformed.yaml"
    with pytest.raises(
        ClusterImportError, match=r"skypilot-malformed\.yaml: invalid YAML: .* line 3"
    ):
        import_cluster("skypilot", path, catalog=catalog)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("resources:\n  accelerators: X999:8\n", r"resources\.accelerators: unknown GPU"),
        ("resources:\n  instance_type: m5.xlarge\n", r"no GPU instances found"),
        (
            "resources:\n  cloud: lambda\n  accelerators: H100:8\n",
            r"resources\.cloud: 'lambda' is not priced",
        ),
        (
            "num_nodes: 0\nresources:\n  accelerators: H100:8\n",
            r"num_nodes: must be a whole number > 0",
        ),
        ("resources:\n  cpus: 4\n", r"resources: no GPU"),
    ],
)
def test_skypilot_bad_input(catalog: Catalog, text: str, pattern: str) -> None:
    """Bad SkyPilot tasks fail with the file and the element named."""
    with pytest.raises(ClusterImportError, match=r"task\.yaml: " + pattern):
        import_text("skypilot", text, source="task.yaml", catalog=catalog)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (
            '[{"InstanceType": "ml.p9.96xlarge", "InstanceCount": 2}]',
            r"instance-groups\[0\]\.InstanceType: unknown instance type 'p9\.96xlarge'",
        ),
        ('[{"InstanceType": "ml.m5.xlarge", "InstanceCount": 1}]', r"no GPU instances found"),
        ('[{"InstanceType": "p5.48xlarge", "InstanceCount": 16}', r"invalid JSON: .* line 1"),
        ('[{"InstanceType": "p5.48xlarge"}]', r"instance-groups\[0\]: missing InstanceCount"),
        ('{"ClusterName": "x"}', r"expected a list of instance groups"),
    ],
)
def test_hyperpod_bad_input(catalog: Catalog, text: str, pattern: str) -> None:
    """Bad HyperPod JSON fails with the file and the element named."""
    with pytest.raises(ClusterImportError, match=r"c\.json: " + pattern):
        import_text("hyperpod", text, source="c.json", catalog=catalog)


def test_terraform_plan(catalog: Catalog) -> None:
    """Node group via launch template, head instance, EBS, FSx, NAT, EIP; S3 bucket listed as
    unsupported.

    EBS: (100 GiB root + 2000 GiB volume) / 8 nodes = 262.5 per node: AWS bills the GiB as
    "GB-month" (was × 1.073741824, 7.4% more). The one 10,000-IOPS, 500 MiB/s volume is billed
    (10,000 − 3,000) IOPS and (500 − 125) MiB/s once: spread over 8 nodes, 3,000 + 7,000 / 8 =
    3,875 IOPS and 125 + 375 / 8 = 171.875 MiB/s per node (was 10,000 and 500 on every node,
    8× the bill). FSx: 12,000 GiB as written (a size AWS creates; converted, it was rounded
    up to 14,400), PERSISTENT_2 at 250 MB/s/TiB. EIPs: 1 EIP − 1 NAT gateway (billed with the
    NAT) = 0 per node.
    """
    r = import_cluster("terraform", DATA / "terraform-plan.json", catalog=catalog)
    c = r.plan["cluster"]
    assert (c["instance"], c["nodes"], c["orchestrator"], c["region"]) == (
        "p5.48xlarge",
        8,
        "eks",
        "us-east-1",
    )
    assert c["extra_groups"] == [
        {"name": "instances", "instance": "c5.2xlarge", "count": 1, "spot": False}
    ]
    assert r.plan["storage"]["ebs_gb_per_node"] == pytest.approx(2100 / 8)
    assert r.plan["storage"]["ebs_iops"] == pytest.approx(3000 + 7000 / 8)
    assert r.plan["storage"]["ebs_throughput_mibps"] == pytest.approx(125 + 375 / 8)
    assert r.plan["storage"]["fsx_capacity_gb"] == pytest.approx(12000)
    assert r.plan["storage"]["fsx_tier"] == "persistent_250"
    assert r.plan["network"] == {"nat_gateways": 1, "public_ips_per_node": 0.0}
    assert r.unsupported == (
        "aws_s3_bucket.data (aws_s3_bucket): resource type not supported, not priced",
    )


def test_terraform_without_gpus_and_bad_fsx(catalog: Catalog) -> None:
    """A plan with only a CPU instance, or an unpriced FSx tier, is a clear error naming the
    element."""
    cpu_only = {
        "planned_values": {
            "root_module": {
                "resources": [
                    {
                        "address": "aws_instance.a",
                        "type": "aws_instance",
                        "values": {"instance_type": "c5.large"},
                    }
                ]
            }
        }
    }
    with pytest.raises(
        ClusterImportError,
        match=r"plan\.json: no GPU instances found .*c5\.large \(aws_instance\.a\)",
    ):
        import_text("terraform", json.dumps(cpu_only), source="plan.json", catalog=catalog)
    bad_fsx = {
        "planned_values": {
            "root_module": {
                "resources": [
                    {
                        "address": "aws_instance.g",
                        "type": "aws_instance",
                        "values": {"instance_type": "p5.48xlarge"},
                    },
                    {
                        "address": "aws_fsx_lustre_file_system.f",
                        "type": "aws_fsx_lustre_file_system",
                        "values": {
                            "storage_capacity": 1200,
                            "deployment_type": "PERSISTENT_1",
                            "per_unit_storage_throughput": 200,
                        },
                    },
                ]
            }
        }
    }
    with pytest.raises(
        ClusterImportError, match=r"aws_fsx_lustre_file_system\.f: .*not priced; allowed"
    ):
        import_text("terraform", json.dumps(bad_fsx), source="plan.json", catalog=catalog)


def test_provenance_lists_defaulted_fields(catalog: Catalog) -> None:
    """Fields neither imported nor given are reported as defaulted; gpu/gpus are moot once an
    instance is imported."""
    r = import_cluster("hyperpod", DATA / "hyperpod-article.json", catalog=catalog)
    prov = provenance(r, {"run": {"hours": 72}})
    assert "run.hours" in prov["given"]
    assert "model.params" in prov["defaulted"]
    assert "cluster.region" in prov["defaulted"]
    assert "cluster.gpu" not in prov["defaulted"]
    assert any(line.startswith("cluster.instance <- ") for line in prov["imported"])


def test_export_skypilot_round_trip(catalog: Catalog) -> None:
    """Exporting the seed plan and importing the YAML gives back 32 × p5.48xlarge; a 50% spot mix
    asks for on-demand."""
    plan = load_plan(SEED)
    text = export_skypilot(plan, catalog)
    assert "50% of nodes on spot" in text
    r = import_text("skypilot", text, source="export.yaml", catalog=catalog)
    assert (r.plan["cluster"]["instance"], r.plan["cluster"]["nodes"]) == ("p5.48xlarge", 32)
    assert r.plan["purchase"] == {"spot_fraction": 0.0}
    assert r.plan["cluster"]["region"] == "us-east-1"


def test_cli_forecast_from_hyperpod(capsys: pytest.CaptureFixture[str]) -> None:
    """forecast --from hyperpod: quote is 16 nodes × p5 on-demand × 72 h; the JSON carries the
    import report."""
    code, out, _err = run_argv(
        [
            "forecast",
            "--from",
            "hyperpod",
            str(DATA / "hyperpod-article.json"),
            "--hours",
            "72",
            "--as-of",
            "2025-05-01",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    assert data["cluster"]["nodes"] == 16
    assert data["cluster"]["orchestrator"] == "hyperpod"
    assert data["quote_usd"] == pytest.approx(
        16 * 98.32 * 72
    )  # article's p5 price $98.32/h before June 2025
    assert data["import"]["kind"] == "hyperpod"
    assert "model.params" in data["import"]["provenance"]["defaulted"]


def test_cli_forecast_from_bad_file(capsys: pytest.CaptureFixture[str]) -> None:
    """A missing cluster file is a one-line error naming it, exit 1."""
    code, _out, err = run_argv(
        ["forecast", "--from", "terraform", "nope.json", "--hours", "1"], capsys
    )
    assert code == 1
    assert "trainbill: error: nope.json: cluster file not found" in err


def test_cli_forecast_plan_file_under_import(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The imported cluster overrides the plan file's gpu/gpus; the plan file still supplies the
    run."""
    plan = tmp_path / "p.toml"
    plan.write_text(
        '[run]\nhours = 5\n[cluster]\ngpu = "a100-80gb"\ngpus = 64\n[prices]\nas_of = 2025-05-01\n'
    )
    code, out, _err = run_argv(
        [
            "forecast",
            str(plan),
            "--from",
            "skypilot",
            str(DATA / "skypilot-task.yaml"),
            "--json",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    assert (
        data["cluster"]["instance"],
        data["cluster"]["nodes"],
        data["cluster"]["spot_fraction"],
    ) == ("p5.48xlarge", 4, 1.0)
    assert data["time"]["compute_hours"] == pytest.approx(5.0)
    assert date.fromisoformat(data["catalog"]["as_of"]) == date(2025, 5, 1)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("hyperpod", "[" * 30_000 + "]" * 30_000),
        ("terraform", '{"a":' * 30_000 + "1" + "}" * 30_000),
        ("skypilot", "[" * 30_000 + "]" * 30_000),
    ],
)
def test_a_document_nested_past_the_recursion_limit_is_one_error(
    kind: str, text: str, catalog: Catalog
) -> None:
    """30,000 levels of nesting (RecursionError in the parser) is a ClusterImportError naming the
    file."""
    from trainbill.errors import TrainbillError
    from trainbill.importers import import_text

    with pytest.raises(TrainbillError, match=r"deep\.doc: nested too deeply"):
        import_text(kind, text, source="deep.doc", catalog=catalog)


def _imp(kind: str, text: str) -> None:
    import_text(kind, text, source="cluster.file", catalog=load_catalog())


def _tf(resources: list[object]) -> str:
    return json.dumps({"planned_values": {"root_module": {"resources": resources}}})


_P5 = {
    "type": "aws_instance",
    "address": "aws_instance.gpu",
    "values": {"instance_type": "p5.48xlarge"},
}


@pytest.mark.parametrize(
    ("kind", "text", "pattern"),
    [
        (
            "hyperpod",
            '[{"InstanceType":"ml.p5.48xlarge","InstanceCount":2,"InstanceStorageConfigs":5}]',
            r"instance-groups\[0\]\.InstanceStorageConfigs: must be a list",
        ),
        (
            "hyperpod",
            (
                '[{"InstanceType":"ml.p5.48xlarge","InstanceCount":2,'
                '"InstanceStorageConfigs":[{"EbsVolumeConfig":{"VolumeSizeInGB":"500"}}]}]'
            ),
            r"VolumeSizeInGB: must be a number >= 1 \(got '500'\)",
        ),
        (
            "hyperpod",
            (
                '[{"InstanceType":"ml.p5.48xlarge","InstanceCount":2,'
                '"InstanceStorageConfigs":[{"EbsVolumeConfig":{"VolumeSizeInGB":NaN}}]}]'
            ),
            r"VolumeSizeInGB: must be a finite number",
        ),
        (
            "hyperpod",
            '[{"InstanceType":"ml.p5.48xlarge","InstanceCount":1000000000000000000000}]',
            r"more than the plan's limit of 100,000 nodes",
        ),
        (
            "skypilot",
            'resources:\n  accelerators: H100:8\n  use_spot: "false"\n',
            r"resources\.use_spot: must be true or false \(got 'false'\)",
        ),
        (
            "skypilot",
            "resources:\n  accelerators: H100:8\n  disk_size: 256GB\n",
            r"resources\.disk_size: must be a number >= 1 \(got '256GB'\)",
        ),
        (
            "skypilot",
            "resources:\n  accelerators: H100:8\n  disk_size: -5\n",
            r"resources\.disk_size: must be a finite number >= 1",
        ),
        (
            "skypilot",
            "resources:\n  accelerators: H100:8\n  region: [a, b]\n",
            r"resources\.region: must be a region name",
        ),
        (
            "terraform",
            _tf(
                [
                    {
                        "type": "aws_ebs_volume",
                        "address": "aws_ebs_volume.d",
                        "values": {"size": "abc"},
                    },
                    _P5,
                ]
            ),
            r"aws_ebs_volume\.d\.size: must be a number",
        ),
        (
            "terraform",
            _tf(
                [
                    {
                        "type": "aws_ebs_volume",
                        "address": "aws_ebs_volume.d",
                        "values": {"size": -100},
                    },
                    _P5,
                ]
            ),
            r"aws_ebs_volume\.d\.size: must be a finite number >= 0",
        ),
        (
            "terraform",
            _tf([{"type": "aws_instance", "address": "aws_instance.x", "values": "oops"}]),
            r"aws_instance\.x\.values: must be an object",
        ),
        (
            "terraform",
            json.dumps({"planned_values": {"root_module": {"resources": 5}}}),
            r"planned_values\.root_module\.resources: must be a list",
        ),
        (
            "terraform",
            _tf(
                [
                    {
                        "type": "aws_autoscaling_group",
                        "address": "asg",
                        "values": {
                            "desired_capacity": 4,
                            "mixed_instances_policy": [
                                {
                                    "launch_template": [
                                        {"override": [{"instance_type": "p5.48xlarge"}]}
                                    ],
                                    "instances_distribution": [
                                        {"on_demand_percentage_above_base_capacity": 150}
                                    ],
                                }
                            ],
                        },
                    }
                ]
            ),
            r"on_demand_percentage_above_base_capacity: must be a percentage between 0 and 100",
        ),
        (
            "terraform",
            _tf(
                [
                    {
                        "type": "aws_eks_node_group",
                        "address": "ng",
                        "values": {
                            "instance_types": "p5.48xlarge",
                            "scaling_config": [{"desired_size": 2}],
                        },
                    }
                ]
            ),
            r"ng\.instance_types: must be a list of instance type names",
        ),
    ],
)
def test_malformed_cluster_files_name_the_element(kind: str, text: str, pattern: str) -> None:
    """Malformed HyperPod, SkyPilot and Terraform files name the file and the element at fault."""
    with pytest.raises(TrainbillError, match=r"^cluster\.file: .*" + pattern):
        _imp(kind, text)


def test_asg_on_demand_percentage_sets_spot_share() -> None:
    # 4 nodes, 25% on-demand above base: 1 on-demand + 3 spot -> spot_fraction 3/4.
    """An autoscaling group 25% on demand above base runs 3 of its 4 nodes on spot."""
    text = _tf(
        [
            {
                "type": "aws_autoscaling_group",
                "address": "asg",
                "values": {
                    "desired_capacity": 4,
                    "mixed_instances_policy": [
                        {
                            "launch_template": [{"override": [{"instance_type": "p5.48xlarge"}]}],
                            "instances_distribution": [
                                {"on_demand_percentage_above_base_capacity": 25}
                            ],
                        }
                    ],
                },
            }
        ]
    )
    report = import_text("terraform", text, source="f", catalog=load_catalog())
    assert report.plan["purchase"]["spot_fraction"] == 0.75


def test_cluster_file_with_bom_is_read(tmp_path: Path) -> None:
    """A cluster file saved with a UTF-8 BOM is read like one without."""
    f = tmp_path / "groups.json"
    f.write_bytes(b'\xef\xbb\xbf[{"InstanceType":"ml.p5.48xlarge","InstanceCount":3}]')
    report = import_text("hyperpod", read_cluster_file(f), source=str(f), catalog=load_catalog())
    assert report.plan["cluster"]["nodes"] == 3


def test_terraform_hcl_and_persistent_1_are_named(catalog: Catalog) -> None:
    """A .tf file is not what the importer reads: the error says which JSON it wants. FSx
    PERSISTENT_1 (50/100/200 MB/s/TiB) was "allowed" with PERSISTENT_2's values (125-1000),
    and PERSISTENT_1 at 250 was priced as a tier it cannot have."""
    with pytest.raises(ClusterImportError, match=r"main\.tf: invalid JSON.*terraform show -json"):
        import_text("terraform", 'resource "aws_instance" "a" {}\n', source="main.tf",
                    catalog=catalog)  # fmt: skip
    fsx = {
        "address": "aws_fsx_lustre_file_system.f",
        "type": "aws_fsx_lustre_file_system",
        "values": {"storage_capacity": 1200, "deployment_type": "PERSISTENT_1",
                   "per_unit_storage_throughput": 250},
    }  # fmt: skip
    gpu = {"address": "aws_instance.g", "type": "aws_instance",
           "values": {"instance_type": "p5.48xlarge"}}  # fmt: skip
    doc = {"planned_values": {"root_module": {"resources": [gpu, fsx]}}}
    with pytest.raises(ClusterImportError, match=r"PERSISTENT_1.*not priced.*PERSISTENT_2 with"):
        import_text("terraform", json.dumps(doc), source="p.json", catalog=catalog)


def test_terraform_reads_what_groups_and_templates_say(catalog: Catalog) -> None:
    """Each once dropped or misread:

    * an ASG with 10 instances, on-demand base 4 and 50% on demand above it: 4 + 3 on demand, 3
      on spot (AWS applies the percentage above the base; it was 5 of 10 on spot);
    * its launch template's block device: 1,000 GiB at 6,000 IOPS on each of the 10;
    * an ASG whose template asks for spot (instance_market_options): all 2 on spot (was
      on-demand);
    * an instance's ebs_block_device of 2,000 GiB and an EKS node group's disk_size 500 × 2.
    Volumes: 10 × 1,000 + 2,000 + 2 × 500 = 13,000 GiB over 10 + 2 + 1 + 2 = 15 GPU nodes;
    IOPS above the 3,000 baseline: 10 × 3,000 = 30,000, spread over 15 nodes = 2,000 each."""
    lt = {
        "address": "aws_launch_template.gpu",
        "type": "aws_launch_template",
        "values": {
            "name": "gpu-lt",
            "instance_type": "p5.48xlarge",
            "block_device_mappings": [{"ebs": [{"volume_size": 1000, "iops": 6000}]}],
        },
    }
    spot_lt = {
        "address": "aws_launch_template.spot",
        "type": "aws_launch_template",
        "values": {
            "name": "spot-lt",
            "instance_type": "p5.48xlarge",
            "instance_market_options": [{"market_type": "spot"}],
        },
    }
    asg = {
        "address": "aws_autoscaling_group.a",
        "type": "aws_autoscaling_group",
        "values": {
            "desired_capacity": 10,
            "mixed_instances_policy": [
                {
                    "instances_distribution": [
                        {
                            "on_demand_base_capacity": 4,
                            "on_demand_percentage_above_base_capacity": 50,
                        }
                    ],
                    "launch_template": [
                        {"launch_template_specification": [{"launch_template_name": "gpu-lt"}]}
                    ],
                }
            ],
        },
    }
    spot_asg = {
        "address": "aws_autoscaling_group.s",
        "type": "aws_autoscaling_group",
        "values": {"desired_capacity": 2, "launch_template": [{"name": "spot-lt"}]},
    }
    inst = {
        "address": "aws_instance.i",
        "type": "aws_instance",
        "values": {"instance_type": "p5.48xlarge", "ebs_block_device": [{"volume_size": 2000}]},
    }
    eks = {
        "address": "aws_eks_node_group.n",
        "type": "aws_eks_node_group",
        "values": {
            "instance_types": ["p5.48xlarge"],
            "disk_size": 500,
            "scaling_config": [{"desired_size": 2}],
        },
    }
    doc = {"planned_values": {"root_module": {"resources": [lt, spot_lt, asg, spot_asg, inst,
                                                            eks]}}}  # fmt: skip
    r = import_text("terraform", json.dumps(doc), source="p.json", catalog=catalog)
    assert r.plan["cluster"]["nodes"] == 15
    assert r.plan["purchase"]["spot_fraction"] == pytest.approx((3 + 2) / 15)
    assert r.plan["storage"]["ebs_gb_per_node"] == pytest.approx(13000 / 15)
    assert r.plan["storage"]["ebs_iops"] == pytest.approx(3000 + 30000 / 15)
    assert not any("aws_launch_template" in u for u in r.unsupported)


def test_hyperpod_spot_groups_volumes_and_training_plans(catalog: Catalog) -> None:
    """Each once dropped or misread: a group's ``CapacityRequirements: {"Spot": {}}`` (8 of 16
    p5 nodes on spot, was on-demand); every EBS volume config of a group (1,000 + 2,000 GB per
    node, only the last was kept), averaged over two p5 groups (8 × 3,000 + 8 × 200 = 25,600
    GB over 16 nodes = 1,600, was 200 on all); the controller's volume and a training plan
    listed as not priced; the region from a training plan's ARN."""
    doc = {"InstanceGroups": [
        {"InstanceGroupName": "ctl", "InstanceType": "ml.m5.2xlarge", "InstanceCount": 1,
         "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]},
        {"InstanceGroupName": "a", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 8,
         "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 1000}},
                                    {"EbsVolumeConfig": {"VolumeSizeInGB": 2000}}]},
        {"InstanceGroupName": "b", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 8,
         "CapacityRequirements": {"Spot": {}},
         "TrainingPlanArn": "arn:aws:sagemaker:us-west-2:123456789012:training-plan/tp",
         "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 200}}]},
    ]}  # fmt: skip
    r = import_text("hyperpod", json.dumps(doc), source="h.json", catalog=catalog)
    assert r.plan["cluster"]["nodes"] == 16
    assert r.plan["cluster"]["region"] == "us-west-2"
    assert r.plan["purchase"]["spot_fraction"] == pytest.approx(0.5)
    assert r.plan["storage"]["ebs_gb_per_node"] == pytest.approx((8 * 3000 + 8 * 200) / 16)
    assert any("TrainingPlanArn" in u and "not priced" in u for u in r.unsupported)
    assert any("500 GB on m5.2xlarge" in u for u in r.unsupported)
    assert not any("CapacityRequirements" in u for u in r.unsupported)


def test_zones_and_regions_are_read_where_the_files_give_them(catalog: Catalog) -> None:
    """Each was dropped: a Terraform autoscaling group's ``availability_zones`` list (the plan
    was priced in us-east-1 for a us-west-2 group), and SkyPilot's zone in ``infra:
    aws/us-east-1/us-east-1a`` or ``resources.zone``."""
    asg = {
        "address": "aws_autoscaling_group.g",
        "type": "aws_autoscaling_group",
        "values": {
            "desired_capacity": 2,
            "availability_zones": ["us-west-2b"],
            "launch_template": [{"name": "lt"}],
        },
    }
    lt = {"address": "aws_launch_template.lt", "type": "aws_launch_template",
          "values": {"name": "lt", "instance_type": "p5.48xlarge"}}  # fmt: skip
    doc = {"planned_values": {"root_module": {"resources": [lt, asg]}}}
    r = import_text("terraform", json.dumps(doc), source="p.json", catalog=catalog)
    assert r.plan["cluster"]["region"] == "us-west-2"
    for task, via in (
        ("resources:\n  infra: aws/us-east-1/us-east-1a\n  accelerators: H100:8\n", "infra"),
        (
            "resources:\n  region: us-east-1\n  zone: us-east-1a\n  accelerators: H100:8\n",
            "zone",
        ),
    ):
        r = import_text("skypilot", task, source="t.yaml", catalog=catalog)
        assert r.plan["cluster"]["zone"] == "us-east-1a"
        assert ("cluster.zone", f"resources.{via}") in r.imported
        assert not any(u.startswith("resources.zone") for u in r.unsupported)


@pytest.mark.parametrize(("size", "spot"), [(3, 1), (5, 2), (7, 3)])
def test_asg_rounds_a_fractional_on_demand_count_up(catalog: Catalog, size: int, spot: int) -> None:
    """50% on demand above a base of 0: ceil(size / 2) on demand, the rest on spot, every size
    the same way (Python's round() gave 3 → 2 spot but 5 → 2 and 7 → 4)."""
    lt = {
        "address": "aws_launch_template.lt",
        "type": "aws_launch_template",
        "values": {"name": "lt", "instance_type": "p5.48xlarge"},
    }
    asg = {"address": "aws_autoscaling_group.g", "type": "aws_autoscaling_group", "values": {
        "desired_capacity": size, "mixed_instances_policy": [{
            "instances_distribution": [{"on_demand_percentage_above_base_capacity": 50}],
            "launch_template": [{"launch_template_specification": [
                {"launch_template_name": "lt"}]}]}]}}  # fmt: skip
    doc = {"planned_values": {"root_module": {"resources": [lt, asg]}}}
    r = import_text("terraform", json.dumps(doc), source="p.json", catalog=catalog)
    assert r.plan["purchase"]["spot_fraction"] == pytest.approx(spot / size)


def test_hyperpod_volumes_average_over_every_worker_and_aws_zone_names_its_region(
    catalog: Catalog,
) -> None:
    """Two groups of 8 p5 nodes, one with 1,000 + 500 GB of volumes, one with none: 8 × 1,500 /
    16 = 750 GB per node (was 1,500 on all 16). A SkyPilot task giving only ``zone:
    us-east-1c`` is in us-east-1 (the zone was dropped)."""
    doc = {"InstanceGroups": [
        {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 8,
         "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 1000}},
                                    {"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]},
        {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 8},
    ]}  # fmt: skip
    r = import_text("hyperpod", json.dumps(doc), source="h.json", catalog=catalog)
    assert r.plan["storage"]["ebs_gb_per_node"] == pytest.approx(8 * 1500 / 16)
    task = "resources:\n  cloud: aws\n  zone: us-east-1c\n  accelerators: H100:8\n"
    r = import_text("skypilot", task, source="t.yaml", catalog=catalog)
    assert (r.plan["cluster"]["region"], r.plan["cluster"]["zone"]) == ("us-east-1", "us-east-1c")
