"""Azure prices from the public Retail Prices API (no authentication; REFERENCE §3.5).

One OData query per region, narrowed server-side to the VM sizes asked for, paged by following
``NextPageLink`` until it is null. Row semantics that trip naive parsers:

* Linux and Windows rows share ``meterName``; only ``productName`` says "Windows" -- skipped.
* Spot and Low Priority are separate meters (``... Spot`` / ``... Low Priority`` in ``meterName``
  or ``skuName``): Spot maps to option ``spot``, Low Priority (legacy batch) is skipped.
* ``type == "Reservation"`` rows carry the **total price for the term** in ``retailPrice``;
  dividing by the term's hours (8,760 per year) gives the effective hourly rate recorded as
  ``sp_1yr``/``sp_3yr`` (e.g. $1,109,592 / 26,280 h = $42.22/h for ND H200 v5, 3 years).
* ``DevTestConsumption`` rows and $0 rows are skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from trainbill.catalog import PricePoint
from trainbill.prices._errors import PriceUpdateError
from trainbill.prices._http import Http, expect
from trainbill.prices._model import Fetched

__all__ = [
    "API_VERSION",
    "HOURS_PER_YEAR",
    "RETAIL_PRICES_URL",
    "fetch",
    "parse_items",
    "retail_filter",
]

RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
#: The preview version returns savings-plan fields and makes filter values case-sensitive.
API_VERSION = "2023-01-01-preview"
#: A reservation term year is 365 x 24 hours (the divisor behind REFERENCE §4.3's $42.22/h).
HOURS_PER_YEAR = 365 * 24
_TERM_YEARS = {"1 Year": 1, "3 Years": 3}
_MAX_PAGES = 500


def retail_filter(region: str, skus: Sequence[str]) -> str:
    """OData ``$filter`` for VM rows of some sizes in one region (values are case-sensitive)."""
    for value in (region, *skus):
        if "'" in value:
            raise PriceUpdateError(f"Azure filter value {value!r} may not contain a quote")
    flt = f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}'"
    if skus:
        flt += " and (" + " or ".join(f"armSkuName eq '{s}'" for s in skus) + ")"
    return flt


def _point(item: dict[str, Any], option: str, usd: float, today: date, how: str) -> PricePoint:
    return PricePoint(
        provider="azure",
        region=str(item["armRegionName"]),
        item=str(item["armSkuName"]),
        option=option,
        unit="instance-hour",
        usd=usd,
        effective_from=today,
        source=(
            f"Azure Retail Prices API: {item.get('productName', '?')} / "
            f"{item.get('meterName', '?')} (meterId {item.get('meterId', '?')}, "
            f"effectiveStartDate {str(item.get('effectiveStartDate', '?'))[:10]}){how}; fetched "
            f"{today}"
        ),
    )


def _usd(item: dict[str, Any], i: int, where: str) -> float | None:
    """The row's USD price, or None for a row that is never priced (another currency, zero,
    Windows, Low Priority, Dev/Test); a row without the fields or with a bad price is an error."""
    for field in ("armSkuName", "armRegionName", "retailPrice", "type"):
        if field not in item:
            raise PriceUpdateError(f"{where}: Items[{i}] lacks field {field!r}")
    if item.get("currencyCode", "USD") != "USD":
        return None
    usd_raw = item["retailPrice"]
    if not isinstance(usd_raw, int | float) or isinstance(usd_raw, bool) or usd_raw < 0:
        raise PriceUpdateError(f"{where}: Items[{i}].retailPrice {usd_raw!r} is not a price")
    usd = float(usd_raw)
    product = str(item.get("productName", ""))
    meter = f"{item.get('meterName', '')} {item.get('skuName', '')}"
    if usd == 0 or "Windows" in product or "Low Priority" in meter:
        return None
    return None if item["type"] == "DevTestConsumption" else usd


def _item_point(
    item: dict[str, Any], usd: float, today: date, notes: list[str]
) -> PricePoint | None:
    """The price point of a consumption (on-demand or spot) or reservation row, else None."""
    kind = item["type"]
    if kind == "Consumption":
        if item.get("unitOfMeasure") != "1 Hour":
            notes.append(
                f"azure {item['armSkuName']}: skipped a row priced per "
                f"{item.get('unitOfMeasure')!r}"
            )
            return None
        meter = f"{item.get('meterName', '')} {item.get('skuName', '')}"
        option = "spot" if "Spot" in meter else "on_demand"
        return _point(item, option, usd, today, "")
    if kind == "Reservation":
        term = item.get("reservationTerm")
        years = _TERM_YEARS.get(str(term))
        if years is None:
            notes.append(f"azure {item['armSkuName']}: skipped reservation with term {term!r}")
            return None
        hours = years * HOURS_PER_YEAR
        return _point(
            item, f"sp_{years}yr", usd / hours, today,
            f", {years}-yr reserved instance ${usd:,.2f} per term / {hours:,} h",
        )  # fmt: skip
    return None


def parse_items(items: Sequence[Any], *, today: date, where: str) -> Fetched:
    """Map Retail Prices items to price points (see the module docstring for the rules)."""
    found: dict[tuple[str, str, str], PricePoint] = {}
    notes: list[str] = []
    for i, raw in enumerate(items):
        item = expect(raw, dict, f"{where}: Items[{i}]")
        usd = _usd(item, i, where)
        point = None if usd is None else _item_point(item, usd, today, notes)
        if point is None:
            continue
        key = (point.region, point.item, point.option)
        prev = found.get(key)
        if prev is None:
            found[key] = point
        elif prev.usd != point.usd:
            notes.append(
                f"azure {point.region} {point.item} {point.option}: several rows "
                f"(${prev.usd:g}, ${point.usd:g}); kept the first"
            )
    return Fetched(points=tuple(found.values()), notes=tuple(notes))


def fetch(http: Http, *, region: str, skus: Sequence[str], today: date) -> Fetched:
    """Query the Retail Prices API for ``skus`` in ``region``, following every page."""
    url: str | None = RETAIL_PRICES_URL
    params: dict[str, str] | None = {
        "api-version": API_VERSION,
        "$filter": retail_filter(region, skus),
    }
    result = Fetched(points=())
    items: list[Any] = []
    seen: set[str] = set()
    pages = 0
    while url:
        if url in seen or pages >= _MAX_PAGES:
            raise PriceUpdateError(f"Azure Retail Prices paging did not end (page {pages}: {url})")
        seen.add(url)
        pages += 1
        doc = expect(http.get_json(url, params), dict, f"Azure Retail Prices page {pages}")
        items.extend(expect(doc.get("Items"), list, f"Azure Retail Prices page {pages}: Items"))
        nxt = doc.get("NextPageLink")
        url = expect(nxt, str, f"Azure Retail Prices page {pages}: NextPageLink") if nxt else None
        params = None  # NextPageLink already carries the query
    result = parse_items(items, today=today, where="Azure Retail Prices")
    if not result.points:
        return Fetched(
            points=(),
            notes=(
                *result.notes,
                f"azure {region}: no Linux VM prices for {', '.join(skus) or 'any size'}",
            ),
        )
    return result
