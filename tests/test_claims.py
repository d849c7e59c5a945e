"""Claimed-bill audit: each line's implied quantity at list price, its verdict, and the total."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import EXAMPLES, run_cli
from trainbill.catalog import Catalog
from trainbill.claims import ClaimAudit, audit_claims, claims_from_dict
from trainbill.errors import SpecError
from trainbill.forecasting import forecast
from trainbill.ledger import CATEGORIES
from trainbill.spec import load_plan

QUOTE = 226529.0  # the article's "Direct compute cost"
TOTAL = 548730.0  # its "final bill"
OD_CLUSTER_HOUR = 32 * 98.32  # 32 × p5.48xlarge at the catalog's $98.32/h = $3,146.24


def _article(catalog: Catalog) -> ClaimAudit:
    import tomllib

    doc = tomllib.loads((EXAMPLES / "article-claims.toml").read_text())
    plan = load_plan(EXAMPLES / doc.pop("plan"))
    claim = claims_from_dict(doc, source="article-claims.toml")
    return audit_claims(claim, forecast(plan, catalog), catalog)


def test_article_s3_gets_are_36_6_billion_requests(catalog: Catalog) -> None:
    """$14,632 / $0.0004 per 1,000 GETs = 36,580,000 thousand = 36.58 billion requests."""
    line = next(a for a in _article(catalog).lines if a.line.category == "data_transfer")
    assert line.implied_quantity == pytest.approx(14632 / 0.0004)  # in units of 1000 requests
    assert line.unit == "1000 requests"
    assert "36.6 billion requests" in line.arithmetic
    assert line.verdict == "implausible"  # the plan reads 6,000 GB in 64 MB GETs: 93,750 requests


def test_article_nat_is_164_tb_through_the_gateway(catalog: Catalog) -> None:
    """$7,400 / $0.045 per GB processed = 164,444 GB, about 164 TB through one NAT gateway."""
    line = next(a for a in _article(catalog).lines if a.line.category == "networking")
    assert line.implied_quantity == pytest.approx(7400 / 0.045)
    assert 164_000 < line.implied_quantity < 165_000
    assert line.verdict == "implausible"


def test_article_sync_stall_hours_at_on_demand(catalog: Catalog) -> None:
    """$61,190 / (32 × $98.32) = 19.45 cluster-hours: time is priced at on-demand for every node."""
    line = next(a for a in _article(catalog).lines if a.line.category == "sync_stall")
    assert line.unit == "cluster-hour"
    assert line.unit_price_usd == pytest.approx(OD_CLUSTER_HOUR)
    assert line.implied_quantity == pytest.approx(61190 / OD_CLUSTER_HOUR)


def test_article_spot_line_is_impossible(catalog: Catalog) -> None:
    """19% of $226,529 = $43,040.51, but the 4 cluster-hours the article lost cost at most
    4 × $3,146.24 = $12,584.96 at on-demand: 3.4× more than the stated hours can cost."""
    line = next(a for a in _article(catalog).lines if a.line.category == "spot_reclaim")
    assert line.line.amount_usd == pytest.approx(0.19 * QUOTE)
    assert line.verdict == "impossible"
    assert "$12,585" in line.arithmetic
    assert line.implied_quantity == pytest.approx(0.19 * QUOTE / OD_CLUSTER_HOUR)  # 13.68 h


def test_article_quote_is_consistent(catalog: Catalog) -> None:
    """$226,529 / $98.32 = 2,304 instance-hours = 32 nodes × 72 h: the plan's compute hours."""
    quote = _article(catalog).lines[0]
    assert quote.line.item == "the quote"
    assert quote.implied_quantity == pytest.approx(QUOTE / 98.32)
    assert quote.ratio == pytest.approx(QUOTE / 98.32 / (32 * 72))
    assert quote.verdict == "consistent"


def test_article_lines_do_not_add_up(catalog: Catalog) -> None:
    """Lines: 61,190 + 8% × 226,529 (18,122.32) + 14,632 + 19% (43,040.51) + 7,400 = 144,384.83;
    548,730 − 226,529 − 144,384.83 = 177,816.17 in no line. Percentages 27+8+6+19+3 = 63% of the
    quote against a (548,730 − 226,529) / 226,529 = 142.2% gap."""
    audit = _article(catalog)
    lines = 61190 + 0.08 * QUOTE + 14632 + 0.19 * QUOTE + 7400
    assert audit.lines_usd == pytest.approx(lines)
    assert audit.unexplained_usd == pytest.approx(TOTAL - QUOTE - lines)
    assert audit.adds_up is False
    assert audit.percent_sum == pytest.approx(63)
    assert audit.gap_percent_of_quote == pytest.approx(100 * (TOTAL - QUOTE) / QUOTE)
    assert "63% of the quote against a 142% gap" in audit.total_arithmetic
    assert [a.line.number for a in audit.impossible] == [4]


_PLAN = {
    "run": {"hours": 10},
    "model": {"params": 7e9},
    "cluster": {"instance": "p5.48xlarge", "nodes": 2},
    "prices": {"as_of": "2025-05-01"},
}


def _audit(catalog: Catalog, **doc: object) -> ClaimAudit:
    from trainbill.spec import plan_from_dict

    fc = forecast(plan_from_dict(_PLAN), catalog)
    return audit_claims(claims_from_dict(doc, source="c.toml"), fc, catalog)


def test_compute_claim_at_list_price_is_consistent(catalog: Catalog) -> None:
    """2 nodes × 10 h × $98.32 = $1,966.40: exactly the plan's 20 on-demand instance-hours."""
    a = _audit(catalog, lines=[{"category": "compute", "amount_usd": 1966.40}], total_usd=1966.40)
    assert a.lines[0].implied_quantity == pytest.approx(20.0)
    assert a.lines[0].verdict == "consistent"
    assert a.adds_up is True


def test_line_contradicting_its_own_arithmetic_is_impossible(catalog: Catalog) -> None:
    """10 instance-hours × $50 = $500, not the $800 claimed."""
    line = {
        "category": "compute",
        "amount_usd": 800,
        "quantity": 10,
        "unit": "instance-hour",
        "unit_price_usd": 50,
    }
    a = _audit(catalog, lines=[line])
    assert a.lines[0].verdict == "impossible"
    assert "= $500, not $800" in a.lines[0].arithmetic


def test_percent_disagreeing_with_amount_is_impossible(catalog: Catalog) -> None:
    """10% of a $1,000 quote is $100, not $300 (30%)."""
    a = _audit(
        catalog, quote_usd=1000, lines=[{"category": "compute", "percent": 10, "amount_usd": 300}]
    )
    assert a.lines[1].verdict == "impossible"
    assert "is $100, not $300" in a.lines[1].arithmetic


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        (
            {"lines": [{"category": "gpus", "amount_usd": 1}]},
            "c.toml: lines[1].category: unknown category 'gpus'; allowed: compute",
        ),
        (
            {
                "lines": [
                    {"category": "compute", "amount_usd": 5},
                    {"category": "storage", "amount_usd": -5},
                ]
            },
            "c.toml: lines[2].amount_usd: must be a finite number >= 0 (got -5)",
        ),
        (
            {"total_usd": "lots", "lines": [{"category": "compute", "amount_usd": 1}]},
            "c.toml: total_usd: 'lots' is not a number",
        ),
        (
            {"lines": [{"category": "compute", "percent": 5}]},
            "lines[1].percent: percent needs quote_usd",
        ),
        (
            {"lines": [{"category": "compute", "amount_usd": 1, "quantity": 3}]},
            "lines[1].unit: a quantity needs its unit",
        ),
        ({"lines": []}, "no claimed lines"),
    ],
)
def test_bad_claims_name_the_line(doc: dict[str, object], needle: str) -> None:
    """Unknown category, negative amount, non-numeric total: one error naming file, line and
    field."""
    with pytest.raises(SpecError) as err:
        claims_from_dict(doc, source="c.toml")
    assert needle in str(err.value)


def test_cli_exits_3_and_flags_the_impossible_line(capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped article ledger: exit status 3 and line 4 (spot) named impossible."""
    code, out, _ = run_cli(capsys, "check", "--claims", str(EXAMPLES / "article-claims.toml"))
    assert code == 3
    assert "IMPOSSIBLE line 4 (Spot instance reclamation)" in " ".join(out.split())
    code, out, _ = run_cli(
        capsys, "check", "--claims", str(EXAMPLES / "article-claims.toml"), "--json"
    )
    assert code == 3
    assert json.loads(out)["impossible_lines"] == [4]


def test_cli_bad_claims_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad category is a one-line error naming the file and line, exit 1, no traceback."""
    f = tmp_path / "c.toml"
    f.write_text('plan = "missing.toml"\n[[lines]]\ncategory = "gpu"\namount_usd = 3\n')
    code, _, err = run_cli(capsys, "check", "--claims", str(f))
    assert code == 1
    assert (
        err == f"trainbill: error: {f}: lines[1].category: unknown category 'gpu'; allowed: "
        f"{', '.join(CATEGORIES)}.\n"
    )


def test_cli_check_without_quote_or_claims_says_what_to_give(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`trainbill check` alone names both ways to use it."""
    code, _, err = run_cli(capsys, "check")
    assert code == 1
    assert "--claims FILE" in err


def test_a_quantity_in_another_unit_is_refused_not_skipped(catalog: Catalog) -> None:
    """Line 4 claims 4 cluster-hours of spot reclaims: in 'hour' (not the line's cluster-hour)
    it cannot be checked against $3,146.24 per cluster-hour, so it is refused naming the field
    rather than read as merely implausible."""
    import tomllib

    doc = tomllib.loads((EXAMPLES / "article-claims.toml").read_text())
    plan = load_plan(EXAMPLES / doc.pop("plan"))
    doc["lines"][3]["unit"] = "hour"
    claim = claims_from_dict(doc, source="article-claims.toml")
    with pytest.raises(SpecError, match=r"^lines\[4\]\.unit: unit 'hour' is not the unit"):
        audit_claims(claim, forecast(plan, catalog), catalog)


def test_a_percent_beyond_any_bill_is_refused() -> None:
    """1e308% of a $226,529 quote overflows to $inf: refused at the field."""
    doc = {"quote_usd": QUOTE, "lines": [{"category": "storage", "percent": 1e308}]}
    with pytest.raises(SpecError, match=r"lines\[1\]\.percent: 1e\+308% of quote_usd"):
        claims_from_dict(doc, source="c.toml")


def test_an_orchestration_claim_on_a_plan_without_one_is_refused(catalog: Catalog) -> None:
    """Was: $1,000 of "orchestration" on a raw-EC2 plan was priced as p5 instance-hours and
    called consistent. Orchestration is a service premium (EKS, HyperPod), not node-hours: a
    plan without such a line cannot price the claim, and says which lines it has."""
    with pytest.raises(SpecError, match=r"lines\[1\]\.category: the plan's forecast has no "):
        _audit(catalog, lines=[{"category": "orchestration", "amount_usd": 1000}])


def test_a_claim_in_another_unit_names_the_line_priced_in_it(catalog: Catalog) -> None:
    """A networking claim in GB is priced by the dearest networking line (NAT hours): the error
    now names the line that is priced in GB, to give as priced_as."""
    line = {"category": "networking", "amount_usd": 45, "quantity": 1000, "unit": "GB",
            "unit_price_usd": 0.045}  # fmt: skip
    with pytest.raises(SpecError, match='priced_as = "NAT gateway data processed"'):
        _audit(catalog, lines=[line])
