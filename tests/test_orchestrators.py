"""Orchestrators by provider: HyperPod and EKS are AWS services; self-managed VMs are everywhere.

Before this, a GCP plan with ``orchestrator = "hyperpod"`` was priced with a SageMaker HyperPod
premium (an AWS fee on a GCP bill), and every GCP/Azure plan was labelled "ec2".
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from conftest import SEED, TODAY, run_argv
from costs.tiny import price
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import forecast
from trainbill.optimize import SearchSpace, optimize
from trainbill.spec import load_plan, plan_from_dict
from trainbill.whatif import cheapest_priced, compare_orchestrators


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


def test_hyperpod_without_its_premium_is_never_the_cheapest(catalog: Catalog) -> None:
    """The seed plan on AWS, run after HyperPod offered Spot (2025-11-26), on a catalog without
    any ml.* price (so none can be derived either): no ml.p5.48xlarge price and half the nodes on
    spot, so HyperPod's total misses two charges. It is flagged and left out of the cheapest;
    with an ml.* price and every node on demand, nothing is missing and it competes."""
    seed = load_plan(SEED)
    seed = seed.model_copy(update={"run": seed.run.model_copy(update={"date": date(2026, 1, 5)})})
    catalog = replace(catalog, prices=tuple(p for p in catalog.prices if "ml." not in p.item))
    rows = compare_orchestrators(seed, catalog, today=TODAY)
    by = {r.orchestrator: r for r in rows}
    assert len(by["hyperpod"].unpriced) == 2
    assert by["ec2"].unpriced == ()
    assert by["eks"].unpriced == ()
    cheapest = cheapest_priced(rows)
    assert cheapest is not None
    assert cheapest.orchestrator != "hyperpod"
    on_demand = seed.model_copy(
        update={"purchase": seed.purchase.model_copy(update={"spot_fraction": 0.0})}
    )
    ml = price("ml.p5.48xlarge", "on_demand", "instance-hour", 1.0)  # below EC2: a $0 premium
    with_ml = replace(catalog, prices=(*catalog.prices, ml))
    rows = compare_orchestrators(on_demand, with_ml, today=TODAY)
    assert all(r.unpriced == () for r in rows)
    assert cheapest_priced(rows) == min(rows, key=lambda r: r.total_usd)
