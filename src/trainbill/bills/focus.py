"""FOCUS 1.0-1.2 column map: FOCUS columns → the reader's normalised columns.

FOCUS already speaks our vocabulary (``ChargeCategory``, ``PricingCategory``,
``ServiceCategory``), so this module only renames and cleans. What FOCUS lacks is AWS's usage
type; provider exports add it as ``x_UsageType`` (AWS ``FOCUS_1_0_AWS``), and when it is
absent the classifier falls back on ``ChargeDescription`` (e.g. "$1.624 per On Demand Linux
g5.4xlarge Instance Hour"). Column availability per version is in REFERENCE §1.2; every
column used beyond the Mandatory ones is optional here.
"""

from __future__ import annotations

import re
from typing import Any

from trainbill.bills._expr import day, lower, money, null_str, text
from trainbill.bills._files import BillFormat

__all__ = ["normalize"]

#: Instance types in descriptions/usage types: ``g5.4xlarge``, ``p5.48xlarge``, ``ml.p4d.24xlarge``.
INSTANCE_RE = r"((?:ml\.)?[a-z][a-z0-9-]*\.[0-9]*(?:xlarge|large|medium|small|micro|nano|metal)[a-z0-9-]*)"
_REGION_PREFIX = r"^[A-Z]{2,4}[0-9]?-"


def tag_from_json(tags: Any, key: str) -> Any:
    """Value of ``key`` in a JSON object held as a string (FOCUS ``Tags``, CUR CSV maps).

    A regular expression rather than a JSON function, because it compiles identically on
    DuckDB (RE2) and Spark (Java regex) and tags are flat string maps.
    """
    pattern = '"' + re.escape(key) + r'"\s*:\s*"([^"]*)"'
    return tags.re_extract(pattern, 1).nullif("")


def normalize(t: Any, fmt: BillFormat, *, tag_key: str | None = None) -> Any:
    """Map a FOCUS table onto the normalised columns the classifier reads."""
    import ibis

    usage_type = (
        text(t, fmt, "x_UsageType").re_replace(_REGION_PREFIX, "").lower()
        if fmt.has("x_UsageType")
        else null_str()
    )
    desc = lower(t, fmt, "ChargeDescription")
    sku_details = lower(t, fmt, "SkuPriceDetails")
    instance = ibis.coalesce(
        sku_details.re_extract(r'"instancetype"\s*:\s*"([^"]+)"', 1).nullif(""),
        usage_type.re_extract(r"usage[^:]*:" + INSTANCE_RE, 1).nullif(""),
        desc.re_extract(r"\b" + INSTANCE_RE + r"\s+instance hour", 1).nullif(""),
    )
    billed, bad_billed = money(t, fmt, "BilledCost")
    effective, bad_effective = money(t, fmt, "EffectiveCost")
    list_cost, bad_list = money(t, fmt, "ListCost")
    consumed, _ = money(t, fmt, "ConsumedQuantity")
    priced, _ = money(t, fmt, "PricingQuantity")
    unit = ibis.coalesce(lower(t, fmt, "ConsumedUnit"), lower(t, fmt, "PricingUnit"))
    tags = text(t, fmt, "Tags")
    tag = tag_from_json(tags, tag_key) if tag_key is not None else null_str()
    return t.select(
        currency=text(t, fmt, "BillingCurrency"),
        charge=lower(t, fmt, "ChargeCategory"),
        lit=null_str(),
        service=text(t, fmt, "ServiceName"),
        svc=lower(t, fmt, "ServiceName"),
        svc_cat=lower(t, fmt, "ServiceCategory"),
        subcat=lower(t, fmt, "ServiceSubcategory"),
        usage_type=usage_type,
        desc=desc,
        pricing=lower(t, fmt, "PricingCategory"),
        commit=text(t, fmt, "CommitmentDiscountId").notnull(),
        instance=instance,
        unit=unit,
        quantity=ibis.coalesce(consumed, priced),
        billed=billed,
        effective=effective,
        list=list_cost,
        bad_billed=bad_billed,
        bad_effective=bad_effective,
        bad_list=bad_list,
        resource=text(t, fmt, "ResourceId"),
        tag=tag,
        day=day(t, fmt, "ChargePeriodStart"),
        period_start=day(t, fmt, "BillingPeriodStart"),
        period_end=day(t, fmt, "BillingPeriodEnd"),
    )
