"""checkpoint.interval_hours has a floor of one second (1/3600 h): a subnormal interval such as
5e-324 h once overflowed the checkpoint count to infinity and printed a wall-clock of "nan h"."""

from __future__ import annotations

import pytest

from trainbill.errors import SpecError
from trainbill.spec import plan_from_dict

_BASE = {"model": {"params": 1e9, "tokens": 1e10}, "cluster": {"gpu": "h100", "gpus": 8}}


@pytest.mark.parametrize("hours", [5e-324, 1e-9, 0.5 / 3600])
def test_an_interval_under_one_second_is_refused_naming_the_field(hours: float) -> None:
    with pytest.raises(SpecError) as err:
        plan_from_dict({**_BASE, "checkpoint": {"interval_hours": hours}}, source="p.toml")
    assert "checkpoint.interval_hours" in str(err.value)


def test_one_second_is_accepted() -> None:
    plan = plan_from_dict({**_BASE, "checkpoint": {"interval_hours": 1 / 3600}}, source="p.toml")
    assert plan.checkpoint.interval_hours == pytest.approx(1 / 3600, rel=1e-12)
