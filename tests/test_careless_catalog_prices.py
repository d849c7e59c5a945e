"""Careless-user inputs to catalog overlays, the price cache and cluster importers.

Each test feeds one malformed file and checks that it is refused with a message naming the file,
line/field and what is allowed -- never a traceback, never a silently wrong or ignored value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainbill.catalog import load_catalog
from trainbill.errors import CatalogSchemaError, TrainbillError
from trainbill.importers import import_text, read_cluster_file
from trainbill.prices._cache import read_cache

PRICES_HEADER = "provider,region,item,option,unit,usd,effective_from,source\n"
INSTANCES_HEADER = "provider,instance,accelerator,accelerator_count,vcpus,memory_gib,network_gbps,billing,source,as_of\n"
SPOT_HEADER = "provider,region,instance,interruption_bucket,savings_pct,observed,source\n"


def _overlay(tmp_path: Path, name: str, text: str | bytes) -> Path:
    d = tmp_path / "overlay"
    d.mkdir(exist_ok=True)
    if isinstance(text, bytes):
        (d / name).write_bytes(text)
    else:
        (d / name).write_text(text, encoding="utf-8")
    return d


def _p5_row(
    usd: str, *, date: str = "2026-01-01", unit: str = "instance-hour", source: str = "mine"
) -> str:
    return f"aws,us-east-1,p5.48xlarge,on_demand,{unit},{usd},{date},{source}\n"


@pytest.mark.parametrize("usd", ["inf", "1e400", "nan", "-inf"])
def test_non_finite_price_is_refused(tmp_path: Path, usd: str) -> None:
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row(usd))
    with pytest.raises(
        CatalogSchemaError, match=r"prices\.csv, line 2, usd: .* not a finite number"
    ):
        load_catalog([d])


def test_duplicate_price_rows_are_refused_naming_both_lines(tmp_path: Path) -> None:
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("40") + _p5_row("70"))
    with pytest.raises(
        CatalogSchemaError, match=r"prices\.csv, line 3: duplicate row .*also on line 2"
    ):
        load_catalog([d])


def test_duplicate_instance_rows_are_refused(tmp_path: Path) -> None:
    row = "aws,p5.48xlarge,h100,{n},192,2048,3200,instance,mine,2026-01-01\n"
    d = _overlay(tmp_path, "instances.csv", INSTANCES_HEADER + row.format(n=8) + row.format(n=4))
    with pytest.raises(
        CatalogSchemaError, match=r"instances\.csv, line 3: duplicate row for instance p5\.48xlarge"
    ):
        load_catalog([d])


@pytest.mark.parametrize(
    ("count", "pattern"), [("8.7", "not a whole number"), ("inf", "not a finite number")]
)
def test_fractional_or_infinite_gpu_count_is_refused(
    tmp_path: Path, count: str, pattern: str
) -> None:
    row = f"aws,p5.48xlarge,h100,{count},192,2048,3200,instance,mine,2026-01-01\n"
    d = _overlay(tmp_path, "instances.csv", INSTANCES_HEADER + row)
    with pytest.raises(
        CatalogSchemaError, match=rf"instances\.csv, line 2, accelerator_count: .*{pattern}"
    ):
        load_catalog([d])


def test_far_future_price_date_is_refused(tmp_path: Path) -> None:
    # 2206 for 2026: the point would never be "in force" and the overlay would be silently unused.
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("40", date="2206-01-01"))
    with pytest.raises(
        CatalogSchemaError, match=r"line 2, effective_from: 2206-01-01 is in the future"
    ):
        load_catalog([d])


def test_near_future_price_date_is_kept_for_announced_rates(tmp_path: Path) -> None:
    from datetime import UTC, date, datetime, timedelta

    soon = (datetime.now(UTC).date() + timedelta(days=30)).isoformat()
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("40", date=soon))
    cat = load_catalog([d])
    assert (
        cat.price(
            "p5.48xlarge",
            "on_demand",
            provider="aws",
            region="us-east-1",
            as_of=date.fromisoformat(soon),
        ).usd
        == 40.0
    )


@pytest.mark.parametrize("unit", ["EUR-hour", "instance-month", "GB-month"])
def test_wrong_unit_for_an_instance_is_refused(tmp_path: Path, unit: str) -> None:
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("40", unit=unit))
    with pytest.raises(CatalogSchemaError, match=r"line 2, unit: .*allowed: instance-hour"):
        load_catalog([d])


def test_wrong_unit_for_a_service_is_refused(tmp_path: Path) -> None:
    row = "aws,us-east-1,nat.hours,on_demand,GB,0.05,2026-01-01,mine\n"
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + row)
    with pytest.raises(
        CatalogSchemaError, match=r"line 2, unit: 'GB' .*service 'nat.hours'; allowed: hour"
    ):
        load_catalog([d])


def test_blank_item_is_refused(tmp_path: Path) -> None:
    d = _overlay(
        tmp_path,
        "prices.csv",
        PRICES_HEADER + "aws,us-east-1,,on_demand,instance-hour,5,2026-01-01,mine\n",
    )
    with pytest.raises(CatalogSchemaError, match=r"line 2, item: value is required"):
        load_catalog([d])


def test_utf8_bom_header_is_accepted(tmp_path: Path) -> None:
    from datetime import date

    d = _overlay(tmp_path, "prices.csv", ("\ufeff" + PRICES_HEADER + _p5_row("40")).encode("utf-8"))
    cat = load_catalog([d])
    assert (
        cat.price(
            "p5.48xlarge", "on_demand", provider="aws", region="us-east-1", as_of=date(2026, 2, 1)
        ).usd
        == 40.0
    )


def test_latin1_file_is_a_clear_error(tmp_path: Path) -> None:
    d = _overlay(
        tmp_path, "prices.csv", (PRICES_HEADER + _p5_row("40", source="café")).encode("latin-1")
    )
    with pytest.raises(CatalogSchemaError, match=r"prices\.csv: not UTF-8 text"):
        load_catalog([d])


def test_empty_file_says_so(tmp_path: Path) -> None:
    d = _overlay(tmp_path, "prices.csv", "")
    with pytest.raises(
        CatalogSchemaError, match=r"prices\.csv: empty file; expected a header line provider,region"
    ):
        load_catalog([d])


def test_missing_column_is_named(tmp_path: Path) -> None:
    header = "provider,region,item,option,usd,effective_from,source\n"
    d = _overlay(
        tmp_path, "prices.csv", header + "aws,us-east-1,p5.48xlarge,on_demand,5,2026-01-01,mine\n"
    )
    with pytest.raises(CatalogSchemaError, match=r"missing column\(s\) unit"):
        load_catalog([d])


def test_directory_named_like_a_table_is_a_clear_error(tmp_path: Path) -> None:
    d = tmp_path / "overlay"
    (d / "prices.csv").mkdir(parents=True)
    with pytest.raises(CatalogSchemaError, match=r"prices\.csv: cannot read catalog file"):
        load_catalog([d])


def test_assumptions_toml_in_overlay_is_not_silently_ignored(tmp_path: Path) -> None:
    d = _overlay(tmp_path, "assumptions.toml", "[reliability]\nstraggler_cv = 0.5\n")
    with pytest.raises(CatalogSchemaError, match=r"unknown catalog file\(s\) assumptions\.toml"):
        load_catalog([d])


def test_unknown_spot_bucket_is_refused_not_a_keyerror(tmp_path: Path) -> None:
    d = _overlay(
        tmp_path,
        "spot_advisor.csv",
        SPOT_HEADER + "aws,us-east-1,p5.48xlarge,bogus,70,2026-01-01,mine\n",
    )
    with pytest.raises(
        CatalogSchemaError, match=r"line 2, interruption_bucket: 'bogus' not one of .*<5%"
    ):
        load_catalog([d])


def test_savings_over_100_percent_is_refused(tmp_path: Path) -> None:
    d = _overlay(
        tmp_path,
        "spot_advisor.csv",
        SPOT_HEADER + "aws,us-east-1,p5.48xlarge,<5%,170,2026-01-01,mine\n",
    )
    with pytest.raises(
        CatalogSchemaError, match=r"savings_pct: 170 is above the allowed maximum 100"
    ):
        load_catalog([d])


def test_cli_prints_one_line_error_for_bad_overlay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from trainbill.cli import main

    monkeypatch.setenv("TRAINBILL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAINBILL_CATALOG", raising=False)
    d = _overlay(tmp_path, "prices.csv", PRICES_HEADER + _p5_row("inf"))
    with pytest.raises(SystemExit) as exc:
        main(["prices", "show", "p5.48xlarge", "--catalog", str(d), "--json"])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("trainbill: error: ")
    assert "prices.csv, line 2, usd" in err
    assert "Traceback" not in err


def test_cache_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "prices.csv").write_bytes(
        (PRICES_HEADER + _p5_row("40", source="café")).encode("latin-1")
    )
    with pytest.raises(CatalogSchemaError, match=r"prices\.csv: not UTF-8 text"):
        read_cache(tmp_path)


# --- importers ----------------------------------------------------------------------------
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
        ("hyperpod", '[{"InstanceType":"ml.p5.48xlarge","InstanceCount":2,"InstanceStorageConfigs":5}]',
         r"instance-groups\[0\]\.InstanceStorageConfigs: must be a list"),
        ("hyperpod", ('[{"InstanceType":"ml.p5.48xlarge","InstanceCount":2,'
                      '"InstanceStorageConfigs":[{"EbsVolumeConfig":{"VolumeSizeInGB":"500"}}]}]'),
         r"VolumeSizeInGB: must be a number >= 1 \(got '500'\)"),
        ("hyperpod", ('[{"InstanceType":"ml.p5.48xlarge","InstanceCount":2,'
                      '"InstanceStorageConfigs":[{"EbsVolumeConfig":{"VolumeSizeInGB":NaN}}]}]'),
         r"VolumeSizeInGB: must be a finite number"),
        ("hyperpod", '[{"InstanceType":"ml.p5.48xlarge","InstanceCount":1000000000000000000000}]',
         r"more than the plan's limit of 100,000 nodes"),
        ("skypilot", 'resources:\n  accelerators: H100:8\n  use_spot: "false"\n',
         r"resources\.use_spot: must be true or false \(got 'false'\)"),
        ("skypilot", "resources:\n  accelerators: H100:8\n  disk_size: 256GB\n",
         r"resources\.disk_size: must be a number >= 1 \(got '256GB'\)"),
        ("skypilot", "resources:\n  accelerators: H100:8\n  disk_size: -5\n",
         r"resources\.disk_size: must be a finite number >= 1"),
        ("skypilot", "resources:\n  accelerators: H100:8\n  region: [a, b]\n",
         r"resources\.region: must be a region name"),
        ("terraform", _tf([{"type": "aws_ebs_volume", "address": "aws_ebs_volume.d", "values": {"size": "abc"}}, _P5]),
         r"aws_ebs_volume\.d\.size: must be a number"),
        ("terraform", _tf([{"type": "aws_ebs_volume", "address": "aws_ebs_volume.d", "values": {"size": -100}}, _P5]),
         r"aws_ebs_volume\.d\.size: must be a finite number >= 0"),
        ("terraform", _tf([{"type": "aws_instance", "address": "aws_instance.x", "values": "oops"}]),
         r"aws_instance\.x\.values: must be an object"),
        ("terraform", json.dumps({"planned_values": {"root_module": {"resources": 5}}}),
         r"planned_values\.root_module\.resources: must be a list"),
        ("terraform", _tf([{"type": "aws_autoscaling_group", "address": "asg", "values": {
            "desired_capacity": 4, "mixed_instances_policy": [{
                "launch_template": [{"override": [{"instance_type": "p5.48xlarge"}]}],
                "instances_distribution": [{"on_demand_percentage_above_base_capacity": 150}]}]}}]),
         r"on_demand_percentage_above_base_capacity: must be a percentage between 0 and 100"),
        ("terraform", _tf([{"type": "aws_eks_node_group", "address": "ng", "values": {
            "instance_types": "p5.48xlarge", "scaling_config": [{"desired_size": 2}]}}]),
         r"ng\.instance_types: must be a list of instance type names"),
    ],
)  # fmt: skip
def test_malformed_cluster_files_name_the_element(kind: str, text: str, pattern: str) -> None:
    with pytest.raises(TrainbillError, match=r"^cluster\.file: .*" + pattern):
        _imp(kind, text)


def test_asg_on_demand_percentage_sets_spot_share() -> None:
    # 4 nodes, 25% on-demand above base: 1 on-demand + 3 spot -> spot_fraction 3/4.
    text = _tf([{"type": "aws_autoscaling_group", "address": "asg", "values": {
        "desired_capacity": 4, "mixed_instances_policy": [{
            "launch_template": [{"override": [{"instance_type": "p5.48xlarge"}]}],
            "instances_distribution": [{"on_demand_percentage_above_base_capacity": 25}]}]}}])  # fmt: skip
    report = import_text("terraform", text, source="f", catalog=load_catalog())
    assert report.plan["purchase"]["spot_fraction"] == 0.75


def test_cluster_file_with_bom_is_read(tmp_path: Path) -> None:
    f = tmp_path / "groups.json"
    f.write_bytes(b'\xef\xbb\xbf[{"InstanceType":"ml.p5.48xlarge","InstanceCount":3}]')
    report = import_text("hyperpod", read_cluster_file(f), source=str(f), catalog=load_catalog())
    assert report.plan["cluster"]["nodes"] == 3


def test_calibration_file_with_bom_reaches_field_validation(tmp_path: Path) -> None:
    from trainbill.profile import read_calibration
    from trainbill.profile._errors import CalibrationError

    f = tmp_path / "cal.toml"
    f.write_bytes(b'\xef\xbb\xbf[calibration]\nkind = "profile"\n')
    # Without BOM handling this stopped at "not valid TOML"; now the missing field is named.
    with pytest.raises(CalibrationError, match=r"schema_version: missing"):
        read_calibration(f)
