"""AWS CUR 2.0 (Data Exports ``COST_AND_USAGE_REPORT``) → the reader's normalised columns.

Legacy CUR CSV (``lineItem/UnblendedCost``) is read by the same code: its columns are looked up
under the names AWS gives them in CUR 2.0 (``_files.canonical_column``), which are the same
columns; only tags differ (one ``resourceTags/user:KEY`` column per key, not a map).

CUR has no FOCUS categories, so they are derived here from ``line_item_line_item_type`` and
the usage type (REFERENCE §2.2-2.3):

* ChargeCategory: ``Tax``→tax, ``Credit``→credit, ``Refund``→adjustment (it keeps the category
  of what it refunds, as in FOCUS), SP/RI fees→purchase, everything else→usage.
* PricingCategory: ``SpotUsage:`` usage types, ``pricing_term=Spot`` or a Spot purchase option →
  dynamic; ``SavingsPlanCoveredUsage``, ``SavingsPlanNegation``, ``DiscountedUsage`` and the
  SP/RI fee rows → committed; else standard.
* BilledCost is ``line_item_net_unblended_cost`` where the row has one, else
  ``line_item_unblended_cost`` (the FOCUS converter's rule, REFERENCE §1.6): summed over every
  line item type (including ``Tax``, ``Credit`` and the ``SavingsPlanNegation`` that cancels
  covered usage) it is the invoice (REFERENCE §6.2). The net column exists only in an account
  with discounts (EDP, private pricing), and CUR 2.0 puts those discounts in it (and in
  ``discount_*``) rather than in discount rows unless "manual discount compatibility" is on:
  summing the unblended cost alone overstated such a bill by the whole discount.
* EffectiveCost follows the FinOps converter rules (REFERENCE §1.6): SP-covered usage →
  ``savings_plan_savings_plan_effective_cost``; SP recurring fee → unused commitment
  (``total_commitment_to_date − used_commitment``); negation and upfront fee → 0; RI usage →
  ``reservation_effective_cost``; RIFee → its unused amortised upfront + unused recurring fee;
  other rows → the billed cost. A missing input column falls back to the billed cost.
* ListCost is ``pricing_public_on_demand_cost``, or the billed cost where it is empty.

Usage types carry a region prefix outside us-east-1 (``USE2-``, ``EUN1-``; public IPv4 uses
``USE1-`` too), stripped with ``^[A-Z]{2,4}[0-9]?-`` before matching.
"""

from __future__ import annotations

import re
from typing import Any

from trainbill.bills._expr import (
    Once,
    as_is,
    day,
    lower,
    money,
    null_str,
    pico_total,
    quantity,
    row_filter,
    same_kind,
    tag,
    text,
)
from trainbill.bills._files import BillFormat
from trainbill.bills.focus import INSTANCE_RE

__all__ = [
    "COMMITTED_TYPES",
    "DIMENSIONS",
    "FEE_TYPES",
    "MONEY",
    "MONEY_COLUMNS",
    "normalize",
    "row_values",
    "rows_where",
]

_REGION_PREFIX = r"^[A-Z]{2,4}[0-9]?-"
#: Line item types that are commitment purchases (the money a Savings Plan/RI costs).
FEE_TYPES = ("savingsplanrecurringfee", "savingsplanupfrontfee", "rifee")
#: Line item types whose usage is priced by a commitment.
COMMITTED_TYPES = ("savingsplancoveredusage", "savingsplannegation", "discountedusage", *FEE_TYPES)


#: Raw columns the rows are grouped by before classification.
DIMENSIONS: tuple[str, ...] = (
    "line_item_currency_code",
    "bill_payer_account_id",
    "line_item_line_item_type",
    "line_item_product_code",
    "line_item_usage_type",
    "line_item_line_item_description",
    "pricing_term",
    "pricing_purchase_option",
    "pricing_unit",
    "product_instance_type",
    "savings_plan_savings_plan_a_r_n",
    "reservation_reservation_a_r_n",
    "bill_billing_period_start_date",
    "bill_billing_period_end_date",
)


#: ``row_values`` entries that are money, and the column each is read from: each is converted
#: once per row and summed exactly per group (``_expr.money_total``); ``normalize`` combines
#: the sums.
MONEY_COLUMNS: dict[str, str] = {
    "unblended": "line_item_unblended_cost",
    "sp_effective": "savings_plan_savings_plan_effective_cost",
    "sp_total": "savings_plan_total_commitment_to_date",
    "sp_used": "savings_plan_used_commitment",
    "ri_effective": "reservation_effective_cost",
    "ri_unused_upfront": "reservation_unused_amortized_upfront_fee_for_billing_period",
    "ri_unused_recurring": "reservation_unused_recurring_fee",
    "public": "pricing_public_on_demand_cost",
    "net_unblended": "line_item_net_unblended_cost",
}
MONEY: tuple[str, ...] = tuple(MONEY_COLUMNS)


def row_values(
    t: Any, fmt: BillFormat, *, key: str | None, tag_key: str | None, once: Once = as_is
) -> dict[str, Any]:
    """Per-row money columns (``MONEY``), "not a number" flags, null flags and the key.

    The effective and list cost of a row combine several money columns, chosen by the line
    item type (see ``normalize``). They are not computed here: every input of that choice
    (line item type, reservation ARN) is a grouping column, and so is each ``null_*`` flag
    (whether a combined column is null in the row; ``Engine.groups`` groups by every entry
    named so), so within a group every row takes the same branch of the same ``coalesce``; the
    combination of the group's sums is the sum of the rows' combinations, exactly. Per row,
    each column is then converted once and summed once, instead of cleaning the line item type
    and converting up to five columns per row again for the effective cost (this made a CUR
    2.0 export ~5x a bare scan). Seven boolean keys cost DuckDB less than one integer
    packing them (2M rows: 0.43 vs 0.68 billion instructions).
    """
    import ibis

    converted = {name: money(t, fmt, column, once) for name, column in MONEY_COLUMNS.items()}
    # One row's effective and list cost combine several columns: they must be of one kind
    # (all exact decimals, or all per-row nano-units; see ``_expr.money``).
    values = dict(zip(MONEY, same_kind([converted[n][0] for n in MONEY]), strict=True))
    # The unblended cost is only ever the fallback: its nulls split nothing.
    nulls = {
        f"null_{name}": values[name].isnull() for name in MONEY[1:] if fmt.has(MONEY_COLUMNS[name])
    }
    usage, bad_usage = quantity(t, fmt, "line_item_usage_amount", once)
    tag_value = tag_of(t, fmt, tag_key) if key == "tag" and tag_key is not None else null_str()
    keys = {
        None: null_str(),
        "resource": text(t, fmt, "line_item_resource_id"),
        "service": text(t, fmt, "line_item_product_code"),
        "day": day(t, fmt, "line_item_usage_start_date"),
        "tag": tag_value,
    }
    return {
        **values,
        **nulls,
        "quantity": usage,
        "bad_billed": converted["unblended"][1] + converted["net_unblended"][1],
        "bad_effective": converted["sp_effective"][1] + converted["ri_effective"][1],
        "bad_list": converted["public"][1],
        "bad_quantity": bad_usage,
        # An empty unblended cost counts as 0 in the totals; how many rows is reported.
        "no_cost": ibis.cases((values["unblended"].isnull(), 1), else_=0).cast("int64"),
        "key": keys[key],
    }


def tag_of(t: Any, fmt: BillFormat, tag_key: str) -> Any:
    """A row's value of one user tag: legacy CUR's ``resourceTags/user:KEY`` column, else CUR
    2.0's ``resource_tags`` map, keyed ``user_KEY`` in Parquet/Athena (with AWS's spelling of
    a key whose characters a column name cannot hold, ``-`` and ``:`` as ``_``), ``KEY`` in
    some CSVs. One reader for ``--by tag:KEY`` and ``--where tag:KEY=VALUE``."""
    legacy = next(
        (c for c in (f"resourceTags/user:{tag_key}", f"resourceTags/{tag_key}") if fmt.has(c)),
        None,
    )
    if legacy is not None:  # legacy CUR: one column per tag key
        return text(t, fmt, legacy)
    safe = re.sub(r"[^A-Za-z0-9_]", "_", tag_key)
    keys = dict.fromkeys((tag_key, "user_" + tag_key, "user_" + safe))
    return tag(t, fmt, "resource_tags", *keys)


def rows_where(t: Any, fmt: BillFormat, where: Any) -> Any:
    """The predicate of a ``filters.BillFilter``: user tags (``tag_of``) and the day of
    ``line_item_usage_start_date``."""
    return row_filter(
        t,
        fmt,
        where,
        tag_of=lambda key: tag_of(t, fmt, key),
        day_column="line_item_usage_start_date",
    )


def _billed(g: Any) -> Any:
    """A group's billed cost: the net unblended cost where its rows have one (whether a row's
    net cost is null is a grouping key, ``null_net_unblended``), else the unblended cost."""
    import ibis

    return ibis.coalesce(g.net_unblended, g.unblended)


def _effective(g: Any, lit: Any, ri_arn: Any) -> Any:
    """A group's exact effective cost from its money sums, by line item type (module docstring)."""
    import ibis

    billed = _billed(g)
    zero = ibis.literal(0).cast(billed.type())
    return ibis.cases(
        (lit == "savingsplancoveredusage", ibis.coalesce(g.sp_effective, billed)),
        (lit == "savingsplanrecurringfee", ibis.coalesce(g.sp_total - g.sp_used, billed)),
        (lit.isin(["savingsplannegation", "savingsplanupfrontfee"]), zero),
        (lit == "discountedusage", ibis.coalesce(g.ri_effective, billed)),
        # Unused amortised upfront + unused recurring fee; one of them alone when the other is
        # empty, and the unblended cost only when both are missing (``coalesce(x, 0)`` on each
        # made a file without these columns report an RIFee's effective cost as 0).
        (
            lit == "rifee",
            ibis.coalesce(
                g.ri_unused_upfront + g.ri_unused_recurring,
                g.ri_unused_upfront,
                g.ri_unused_recurring,
                billed,
            ),
        ),
        ((lit == "fee") & ri_arn.notnull(), zero),
        else_=billed,
    )


def normalize(g: Any, fmt: BillFormat) -> Any:
    """Map grouped CUR 2.0 dimensions onto the normalised columns the classifier reads."""
    import ibis

    lit = lower(g, fmt, "line_item_line_item_type")
    usage_type = text(g, fmt, "line_item_usage_type").re_replace(_REGION_PREFIX, "").lower()
    term = lower(g, fmt, "pricing_term")
    purchase = lower(g, fmt, "pricing_purchase_option")
    sp_arn = text(g, fmt, "savings_plan_savings_plan_a_r_n")
    ri_arn = text(g, fmt, "reservation_reservation_a_r_n")
    charge = ibis.cases(
        (lit == "tax", "tax"),
        (lit == "credit", "credit"),
        (lit == "refund", "adjustment"),
        (lit.isin(list(FEE_TYPES)), "purchase"),
        (lit == "fee", "purchase"),
        else_="usage",
    )
    pricing = ibis.cases(
        (usage_type.startswith("spotusage"), "dynamic"),
        (term == "spot", "dynamic"),
        (purchase.contains("spot"), "dynamic"),
        (lit.isin(list(COMMITTED_TYPES)), "committed"),
        else_="standard",
    )
    commit = lit.isin(list(COMMITTED_TYPES)) | sp_arn.notnull() | ri_arn.notnull()
    instance = ibis.coalesce(
        lower(g, fmt, "product_instance_type"),
        usage_type.re_extract(r"^[a-z]*usage[^:]*:" + INSTANCE_RE, 1).nullif(""),
        usage_type.re_extract(r"(ml\.[a-z0-9-]+\.[0-9]*[a-z0-9]+)", 1).nullif(""),
    )
    return g.select(
        currency=text(g, fmt, "line_item_currency_code"),
        payer=text(g, fmt, "bill_payer_account_id"),
        provider=ibis.literal("AWS"),
        charge=charge,
        lit=lit,
        service=text(g, fmt, "line_item_product_code"),
        svc=lower(g, fmt, "line_item_product_code"),
        svc_cat=null_str(),
        subcat=null_str(),
        usage_type=usage_type,
        desc=lower(g, fmt, "line_item_line_item_description"),
        pricing=pricing,
        commit=commit,
        commit_id=ibis.coalesce(sp_arn, ri_arn),
        instance=instance,
        unit=lower(g, fmt, "pricing_unit"),
        period_start=day(g, fmt, "bill_billing_period_start_date"),
        period_end=day(g, fmt, "bill_billing_period_end_date"),
        key=g.key,
        rows=g.rows,
        quantity=g.quantity,
        billed=pico_total(_billed(g), like=g.unblended),
        effective=pico_total(_effective(g, lit, ri_arn), like=g.unblended),
        list=pico_total(ibis.coalesce(g.public, _billed(g)), like=g.unblended),
        bad_billed=g.bad_billed,
        bad_effective=g.bad_effective,
        bad_list=g.bad_list,
        bad_quantity=g.bad_quantity,
        no_cost=g.no_cost,
    )
