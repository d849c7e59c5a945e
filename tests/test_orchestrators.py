"""Orchestrators by provider: HyperPod and EKS are AWS services; self-managed VMs are everywhere.

Before this, a GCP plan with ``orchestrator = "hyperpod"`` was priced with a SageMaker HyperPod
premium (an AWS fee on a GCP bill), and every GCP/Azure plan was labelled "ec2".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TODAY, run_argv
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecast import forecast
from trainbill.optimize import SearchSpace, optimize
from trainbill.spec import plan_from_dict
from trainbill.whatif import compare_orchestrators


def _plan(provider: str, instance: str, orchestrator: str | None = None) -> dict[str, object]:
    cluster: dict[str, object] = {"provider": provider, "instance": instance, "nodes": 2}
    if orchestrator is not None:
        cluster["orchestrator"] = orchestrator
    return {"model": {"params": 7e9, "tokens": 1e10}, "cluster": cluster}


@pytest.mark.parametrize(
    ("provider", "instance", "given", "stored"),
    [
        ("aws", "p5.48xlarge", None, "ec2"),
        ("aws", "p5.48xlarge", "vm", "ec2"),  # alias: the same self-managed VMs
        ("gcp", "a3-highgpu-8g", None, "vm"),
        ("gcp", "a3-highgpu-8g", "ec2", "vm"),  # old plans and exports said "ec2" everywhere
        ("azure", "Standard_ND96isr_H100_v5", None, "vm"),
    ],
)
def test_self_managed_name_follows_provider(
    provider: str, instance: str, given: str | None, stored: str
) -> None:
    assert plan_from_dict(_plan(provider, instance, given)).cluster.orchestrator == stored


@pytest.mark.parametrize("service", ["hyperpod", "eks"])
def test_aws_services_on_other_clouds_are_errors(service: str) -> None:
    with pytest.raises(SpecError) as err:
        plan_from_dict(_plan("gcp", "a3-highgpu-8g", service))
    text = str(err.value)
    assert "cluster.orchestrator" in text
    assert f"'{service}' is an AWS service" in text
    assert "allowed values for gcp: vm" in text


def test_gcp_plan_pays_no_managed_service_fee(catalog: Catalog) -> None:
    fc = forecast(plan_from_dict(_plan("gcp", "a3-highgpu-8g")), catalog, today=TODAY)
    assert fc.usage.orchestrator == "vm"
    assert fc.ledger.by_category()["orchestration"] == 0.0
    # Self-managed VMs restart like raw EC2: the catalog's 1.0 h (reliability.restart_hours_vm).
    assert fc.usage.reliability.restart_hours == 1.0


def test_compare_orchestrators_needs_an_aws_plan(catalog: Catalog) -> None:
    with pytest.raises(SpecError, match="compares AWS orchestrators"):
        compare_orchestrators(
            plan_from_dict(_plan("azure", "Standard_ND96isr_H100_v5")), catalog, today=TODAY
        )


def test_optimizer_labels_other_clouds_vm(catalog: Catalog) -> None:
    """Searching GCP with the default orchestrator list (ec2, hyperpod, eks) tries only VMs
    there."""
    plan = plan_from_dict(_plan("gcp", "a3-highgpu-8g"))
    space = SearchSpace(instances=("a3-highgpu-8g",), nodes=(2, 4), spot_fractions=(0.0,),
                        checkpoint_intervals_hours=(1.0,))  # fmt: skip
    result = optimize(plan, catalog, space=space, today=TODAY)
    assert {c.orchestrator for c in result.pareto} == {"vm"}


def test_cli_error_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "plan.toml"
    f.write_text(
        '[model]\nparams = 7e9\ntokens = 1e10\n[cluster]\nprovider = "azure"\n'
        'instance = "Standard_ND96isr_H100_v5"\nnodes = 2\norchestrator = "eks"\n',
        encoding="utf-8",
    )
    code, _out, err = run_argv(["forecast", str(f)], capsys)
    assert code == 1
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert "cluster.orchestrator" in err
    assert "allowed values for azure: vm" in err


def test_gpu_only_plan_on_another_cloud_uses_its_vm_name(catalog: Catalog) -> None:
    """``gpu = "tpu-v6e"`` with the default provider (aws) lands on GCP: the usage says "vm"."""
    plan = plan_from_dict(
        {"model": {"params": 7e9, "tokens": 1e10}, "cluster": {"gpu": "tpu-v6e", "gpus": 64}}
    )
    fc = forecast(plan, catalog, today=TODAY)
    assert (fc.usage.provider, fc.usage.orchestrator) == ("gcp", "vm")
    hp = plan_from_dict(
        {
            "model": {"params": 7e9, "tokens": 1e10},
            "cluster": {"gpu": "tpu-v6e", "gpus": 64, "orchestrator": "hyperpod"},
        }
    )
    with pytest.raises(SpecError, match="allowed values for gcp: vm"):
        forecast(hp, catalog, today=TODAY)
