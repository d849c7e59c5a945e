"""Catalog look-ups answered once per catalog and question (``costs._answers._remembered``),
and the drivers' rates read through it: the same answer as asked afresh, never another
catalog's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog
from trainbill.costs import _answers
from trainbill.costs._answers import _remembered
from trainbill.costs._pricing import (
    _look_up_instance_rate,
    _look_up_priced,
    instance_rate,
    service,
)
from trainbill.errors import PriceNotFoundError
from trainbill.spec import plan_from_dict
from trainbill.usage import usage_for


def test_an_answer_is_looked_up_once_per_catalog_and_question(catalog: Catalog) -> None:
    asked: list[str] = []

    def look(what: str) -> str:
        asked.append(what)
        return what.upper()

    other = replace(catalog, version="another")  # equal prices, another catalog
    assert _remembered(catalog, ("test", "a"), lambda: look("a")) == "A"
    assert _remembered(catalog, ("test", "a"), lambda: look("a")) == "A"
    assert _remembered(catalog, ("test", "b"), lambda: look("b")) == "B"
    assert _remembered(other, ("test", "a"), lambda: look("a")) == "A"
    assert asked == ["a", "b", "a"]  # once per (catalog, question)


def test_a_failed_look_up_is_asked_again(catalog: Catalog) -> None:
    calls = 0

    def fail() -> str:
        nonlocal calls
        calls += 1
        raise PriceNotFoundError("none")

    for _ in range(2):
        with pytest.raises(PriceNotFoundError):
            _remembered(catalog, ("test", "fails"), fail)
    assert calls == 2


def test_full_answers_are_forgotten_at_once(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``_ANSWERS_MAX`` questions every answer is dropped: the memo stays bounded."""
    monkeypatch.setattr(_answers, "_ANSWERS", {})
    monkeypatch.setattr(_answers, "_ANSWERS_MAX", 3)
    for k in range(3):
        _remembered(catalog, ("test", k), lambda k=k: k)  # type: ignore[misc]
    assert len(_answers._ANSWERS) == 3
    _remembered(catalog, ("test", 3), lambda: 3)
    assert len(_answers._ANSWERS) == 1


def test_rates_are_the_catalogs_own(catalog: Catalog) -> None:
    """Two tiny catalogs pricing p5.48xlarge at $10 and $20 on demand ($4 and $8 spot): each
    usage priced with each catalog gets that catalog's rate, however often asked, and the same
    rate (and cited source) as the look-up asked afresh."""
    usage = usage_for(plan_from_dict(zero_hidden_plan()), catalog, today=TODAY)
    spec = catalog.table("services.aws.block_storage")  # the disk product AWS bills
    assert spec is not None
    disk_item = str(spec["item"])
    cheap = tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 10.0),
        price("p5.48xlarge", "spot", "instance-hour", 4.0),
        price(disk_item, "on_demand", "GB-month", 0.08),
    )
    dear = tiny_catalog(
        catalog,
        price("p5.48xlarge", "on_demand", "instance-hour", 20.0),
        price("p5.48xlarge", "spot", "instance-hour", 8.0),
        price(disk_item, "on_demand", "GB-month", 0.16),
    )
    for _ in range(2):
        for cat, od, spot in ((cheap, 10.0, 4.0), (dear, 20.0, 8.0)):
            assert instance_rate(cat, usage, "on_demand").usd == od
            assert instance_rate(cat, usage, "spot").usd == spot
            for option in ("on_demand", "spot"):
                fresh = _look_up_instance_rate(cat, usage, option, "p5.48xlarge")
                assert instance_rate(cat, usage, option) == fresh
    disk = service(cheap, usage, "block_storage")
    assert disk is not None
    assert disk.usd == 0.08
    fresh_disk = _look_up_priced(
        cheap, disk_item, provider="aws", region=usage.region, as_of=usage.as_of,
        product=str(spec["product"]),
    )  # fmt: skip
    assert (disk.usd, disk.source, disk.product) == (
        fresh_disk.usd,
        fresh_disk.source,
        fresh_disk.product,
    )
    dear_disk = service(dear, usage, "block_storage")
    assert dear_disk is not None
    assert dear_disk.usd == 0.16
