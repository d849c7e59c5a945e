"""Zones: cluster.zone and data.zone checked against the region, and zone-level spot prices.

Per-AZ spot prices are the SkyPilot catalog v7 aws/vms.csv snapshot @001367d2 (us-east-1
p5.48xlarge: use1-az3 $20.9934 ... use1-az1 $30.326; the region's row is their midpoint $25.66).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import SEED, TODAY, run_cli, zero_hidden_plan
from trainbill.catalog import Catalog
from trainbill.errors import SpecError
from trainbill.forecasting import Forecast, forecast
from trainbill.spec import load_plan, plan_from_dict


def _spot_fc(catalog: Catalog, zone: str, as_of: str = "2025-05-01") -> Forecast:
    plan: dict[str, Any] = zero_hidden_plan(zone=zone, region="us-east-1")
    plan["purchase"] = {"spot_fraction": 0.5}
    plan["prices"] = {"as_of": as_of}
    return forecast(plan_from_dict(plan), catalog, today=TODAY)


def _spot_line(fc: Forecast) -> Any:
    (line,) = [ln for ln in fc.ledger.in_category("compute") if ln.item.endswith(" spot")]
    return line


def test_az_id_picks_that_zones_spot_price(catalog: Catalog) -> None:
    """use1-az3: 2 spot nodes × 10 h × $20.9934 = $419.868 (not the region's $25.66)."""
    line = _spot_line(_spot_fc(catalog, "use1-az3"))
    assert line.unit_price_usd == pytest.approx(20.9934)
    assert line.cost_usd == pytest.approx(2 * 10 * 20.9934)
    assert "use1-az3" in line.source


def test_az_name_uses_the_region_price_and_says_why(catalog: Catalog) -> None:
    """us-east-1c is an account-specific AZ name: the region's $25.66, and a note asking for the AZ
    ID."""
    fc = _spot_fc(catalog, "us-east-1c")
    assert _spot_line(fc).unit_price_usd == pytest.approx(25.66)
    assert any("AZ name" in w and "use1-az1" in w for w in fc.warnings)


def test_region_price_newer_than_the_zone_snapshot_wins(catalog: Catalog) -> None:
    """On 2026-12-01 the region's spot point (2026-09-20, $23.67) is newer than the zone's
    (2025-01-01)."""
    line = _spot_line(_spot_fc(catalog, "use1-az3", as_of="2026-12-01"))
    assert line.unit_price_usd == pytest.approx(23.67)
    assert "older" in line.source


def test_unknown_zone_lists_the_regions_zones(catalog: Catalog) -> None:
    """use1-az9 is no us-east-1 zone: the error names the field and lists the valid ones."""
    with pytest.raises(SpecError) as err:
        _spot_fc(catalog, "use1-az9")
    text = str(err.value)
    assert text.startswith("cluster.zone: 'use1-az9' is not a zone of aws us-east-1")
    assert "Allowed: use1-az1, use1-az2, use1-az3, use1-az4, use1-az5, use1-az6, us-east-1a" in text
    assert "\n" not in text


def test_zone_of_another_region_says_which(catalog: Catalog) -> None:
    """use2-az1 given for a us-east-1 cluster: the error says it is in us-east-2."""
    with pytest.raises(SpecError, match=r"'use2-az1' is in us-east-2"):
        _spot_fc(catalog, "use2-az1")


def test_unknown_zone_through_the_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The CLI prints one line naming cluster.zone and the allowed zones, exit code 1, no
    traceback."""
    text = (SEED).read_text(encoding="utf-8")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        text.replace('orchestrator = "ec2"', 'orchestrator = "ec2"\nzone = "use1-az9"'),
        encoding="utf-8",
    )
    code, out, err = run_cli(capsys, "forecast", str(plan))
    assert code == 1
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "cluster.zone: 'use1-az9' is not a zone of aws us-east-1" in lines[0]
    assert "use1-az6" in lines[0]


def test_unknown_data_source_through_the_loader_and_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """data.source = "gcs": the plan loader and the CLI both name the field and list the five
    sources."""
    text = (SEED).read_text(encoding="utf-8")
    plan = tmp_path / "plan.toml"
    plan.write_text(text.replace('source = "s3"', 'source = "gcs"'), encoding="utf-8")
    allowed = "'s3', 'fsx', 'ebs', 'other_cloud' or 'on_premises'"
    with pytest.raises(SpecError) as err:
        load_plan(plan)
    assert f"data.source: 'gcs' is not allowed; allowed values: {allowed}" in str(err.value)
    assert str(plan) in str(err.value)
    code, _, stderr = run_cli(capsys, "forecast", str(plan))
    assert code == 1
    assert len(stderr.strip().splitlines()) == 1
    assert allowed in stderr


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"zone": "use1-az2"}, "zone applies to fsx or ebs data"),
        ({"source": "other_cloud"}, "needs provider"),
        ({"source": "s3", "provider": "gcp"}, 'needs source = "other_cloud"'),
        ({"source": "on_premises", "location": "cross_az"}, "not used with source = 'on_premises'"),
    ],
)
def test_data_fields_that_do_not_fit_the_source_are_refused(
    data: dict[str, Any], message: str
) -> None:
    """A placement field the source cannot use is an error naming data, not silently ignored."""
    plan = zero_hidden_plan()
    plan["data"] = data
    with pytest.raises(SpecError, match=message):
        plan_from_dict(plan)


def test_data_zone_needs_cluster_zone(catalog: Catalog) -> None:
    """An FSx zone without the cluster's zone cannot say whether transfer crosses AZs: error."""
    plan = zero_hidden_plan()
    plan["data"] = {"source": "fsx", "zone": "use1-az2", "dataset_gb": 1}
    with pytest.raises(SpecError, match=r"data\.zone needs cluster\.zone"):
        forecast(plan_from_dict(plan), catalog, today=TODAY)


def test_location_contradicting_zones_is_refused(catalog: Catalog) -> None:
    """location = same_az but the zones differ: which was meant? An error, not a guess."""
    plan = zero_hidden_plan(zone="use1-az4", region="us-east-1")
    plan["data"] = {"source": "fsx", "zone": "use1-az2", "location": "same_az", "dataset_gb": 1}
    with pytest.raises(SpecError, match=r"data\.location"):
        forecast(plan_from_dict(plan), catalog, today=TODAY)


def test_other_cloud_naming_the_clusters_cloud_is_refused(catalog: Catalog) -> None:
    """provider = "aws" for an AWS cluster is not another cloud: use s3/fsx/ebs with region."""
    plan = zero_hidden_plan()
    plan["data"] = {"source": "other_cloud", "provider": "aws", "dataset_gb": 1}
    with pytest.raises(SpecError, match="the cluster's own cloud"):
        forecast(plan_from_dict(plan), catalog, today=TODAY)


def test_zone_rows_are_not_listed_as_regions(catalog: Catalog) -> None:
    """Zone-level price points (region column = AZ ID) do not make use1-az3 an AWS region."""
    assert "use1-az3" not in catalog.regions("aws")
    assert catalog.zone_region("aws", "use1-az3") == "us-east-1"


def test_seed_example_is_unchanged_without_a_zone(catalog: Catalog) -> None:
    """No cluster.zone in the seed: its spot line stays the region's $25.66."""
    fc = forecast(load_plan(SEED), catalog, today=TODAY)
    assert _spot_line(fc).unit_price_usd == pytest.approx(25.66)
