"""FOCUS 1.0-1.2 column map: FOCUS columns → the reader's normalised columns.

FOCUS already speaks our vocabulary (``ChargeCategory``, ``PricingCategory``,
``ServiceCategory``), so this module only renames and cleans. What FOCUS 1.0 lacks is AWS's usage
type; AWS's FOCUS 1.0 export adds it as ``x_UsageType`` (``FOCUS_1_0_AWS``), and FOCUS 1.1 and
1.2 carry it in ``SkuMeter`` (AWS's ``FOCUS_1_2_AWS`` dropped ``x_UsageType``: "This is now the
SkuMeter column", AWS Data Exports user guide, "Migrating from FOCUS 1.0 to FOCUS 1.2"). The
usage type is ``x_UsageType``, else ``SkuMeter``; with neither the classifier falls back on
``ChargeDescription`` (e.g. "$1.624 per On Demand Linux
g5.4xlarge Instance Hour"). Column availability per version is in REFERENCE §1.2; every
column used beyond the Mandatory ones is optional here.
"""

from __future__ import annotations

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
    tag,
    text,
)
from trainbill.bills._files import BillFormat

__all__ = ["DIMENSIONS", "MONEY", "MONEY_COLUMNS", "normalize", "row_values", "rows_where"]

#: Instance types in descriptions/usage types: ``g5.4xlarge``, ``p5.48xlarge``, ``ml.p4d.24xlarge``.
INSTANCE_RE = (
    r"((?:ml\.)?[a-z][a-z0-9-]*\.[0-9]*(?:xlarge|large|medium|small|micro|nano|metal)[a-z0-9-]*)"
)
_REGION_PREFIX = r"^[A-Z]{2,4}[0-9]?-"
#: SageMaker instance types (``ml.p5.48xlarge``) in usage types and descriptions.
_ML_INSTANCE_RE = r"(ml\.[a-z0-9-]+\.[0-9]*[a-z0-9]+)"
#: Azure's VM size in ``x_SkuDetails``, the JSON Cost Management calls AdditionalInfo
#: (``{"ServiceType": "Standard_ND96isr_H100_v5", "VCPUs": 96, ...}``; Microsoft, "FOCUS cost
#: and usage details file schema" and "Learning FOCUS: SKUs", 2025).
_AZURE_SIZE_RE = r'"servicetype"\s*:\s*"(standard_[a-z0-9_]+)"'
#: Azure's VM meter name (``x_SkuMeterName``: "ND96isr H100 v5", "NC24ads A100 v4 Spot",
#: "... Low Priority") for the N-series (GPU) sizes, without the purchase-option suffix: the
#: VM size when ``x_SkuDetails`` is empty (spot rows often carry none). Spaces become
#: underscores after a ``standard_`` prefix, which gives the ARM name for most sizes
#: (``Standard_ND96isr_H100_v5``) and a recognisable N-series name for the rest
#: (the meter "ND96asr A100 v4" is the size ``Standard_ND96asr_v4``).
_AZURE_METER_RE = r"^(n[cdv][0-9]+[a-z0-9-]*(?: [a-z0-9]+)*?)(?: spot| low priority)?$"
#: Azure's ChargeDescription of a VM meter: "{category} {subcategory} - {meter} - {region}"
#: ("Virtual Machines Dv2/DSv2 Series - D11 v2/DS11 v2 - US East 2", a row of the FOCUS 1.0
#: sample data billed under Azure Machine Learning); the meter's first name, before any "/",
#: is read as ``x_SkuMeterName`` is, for exports without the x_ columns.
_AZURE_DESC_METER_RE = r"^virtual machines [^-]* - ([^/]+?)(?:/[^-]*)? - [^-]+$"


#: Raw columns the rows are grouped by before classification (all optional except Mandatory).
DIMENSIONS: tuple[str, ...] = (
    "BillingCurrency",
    "BillingAccountId",
    "ChargeCategory",
    "ServiceName",
    "ServiceCategory",
    "ServiceSubcategory",
    "x_UsageType",
    "SkuMeter",
    "ChargeDescription",
    "PricingCategory",
    "CommitmentDiscountId",
    "SkuPriceDetails",
    "x_SkuDetails",
    "x_SkuMeterName",
    "ConsumedUnit",
    "PricingUnit",
    "BillingPeriodStart",
    "BillingPeriodEnd",
    "ProviderName",
    "ServiceProviderName",
)


#: ``row_values`` entries that are money, and the column each is read from: each is converted
#: once per row and summed exactly per group (``_expr.money_total``).
MONEY_COLUMNS: dict[str, str] = {
    "billed": "BilledCost",
    "effective": "EffectiveCost",
    "list": "ListCost",
}
MONEY: tuple[str, ...] = tuple(MONEY_COLUMNS)


def row_values(
    t: Any, fmt: BillFormat, *, key: str | None, tag_key: str | None, once: Once = as_is
) -> dict[str, Any]:
    """Per-row money (``_expr.money`` values + "not a number" flags) and the optional breakdown
    key; ``once`` marks what several of them reuse (``_expr.Once``)."""
    billed, bad_billed = money(t, fmt, MONEY_COLUMNS["billed"], once)
    effective, bad_effective = money(t, fmt, MONEY_COLUMNS["effective"], once)
    list_cost, bad_list = money(t, fmt, MONEY_COLUMNS["list"], once)
    consumed, bad_consumed = quantity(t, fmt, "ConsumedQuantity", once)
    priced, bad_priced = quantity(t, fmt, "PricingQuantity", once)
    import ibis

    keys = {
        None: null_str(),
        "resource": text(t, fmt, "ResourceId"),
        "service": text(t, fmt, "ServiceName"),
        "day": day(t, fmt, "ChargePeriodStart"),
        "tag": tag(t, fmt, "Tags", tag_key) if tag_key else null_str(),
    }
    return {
        "billed": billed,
        "effective": effective,
        "list": list_cost,
        # Hours in the unit the row is consumed in; PricingQuantity when that is empty.
        "quantity": ibis.coalesce(consumed, priced),
        "bad_billed": bad_billed,
        "bad_effective": bad_effective,
        "bad_list": bad_list,
        "bad_quantity": bad_consumed + bad_priced,
        # Mandatory costs left empty count as 0 in the totals; how many rows is reported.
        "no_cost": ibis.cases(
            (billed.isnull() | effective.isnull() | list_cost.isnull(), 1), else_=0
        ).cast("int64"),
        "key": keys[key],
    }


def rows_where(t: Any, fmt: BillFormat, where: Any) -> Any:
    """The predicate of a ``filters.BillFilter``: FOCUS ``Tags`` (JSON text or a map) and the
    day of ``ChargePeriodStart``."""
    return row_filter(
        t, fmt, where, tag_of=lambda key: tag(t, fmt, "Tags", key), day_column="ChargePeriodStart"
    )


def _usage_type(g: Any, fmt: BillFormat) -> Any:
    """The usage type without its region prefix, lower-cased: ``x_UsageType`` (AWS FOCUS 1.0),
    else ``SkuMeter`` (FOCUS 1.1+, where AWS's 1.2 export puts it); a null with neither."""
    import ibis

    present = [text(g, fmt, c) for c in ("x_UsageType", "SkuMeter") if fmt.has(c)]
    if not present:
        return null_str()
    raw = present[0] if len(present) == 1 else ibis.coalesce(*present)
    return raw.re_replace(_REGION_PREFIX, "").lower()


def _azure_size(g: Any, fmt: BillFormat) -> Any:
    """The Azure VM size of a row, lower-cased (``standard_nd96isr_h100_v5``): from
    ``x_SkuDetails``, else from an N-series meter name (``x_SkuMeterName``, else the meter in
    ``ChargeDescription``); a null without either. Without
    it an Azure GPU VM's hours were compute but not GPU instance-hours, and a bill of Azure GPU
    VMs could not calibrate a forecast."""
    import ibis

    details = lower(g, fmt, "x_SkuDetails").re_extract(_AZURE_SIZE_RE, 1).nullif("")
    described = lower(g, fmt, "ChargeDescription").re_extract(_AZURE_DESC_METER_RE, 1)
    meter = ibis.coalesce(lower(g, fmt, "x_SkuMeterName"), described.nullif(""))
    n_series = meter.re_extract(_AZURE_METER_RE, 1).nullif("")
    from_meter = ibis.literal("standard_") + n_series.re_replace(r"\s+", "_")
    return ibis.coalesce(details, from_meter)


def normalize(g: Any, fmt: BillFormat) -> Any:
    """Map grouped FOCUS dimensions onto the normalised columns the classifier reads.

    ``g`` holds the raw ``DIMENSIONS`` plus the summed ``row_values``; cleaning and pattern
    extraction run here, once per distinct combination rather than once per row.
    """
    import ibis

    usage_type = _usage_type(g, fmt)
    desc = lower(g, fmt, "ChargeDescription")
    sku_details = lower(g, fmt, "SkuPriceDetails")
    instance = ibis.coalesce(
        sku_details.re_extract(r'"instancetype"\s*:\s*"([^"]+)"', 1).nullif(""),
        usage_type.re_extract(r"usage[^:]*:" + INSTANCE_RE, 1).nullif(""),
        desc.re_extract(r"\b" + INSTANCE_RE + r"\s+instance hour", 1).nullif(""),
        # SageMaker usage types carry the ``ml.`` instance after another verb (``Train:``,
        # ``Host:``, ``Notebk:``), as CUR's do: without it, ``ml.p5.48xlarge`` training
        # hours had no instance type and landed in orchestration instead of GPU compute.
        usage_type.re_extract(_ML_INSTANCE_RE, 1).nullif(""),
        desc.re_extract(r"\b" + _ML_INSTANCE_RE, 1).nullif(""),
        _azure_size(g, fmt),
    )
    unit = ibis.coalesce(lower(g, fmt, "ConsumedUnit"), lower(g, fmt, "PricingUnit"))
    return g.select(
        currency=text(g, fmt, "BillingCurrency"),
        payer=text(g, fmt, "BillingAccountId"),
        # FOCUS 1.2 deprecates ProviderName for ServiceProviderName.
        provider=ibis.coalesce(text(g, fmt, "ServiceProviderName"), text(g, fmt, "ProviderName")),
        charge=lower(g, fmt, "ChargeCategory"),
        lit=null_str(),
        service=text(g, fmt, "ServiceName"),
        svc=lower(g, fmt, "ServiceName"),
        svc_cat=lower(g, fmt, "ServiceCategory"),
        subcat=lower(g, fmt, "ServiceSubcategory"),
        usage_type=usage_type,
        desc=desc,
        pricing=lower(g, fmt, "PricingCategory"),
        commit=text(g, fmt, "CommitmentDiscountId").notnull(),
        commit_id=text(g, fmt, "CommitmentDiscountId"),
        instance=instance,
        unit=unit,
        period_start=day(g, fmt, "BillingPeriodStart"),
        period_end=day(g, fmt, "BillingPeriodEnd"),
        key=g.key,
        rows=g.rows,
        quantity=g.quantity,
        billed=pico_total(g.billed),
        effective=pico_total(g.effective),
        list=pico_total(g.list),
        bad_billed=g.bad_billed,
        bad_effective=g.bad_effective,
        bad_list=g.bad_list,
        bad_quantity=g.bad_quantity,
        no_cost=g.no_cost,
    )
