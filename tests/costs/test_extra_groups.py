"""Extra-groups driver: a head node or second pool for the whole wall-clock at its own price, on
round tiny prices ($10/$4 per p5 instance-hour, $1 per c5.large hour, $0.40 spot)."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog, Provenance
from trainbill.costs import extra_groups
from trainbill.errors import PriceNotFoundError
from trainbill.ledger import Charge
from trainbill.spec import plan_from_dict
from trainbill.usage import Usage, usage_for


def _usage(catalog: Catalog, groups: list[dict[str, Any]], **cluster: Any) -> Usage:
    """4 × p5.48xlarge for a stated 10 h (wall-clock = 10 h) plus ``groups``."""
    plan = zero_hidden_plan(extra_groups=groups, **cluster)
    return usage_for(plan_from_dict(plan), catalog, today=TODAY)


def _tiny(catalog: Catalog, *more: Any) -> Catalog:
    return tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("c5.large", "on_demand", "instance-hour", 1.0),
        price("c5.large", "spot", "instance-hour", 0.4),
        *more,
    )


def _lines(usage: Usage, catalog: Catalog) -> list[Charge]:
    return list(extra_groups.price(usage, catalog))


def test_no_extra_groups_no_lines(catalog: Catalog) -> None:
    """A plan with only the GPU workers has no extra-group line."""
    assert _lines(_usage(catalog, []), _tiny(catalog)) == []


def test_each_group_runs_the_whole_wall_clock_at_its_own_price(catalog: Catalog) -> None:
    """Head: 1 × 10 h × $1 = $10 on-demand; pool: 3 spot × 10 h × $0.40 = $12."""
    usage = _usage(
        catalog,
        [
            {"name": "head", "instance": "c5.large"},
            {"name": "pool", "instance": "c5.large", "count": 3, "spot": True},
        ],
    )
    head, pool = _lines(usage, _tiny(catalog))
    assert head.item == "c5.large head group (on-demand)"
    assert head.category == "compute"
    assert head.quantity == pytest.approx(10.0)
    assert head.unit_price_usd == 1.0
    assert head.cost_usd == pytest.approx(10.0)
    assert head.pricing_category == "Standard"
    assert pool.item == "c5.large pool group (spot)"
    assert pool.quantity == pytest.approx(30.0)
    assert pool.cost_usd == pytest.approx(12.0)
    assert pool.pricing_category == "Dynamic"


def test_hyperpod_on_demand_group_uses_the_sagemaker_price(catalog: Catalog) -> None:
    """HyperPod bills ml.c5.large: 1 × wall-clock × $1.50 where the catalog has that price."""
    usage = _usage(catalog, [{"name": "head", "instance": "c5.large"}], orchestrator="hyperpod")
    tiny = _tiny(
        catalog,
        price("ml.p5.48xlarge", "on_demand", "instance-hour", 12.0),
        price("ml.c5.large", "on_demand", "instance-hour", 1.5),
    )
    (head,) = _lines(usage, tiny)
    assert head.quantity == pytest.approx(usage.wall_hours)
    assert head.unit_price_usd == 1.5
    assert "SageMaker ml.c5.large price (HyperPod)" in head.basis()


def test_hyperpod_without_a_sagemaker_price_says_the_premium_is_missing(catalog: Catalog) -> None:
    """No ml.c5.large price: the EC2 $1 is used and the basis says the ml.* premium is left out."""
    usage = _usage(catalog, [{"name": "head", "instance": "c5.large"}], orchestrator="hyperpod")
    (head,) = _lines(usage, _tiny(catalog))
    assert head.unit_price_usd == 1.0
    assert "HyperPod ml.* premium is not included" in head.basis()


def test_hyperpod_spot_group_keeps_the_ec2_spot_price(catalog: Catalog) -> None:
    """A spot group is not ml.* usage: $0.40 spot even under HyperPod with an ml.c5.large price
    (a run dated 2026-01-05, after HyperPod offered Spot on 2025-11-26)."""
    plan = zero_hidden_plan(
        extra_groups=[{"name": "pool", "instance": "c5.large", "spot": True}],
        orchestrator="hyperpod",
    )
    plan["prices"] = {"as_of": "2026-01-05"}
    usage = usage_for(plan_from_dict(plan), catalog, today=TODAY)
    tiny = _tiny(catalog, price("ml.c5.large", "on_demand", "instance-hour", 1.5))
    (pool,) = _lines(usage, tiny)
    assert pool.unit_price_usd == 0.4


def test_a_spot_group_in_a_named_zone_gets_that_zones_spot_price(catalog: Catalog) -> None:
    """Looked up as the workers' spot price is: use1-az4's $0.30 beats the region's $0.40, so
    3 × 10 h × $0.30 = $9, and the source names the zone."""
    usage = _usage(
        catalog,
        [{"name": "pool", "instance": "c5.large", "count": 3, "spot": True}],
        region="us-east-1",
        zone="use1-az4",
    )
    zone = price("c5.large", "spot", "instance-hour", 0.3, region="use1-az4")
    (pool,) = _lines(usage, _tiny(catalog, zone))
    assert pool.unit_price_usd == 0.3
    assert pool.cost_usd == pytest.approx(9.0)
    assert pool.source.startswith("use1-az4 zone spot price")


def test_a_groups_source_says_how_old_its_price_is(catalog: Catalog) -> None:
    """Priced on 2025-05-01 from a point effective 2024-01-01: 366 days of 2024 (a leap year) +
    31 + 28 + 31 + 30 days of 2025 = 486 days old, as the workers' lines say it."""
    usage = _usage(catalog, [{"name": "head", "instance": "c5.large"}])
    (head,) = _lines(usage, _tiny(catalog))
    assert "486 days old on 2025-05-01" in head.source
    assert head.provenance is Provenance.PUBLISHED


def test_a_group_with_no_on_demand_sku_is_priced_as_capacity_blocks(catalog: Catalog) -> None:
    """p5e.48xlarge has no On-Demand SKU: a 2-node p5e group in us-east-2 is priced at its
    Capacity Block rate, 2 × 10 h × $30 = $600, a committed purchase."""
    usage = _usage(
        catalog,
        [{"name": "second", "instance": "p5e.48xlarge", "count": 2}],
        region="us-east-2",
    )
    tiny = tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0, region="us-east-2"),
        price("p5e.48xlarge", "capacity_block", "instance-hour", 30.0, region="us-east-2"),
    )
    (group,) = _lines(usage, tiny)
    assert group.item == "p5e.48xlarge second group (Capacity Block)"
    assert group.cost_usd == pytest.approx(600.0)
    assert group.pricing_category == "Committed"


def test_a_group_priced_in_another_region_is_marked_so(catalog: Catalog) -> None:
    """Workers in us-west-2 at their own price; c5.large is priced only in us-east-1, so the head
    node's line is a reference-region line (and the forecast warns of that kind)."""
    usage = _usage(catalog, [{"name": "head", "instance": "c5.large"}], region="us-west-2")
    tiny = _tiny(catalog, price("p5.48xlarge", "on_demand", "instance-hour", 10.0,
                                region="us-west-2"))  # fmt: skip
    (head,) = _lines(usage, tiny)
    assert head.unit_price_usd == 1.0
    assert head.provenance is Provenance.REFERENCE_REGION


def test_a_group_without_a_price_is_named_by_its_plan_field(catalog: Catalog) -> None:
    """The tiny catalog has no spot price for p5.48xlarge: the second group's error names
    cluster.extra_groups[1], its name and instance."""
    usage = _usage(
        catalog,
        [
            {"name": "head", "instance": "c5.large"},
            {"name": "burst", "instance": "p5.48xlarge", "spot": True},
        ],
    )
    with pytest.raises(
        PriceNotFoundError, match=r"^cluster\.extra_groups\[1\] \(burst, instance 'p5\.48xlarge'\)"
    ):
        _lines(usage, _tiny(catalog))


def test_hyperpod_spot_group_before_spot_was_offered_is_on_demand(catalog: Catalog) -> None:
    """The same spot group on HyperPod in a run dated 2025-05-01 (zero_hidden_plan's date, before
    HyperPod Spot on 2025-11-26) is billed on demand: 3 × 10 h × $1.00, not $0.40."""
    usage = _usage(
        catalog,
        [{"name": "pool", "instance": "c5.large", "count": 3, "spot": True}],
        orchestrator="hyperpod",
    )
    (pool,) = _lines(usage, _tiny(catalog))
    assert pool.unit_price_usd == 1.0
    assert pool.cost_usd == pytest.approx(3 * 10 * 1.0)
