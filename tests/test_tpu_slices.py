"""TPU clusters come in the slice sizes Google sells (issue #38 item 4): no 362- or 1,448-chip
recommendation from the planner or the sizing sweep, and a warning for a plan that asks one."""

from __future__ import annotations

from conftest import TODAY
from trainbill.catalog import Catalog
from trainbill.optimize.space import _default_nodes
from trainbill.sizing import right_sizing
from trainbill.spec import plan_from_dict
from trainbill.usage import nearest_slice, resolve_job, tpu_slice_sizes

V6E = [1, 4, 8, 16, 32, 64, 128, 256]  # Google Cloud TPU v6e supported 2D slices (docs)


def _plan(chips: int) -> dict[str, object]:
    return {
        "model": {"params": 7e9, "tokens": 1e11},
        "cluster": {"gpu": "tpu-v6e", "gpus": chips},
        "prices": {"as_of": "2026-01-05"},
    }


def test_sold_sizes_are_single_slices_then_multislice(catalog: Catalog) -> None:
    inst = catalog.instance("tpu-v6e")
    # singles, then 2 × 256 = 512, 3 × 256 = 768, 4 × 256 = 1024 (Multislice)
    assert tpu_slice_sizes(catalog, inst, 1024) == (*V6E, 512, 768, 1024)
    assert tpu_slice_sizes(catalog, catalog.instance("p5.48xlarge"), 1024) is None


def test_nearest_slice_on_a_log_scale() -> None:
    sizes = (*V6E, 512, 768, 1024, 1280, 1536)
    assert nearest_slice(sizes, 362.0) == 256  # ln(362/256) = 0.3466 < ln(512/362) = 0.3467
    assert nearest_slice(sizes, 1448.0) == 1536  # ln(1536/1448) = 0.059 < ln(1448/1280) = 0.123
    assert nearest_slice(sizes, 100.0) == 128  # ln(128/100) = 0.247 < ln(100/64) = 0.446


def test_planner_and_sizing_offer_only_sold_sizes(catalog: Catalog) -> None:
    """256 chips swept in √2 steps from 1/8× to 8×: 32 ... 2,048 land on sold sizes only
    (181 → 128 or 256, 362 → 256 or 512, 1,448 → 1,536), never the raw steps."""
    plan = plan_from_dict(_plan(256))
    inst = catalog.instance("tpu-v6e")
    sold = set(tpu_slice_sizes(catalog, inst, 100_000) or ())
    nodes = _default_nodes(plan, catalog, inst)
    assert set(nodes) <= sold
    assert 362 not in nodes
    assert 1448 not in nodes
    points, _ = right_sizing(plan, catalog, today=TODAY)
    assert {p.nodes for p in points} <= sold


def test_an_unsold_chip_count_is_warned(catalog: Catalog) -> None:
    job = resolve_job(plan_from_dict(_plan(362)), catalog, today=TODAY)
    (note,) = [w for w in job.warnings if "not a slice size" in w]
    assert "256 or 512 chips" in note
    ok = resolve_job(plan_from_dict(_plan(256)), catalog, today=TODAY)
    assert not [w for w in ok.warnings if "not a slice size" in w]
