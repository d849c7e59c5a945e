"""Catalog look-ups (``trainbill.catalog.lookups``): accelerators by the names users type.

A tiny catalog is built in the test (two parts of one family and an unrelated chip), so a change
to the packaged hardware data cannot break the lookup logic; one test reads the packaged rows,
because which part ``a100`` means is a sourced data decision.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from trainbill.catalog import Accelerator, Catalog, load_catalog
from trainbill.catalog.rows import accelerator_key
from trainbill.errors import CatalogSchemaError, PriceNotFoundError
from trainbill.forecasting import forecast
from trainbill.spec import plan_from_dict


def _part(id_: str, *aliases: str) -> Accelerator:
    return Accelerator(
        id=id_, name=f"Part {id_.upper()}", vendor="nvidia", peak_bf16_tflops=100.0,
        peak_fp8_tflops=None, hbm_gb=40.0, hbm_tbps=1.0, intra_node_gbytes_per_s=100.0,
        launched=None, source="test", as_of=date(2026, 1, 1), aliases=aliases,
    )  # fmt: skip


def _tiny(*parts: Accelerator) -> Catalog:
    return Catalog(
        accelerators={p.id: p for p in parts}, instances={}, prices=(), spot_advisor=(),
        assumptions={}, version="test", snapshot=date(2026, 1, 1),
    )  # fmt: skip


FAMILY = (_part("x100-40gb", "x100", "x100-sxm-40gb"), _part("x100-80gb"), _part("y7"))


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("h100", "h100"),
        ("  NVIDIA A100_SXM4  80GB ", "a100-sxm4-80gb"),  # vendor word, case, _ and spaces
        ("AMD Instinct MI300X", "mi300x"),
        ("Google Cloud TPU v5p", "tpu-v5p"),
        ("nvidia", "nvidia"),  # a vendor word alone is not stripped to nothing
        ("H100 PCIe", "h100-pcie"),  # a different part keeps its own name
    ],
)
def test_accelerator_key(typed: str, key: str) -> None:
    assert accelerator_key(typed) == key


def test_lookup_by_id_alias_and_typed_forms() -> None:
    cat = _tiny(*FAMILY)
    assert cat.accelerator("x100-80gb").id == "x100-80gb"
    assert cat.accelerator("x100").id == "x100-40gb"  # alias
    assert cat.accelerator("X100 SXM 40GB").id == "x100-40gb"  # alias, typed with spaces
    assert cat.accelerator("NVIDIA X100_80GB").id == "x100-80gb"  # id, vendor word and _


def test_family_alias_names_the_other_parts() -> None:
    """``x100`` means the 40 GB part, but ``x100-80gb`` is an x100 too: say so. An id, an alias
    no other id extends, and an unknown name have no namesakes."""
    cat = _tiny(*FAMILY)
    assert cat.accelerator_namesakes("X100") == ("x100-80gb",)
    assert cat.accelerator_namesakes("x100-40gb") == ()
    assert cat.accelerator_namesakes("x100-sxm-40gb") == ()
    assert cat.accelerator_namesakes("z9") == ()


def test_unknown_name_suggests_ids_before_aliases() -> None:
    cat = _tiny(*FAMILY)
    with pytest.raises(PriceNotFoundError, match=r"'x100-8gb'\. Did you mean 'x100-80gb'"):
        cat.accelerator("x100-8gb")


def test_one_alias_for_two_parts_is_refused() -> None:
    """An overlay's alias that the packaged catalog gives another part: the lookup would depend on
    which row came first."""
    with pytest.raises(CatalogSchemaError, match=r"alias 'x100' names both x100-40gb and y7"):
        _tiny(_part("x100-40gb", "x100"), _part("y7", "x100"))
    with pytest.raises(CatalogSchemaError, match=r"alias 'y7' names both y7 and x100-40gb"):
        _tiny(_part("y7"), _part("x100-40gb", "y7"))


_HEADER = (
    "id,name,vendor,peak_bf16_tflops,peak_fp8_tflops,hbm_gb,hbm_tbps,intra_node_gbytes_per_s,"
    "tdp_w,launched,source,as_of,aliases\n"
)
_ROW = "q1-big,Q1 Big,nvidia,100,,80,2,100,500,2024-01-01,my datasheet,2024-01-01,{aliases}\n"


def _overlay(tmp_path: Path, text: str) -> Path:
    (tmp_path / "accelerators.csv").write_text(text, encoding="utf-8")
    return tmp_path


def test_overlay_aliases_are_read(tmp_path: Path) -> None:
    cat = load_catalog([_overlay(tmp_path, _HEADER + _ROW.format(aliases="Q1;q1 sxm"))])
    assert cat.accelerator("q1").id == "q1-big"
    assert cat.accelerator("Q1_SXM").id == "q1-big"


def test_overlay_empty_alias_names_file_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(CatalogSchemaError, match=r"accelerators\.csv, line 2, aliases: 'q1;;q2'"):
        load_catalog([_overlay(tmp_path, _HEADER + _ROW.format(aliases="q1;;q2"))])


def test_overlay_alias_shared_by_two_rows_is_refused(tmp_path: Path) -> None:
    second = _ROW.replace("q1-big,Q1 Big", "q1-small,Q1 Small").format(aliases="q1")
    with pytest.raises(CatalogSchemaError, match=r"alias 'q1' names both q1-big and q1-small"):
        load_catalog([_overlay(tmp_path, _HEADER + _ROW.format(aliases="q1") + second)])


def test_overlay_written_before_the_aliases_column_still_loads(tmp_path: Path) -> None:
    """The header with ``launched`` but no ``aliases`` (every overlay written before them)."""
    header = _HEADER.replace(",aliases", "")
    row = _ROW.replace(",{aliases}", "")
    cat = load_catalog([_overlay(tmp_path, header + row)])
    assert cat.accelerator("q1-big").aliases == ()
    assert cat.accelerator("a100").id == "a100-40gb"  # the packaged aliases still apply


def test_packaged_a100_is_the_40gb_part_and_the_forecast_says_so() -> None:
    """Sourced decision (accelerators.csv): 'a100' is the 40 GB part, as AWS p4d and SkyPilot's
    'A100' mean it. A forecast typed with it prices that part and names the 80 GB one."""
    cat = load_catalog()
    assert cat.accelerator("A100").id == "a100-40gb"
    assert "alias 'a100'" in cat.accelerator("a100-40gb").source
    plan = plan_from_dict(
        {"model": {"params": 7e9, "tokens": 1e11}, "cluster": {"gpu": "A100", "gpus": 16}}
    )
    fc = forecast(plan, cat, today=date(2026, 12, 4))
    assert fc.usage.accelerator.id == "a100-40gb"
    assert any(
        "cluster.gpu 'A100' read as a100-40gb" in w and "a100-80gb" in w for w in fc.warnings
    ), fc.warnings
    exact = forecast(
        plan_from_dict(
            {"model": {"params": 7e9, "tokens": 1e11}, "cluster": {"gpu": "a100-40gb", "gpus": 16}}
        ),
        cat,
        today=date(2026, 12, 4),
    )
    assert not any("read as" in w for w in exact.warnings)
    assert exact.total_usd == fc.total_usd


def test_table_assumption_present_absent_or_not_a_table() -> None:
    """``Catalog.table``: the TOML table as written (assumptions.toml: services.aws.block_storage
    = { item = "ebs.gp3.storage", product = "EBS gp3" }), None for a key the catalog lacks, and
    a catalog error naming the key for a scalar."""
    cat = load_catalog()
    assert cat.table("services.aws.block_storage") == {
        "item": "ebs.gp3.storage",
        "product": "EBS gp3",
    }
    assert cat.table("services.nowhere.block_storage") is None
    with pytest.raises(CatalogSchemaError, match=r"reliability\.straggler_cv.*must be a table"):
        cat.table("reliability.straggler_cv")
