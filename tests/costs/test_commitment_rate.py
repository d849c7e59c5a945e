"""The one rule for a commitment rate (``costs._pricing.commitment_rate_for``), issue #38: the
kind's published rate, else its RI proxy (labelled "proxy"), else the earliest published rate
carried back to the plan's date by the provider's own on-demand ratio; never a claimed discount.

Tiny dated prices, so the expected values are hand arithmetic on figures written here:
p5.48xlarge on demand $100 from 2024-01-01, $50 from 2025-06-01 (a price cut); Convertible RI
1yr $40 and Standard RI 1yr $30 from 2025-11-30; EC2 Instance SP 1yr $32 from 2026-09-27.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any

import pytest

from conftest import TODAY, zero_hidden_plan
from costs.tiny import price, tiny_catalog
from trainbill.catalog import Catalog, PricePoint, Provenance
from trainbill.costs._pricing import commitment_rate_for
from trainbill.forecasting import forecast
from trainbill.spec import plan_from_dict


def _dated(item: str, option: str, usd: float, day: date) -> PricePoint:
    return replace(price(item, option, "instance-hour", usd), effective_from=day)


CUT = date(2025, 6, 1)
RI_DAY = date(2025, 11, 30)
SP_DAY = date(2026, 9, 27)


@pytest.fixture
def dated(catalog: Catalog) -> Catalog:
    return tiny_catalog(
        catalog,
        _dated("p5.48xlarge", "on_demand", 100.0, date(2024, 1, 1)),
        _dated("p5.48xlarge", "on_demand", 50.0, CUT),
        _dated("p5.48xlarge", "convertible_ri_1yr", 40.0, RI_DAY),
        _dated("p5.48xlarge", "standard_ri_1yr", 30.0, RI_DAY),
        _dated("p5.48xlarge", "sp_1yr", 32.0, SP_DAY),
        _dated("trn1.32xlarge", "on_demand", 20.0, date(2024, 1, 1)),
    )


def _rate(catalog: Catalog, kind: str, on: date, item: str = "p5.48xlarge") -> Any:
    return commitment_rate_for(
        catalog, item=item, provider="aws", region="us-east-1", as_of=on, kind=kind, term="1yr"
    )


def test_the_kinds_own_published_rate_comes_first(dated: Catalog) -> None:
    """On 2026-10-01 the EC2 Instance SP's own $32 is in force: used as published."""
    r = _rate(dated, "ec2-instance", date(2026, 10, 1))
    assert r.usd == 32.0
    assert r.effective_from == SP_DAY
    assert "proxy" not in r.source


def test_a_missing_rate_uses_its_ri_proxy_labelled(dated: Catalog) -> None:
    """No Compute SP rate: the Convertible RI $40 stands in, said "proxy" and UNVERIFIED; an EC2
    Instance SP before its own rate's date uses the Standard RI $30 the same way."""
    r = _rate(dated, "compute", date(2026, 1, 1))
    assert r.usd == 40.0
    assert r.source.startswith("proxy: no published 1yr Compute Savings Plan rate")
    assert r.provenance is Provenance.UNVERIFIED
    s = _rate(dated, "ec2-instance", date(2026, 1, 1))
    assert s.usd == 30.0
    assert "Standard RI" in s.source


def test_a_plan_before_every_published_rate_is_carried_back_by_the_on_demand_ratio(
    dated: Catalog,
) -> None:
    """2025-05-01, before the cut and before any commitment rate: on demand then $100 × (the
    Convertible RI $40 ÷ on demand $50 on 2025-11-30) = $80; the source names both prices and
    both dates."""
    r = _rate(dated, "compute", date(2025, 5, 1))
    assert r.usd == pytest.approx(100.0 * (40.0 / 50.0))
    assert r.effective_from == RI_DAY
    assert "on-demand $100 on 2025-05-01" in r.source
    assert "$40 ÷ on-demand $50, both on 2025-11-30" in r.source
    assert "proxy" in r.source
    assert r.provenance is Provenance.UNVERIFIED


def test_no_rate_of_any_kind_is_none_never_a_claimed_discount(dated: Catalog) -> None:
    """trn1 has an on-demand price and no commitment rate: nothing to derive from."""
    assert _rate(dated, "compute", date(2026, 1, 1), item="trn1.32xlarge") is None


def _fc(catalog: Catalog, purchase: dict[str, Any], as_of: str, **cluster: Any) -> Any:
    plan = zero_hidden_plan(**cluster)
    plan["purchase"] = purchase
    plan["prices"] = {"as_of": as_of}
    return forecast(plan_from_dict(plan), catalog, today=TODAY)


def test_bought_for_one_run_charges_the_term_and_says_not_to_buy(dated: Catalog) -> None:
    """4 nodes × 10 h on 2025-05-01, a bought 1yr Compute SP at the carried-back $80: the run's
    hours cost 4 × 10 × $80 = $3,200 and the unused term 4 × $80 × (8,760 − 10) h = $2,800,000,
    above the $4,000 on demand (4 × 10 × $100)."""
    fc = _fc(dated, {"savings_plan": "1yr"}, "2025-05-01")
    assert fc.total_usd == pytest.approx(4 * 10 * 80.0 + 4 * 80.0 * (8760 - 10))
    unused = next(ln for ln in fc.ledger.in_category("discount") if ln.after_run)
    assert unused.item == "1yr Compute Savings Plan: unused commitment"
    assert unused.cost_usd == pytest.approx(4 * 80.0 * (8760 - 10))


def test_covered_by_one_already_held_charges_its_rate_and_names_it(dated: Catalog) -> None:
    """Held, not bought: 4 × 10 h × $80 = $3,200, below the $4,000 on demand; the basis says
    whose commitment it is and names the rate's source and date."""
    fc = _fc(dated, {"savings_plan": "1yr", "commitment": "existing"}, "2025-05-01")
    assert fc.total_usd == pytest.approx(4 * 10 * 80.0)
    (line,) = fc.ledger.in_category("discount")
    assert "existing commitment" in line.basis
    assert "test price 40.0 per instance-hour" in line.basis  # the rate's source
    assert "2025-11-30" in line.basis  # and its date
    assert "Compute Savings Plan covers any instance family" in line.basis


def test_an_ec2_instance_plan_says_moving_to_trainium_loses_it(dated: Catalog) -> None:
    """The article's "switching to Trainium loses the discount", computed: the EC2 Instance
    plan's basis names the p5 family it covers and the Compute plan that would keep it."""
    fc = _fc(
        dated,
        {"savings_plan": "1yr", "commitment": "existing", "savings_plan_kind": "ec2-instance"},
        "2026-10-01",
    )
    (line,) = fc.ledger.in_category("discount")
    assert "covers the p5 family in us-east-1 only" in line.basis
    assert "a Compute Savings Plan would keep it" in line.basis


def test_a_held_rate_over_a_year_older_than_the_plan_is_warned_with_both_dates(
    dated: Catalog,
) -> None:
    """Plan priced 2027-06-01, held Compute SP priced at the Convertible RI of 2025-11-30: 548
    days (> 365) apart, a warning with both dates; on 2026-10-01 (305 days) none."""
    fc = _fc(dated, {"savings_plan": "1yr", "commitment": "existing"}, "2027-06-01")
    (w,) = [c.text for c in fc.cautions if c.kind == "commitment"]
    assert "2025-11-30" in w
    assert "2027-06-01" in w
    near = _fc(dated, {"savings_plan": "1yr", "commitment": "existing"}, "2026-10-01")
    assert not [c for c in near.cautions if c.kind == "commitment"]
