"""AWS prices: public Price List bulk files (no credentials) and, with credentials, boto3.

Bulk path (REFERENCE §3.1/§3.3): offer index -> EC2 region index -> the region's offer CSV,
streamed line by line (us-east-1 is ~300 MB; it is never held in memory), filtered to
accelerator instances with the filters that yield the standard Linux on-demand hourly price:
TermType=OnDemand, Operating System=Linux, Pre Installed S/W=NA, CapacityStatus=Used,
Tenancy=Shared, MarketOption=OnDemand, License Model=No License required. The last two matter:
the file also carries $0 ``MarketOption=CapacityBlock`` rows for the same SKUs. Savings Plans
rates come from the Savings Plans offer CSV, joined on ``BoxUsage:<instance>`` + ``RunInstances``.

API path (credentials present): the Price List Query API (``pricing.get_products``) for on-demand
rates -- a few small pages instead of the 300 MB file -- and ``ec2.describe_spot_price_history``
for spot: the median of every price record of the last 30 days across availability zones.
"""

from __future__ import annotations

import csv
import json
import math
import re
import statistics
from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from trainbill.catalog import PricePoint
from trainbill.prices._errors import PriceUpdateError
from trainbill.prices._http import Http, expect
from trainbill.prices._model import ACCELERATOR_FAMILY, Fetched

__all__ = [
    "OFFER_INDEX_URL",
    "PRICING_HOST",
    "SP_PAYMENT_OPTIONS",
    "api_on_demand",
    "api_spot_medians",
    "bulk_on_demand",
    "bulk_savings_plans",
    "has_credentials",
    "parse_ec2_offer_csv",
    "parse_savings_plans_csv",
]

PRICING_HOST = "https://pricing.us-east-1.amazonaws.com"
OFFER_INDEX_URL = f"{PRICING_HOST}/offers/v1.0/aws/index.json"
_SP_REGION_INDEX = "/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json"
SP_PAYMENT_OPTIONS = ("No Upfront", "Partial Upfront", "All Upfront")
_SPOT_WINDOW = timedelta(days=30)
#: (column, required value); a missing optional column (older files) does not filter.
_OD_FILTERS: tuple[tuple[str, str, bool], ...] = (
    ("TermType", "OnDemand", True),
    ("Operating System", "Linux", True),
    ("Pre Installed S/W", "NA", True),
    ("CapacityStatus", "Used", True),
    ("Tenancy", "Shared", True),
    ("MarketOption", "OnDemand", False),
    ("License Model", "No License required", False),
)
_BOX_USAGE = re.compile(r"^(?:[A-Z0-9]+-)?BoxUsage:(?P<instance>.+)$")


def _csv_rows(
    lines: Iterable[str], where: str
) -> tuple[dict[str, str], list[str], Iterator[list[str]]]:
    """Split a Price List CSV into its metadata lines, header and a lazy row iterator.

    The files start with a few ``"Key","Value"`` metadata lines (format version, disclaimer,
    publication date, version, offer code) before the header, whose first column is ``SKU``.
    """
    reader = csv.reader(iter(lines))
    meta: dict[str, str] = {}
    for row in reader:
        if row and row[0] == "SKU":
            return meta, row, reader
        if len(row) >= 2:
            meta[row[0]] = row[1]
        if len(meta) > 50:
            break
    raise PriceUpdateError(
        f"{where}: no header line starting with 'SKU' found; is this a Price List CSV?"
    )


def _columns(header: Sequence[str], wanted: Iterable[str], where: str) -> dict[str, int]:
    norm = {re.sub(r"[\s_]", "", h).lower(): i for i, h in enumerate(header)}
    out: dict[str, int] = {}
    missing = []
    for name in wanted:
        idx = norm.get(re.sub(r"[\s_]", "", name).lower())
        if idx is None:
            missing.append(name)
        else:
            out[name] = idx
    if missing:
        raise PriceUpdateError(f"{where}: header lacks column(s) {', '.join(missing)}")
    return out


def _optional_columns(header: Sequence[str], names: Iterable[str]) -> dict[str, int]:
    norm = {re.sub(r"[\s_]", "", h).lower(): i for i, h in enumerate(header)}
    return {n: norm[k] for n in names if (k := re.sub(r"[\s_]", "", n).lower()) in norm}


def _price(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PriceUpdateError(f"{where}: price {text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise PriceUpdateError(f"{where}: price {text!r} is not a non-negative number")
    return value


def parse_ec2_offer_csv(lines: Iterable[str], *, region: str, today: date, url: str) -> Fetched:
    """Linux on-demand hourly prices of accelerator instances from an EC2 offer CSV.

    Rows are checked one at a time as they stream past; only matches are kept. A row with the
    wrong number of fields (e.g. the last line of a cut-off download) is an error, not a skip.
    """
    meta, header, rows = _csv_rows(lines, url)
    cols = _columns(
        header,
        ["Instance Type", "PricePerUnit", "Unit", *(c for c, _v, req in _OD_FILTERS if req)],
        url,
    )
    cols |= _optional_columns(
        header,
        [c for c, _v, req in _OD_FILTERS if not req]
        + ["GPU", "Currency", "RateCode", "EffectiveDate"],
    )
    filters = [(cols[c], v) for c, v, _req in _OD_FILTERS if c in cols]
    version = meta.get("Version", "unknown")
    published = meta.get("Publication Date", "unknown")
    found: dict[str, PricePoint] = {}
    notes: list[str] = []
    for line_no, row in enumerate(rows, start=len(meta) + 2):
        if len(row) != len(header):
            raise PriceUpdateError(
                f"{url}, line {line_no}: {len(row)} fields, header has {len(header)} "
                "(truncated or corrupt file). The price cache was not changed."
            )
        if any(row[i] != v for i, v in filters):
            continue
        instance = row[cols["Instance Type"]]
        gpu = row[cols["GPU"]] if "GPU" in cols else ""
        has_gpu = gpu.strip() not in {"", "0", "NA"}
        if not (has_gpu or ACCELERATOR_FAMILY.match(instance)):
            continue
        if row[cols["Unit"]] != "Hrs" or ("Currency" in cols and row[cols["Currency"]] != "USD"):
            continue
        usd = _price(row[cols["PricePerUnit"]], f"{url}, line {line_no}, PricePerUnit")
        if usd == 0:
            notes.append(f"aws {region} {instance}: skipped a $0 on-demand row")
            continue
        if instance in found:
            if found[instance].usd != usd:
                notes.append(
                    f"aws {region} {instance}: two on-demand rows (${found[instance].usd} and "
                    f"${usd}); kept the first"
                )
            continue
        rate = row[cols["RateCode"]] if "RateCode" in cols else "?"
        effective = row[cols["EffectiveDate"]] if "EffectiveDate" in cols else "?"
        found[instance] = PricePoint(
            provider="aws",
            region=region,
            item=instance,
            option="on_demand",
            unit="instance-hour",
            usd=usd,
            effective_from=today,
            source=(
                f"AWS Price List bulk AmazonEC2 {region} version {version} (published "
                f"{published}), rate code {rate}, EffectiveDate {effective}; fetched {today}"
            ),
        )
    return Fetched(points=tuple(found.values()), notes=tuple(notes))


def parse_savings_plans_csv(
    lines: Iterable[str], *, region: str, today: date, url: str, payment: str = "All Upfront"
) -> Fetched:
    """EC2 Instance Savings Plans hourly rates (Linux, shared tenancy) per accelerator instance.

    ``payment`` picks one purchase option; All Upfront is the effective hourly rate when the
    upfront payment is spread over the term (the basis of the packaged p5en point).
    """
    meta, header, rows = _csv_rows(lines, url)
    names = ["DiscountedRate", "DiscountedUsageType", "DiscountedOperation", "PurchaseOption",
             "LeaseContractLength", "Product Family", "Unit"]  # fmt: skip
    cols = _columns(header, names, url)
    cols |= _optional_columns(
        header, ["LeaseContractLengthUnit", "Currency", "DiscountedRegionCode", "RateCode"]
    )
    version = meta.get("Version", "unknown")
    found: dict[tuple[str, str], PricePoint] = {}
    for line_no, row in enumerate(rows, start=len(meta) + 2):
        if len(row) != len(header):
            raise PriceUpdateError(
                f"{url}, line {line_no}: {len(row)} fields, header has {len(header)} "
                "(truncated or corrupt file). The price cache was not changed."
            )
        if re.sub(r"\s", "", row[cols["Product Family"]]).lower() != "ec2instancesavingsplans":
            continue
        if (
            row[cols["PurchaseOption"]] != payment
            or row[cols["DiscountedOperation"]] != "RunInstances"
        ):
            continue
        if "DiscountedRegionCode" in cols and row[cols["DiscountedRegionCode"]] not in {"", region}:
            continue
        m = _BOX_USAGE.match(row[cols["DiscountedUsageType"]])
        if m is None or not ACCELERATOR_FAMILY.match(m["instance"]) or row[cols["Unit"]] != "Hrs":
            continue
        unit = (
            row[cols["LeaseContractLengthUnit"]].lower()
            if "LeaseContractLengthUnit" in cols
            else "year"
        )
        length = row[cols["LeaseContractLength"]].strip().lower().removesuffix("yr").strip()
        if unit not in {"year", "years"} or length not in {"1", "3"}:
            continue
        option = f"sp_{length}yr"
        instance = m["instance"]
        usd = _price(row[cols["DiscountedRate"]], f"{url}, line {line_no}, DiscountedRate")
        found.setdefault(
            (instance, option),
            PricePoint(
                provider="aws",
                region=region,
                item=instance,
                option=option,
                unit="instance-hour",
                usd=usd,
                effective_from=today,
                source=(
                    f"AWS Savings Plans price list {region} version {version}: {length}-yr EC2 "
                    f"Instance Savings Plan, {payment}, effective hourly rate; fetched {today}"
                ),
            ),
        )
    return Fetched(points=tuple(found.values()))


def _url(path_or_url: str) -> str:
    return path_or_url if path_or_url.startswith("http") else PRICING_HOST + path_or_url


def _csv_url(json_url: str) -> str:
    return _url(json_url).removesuffix(".json") + ".csv"


def bulk_on_demand(http: Http, *, region: str, today: date) -> Fetched:
    """Offer index -> EC2 region index -> stream the region's offer CSV."""
    index = expect(http.get_json(OFFER_INDEX_URL), dict, OFFER_INDEX_URL)
    offers = expect(index.get("offers"), dict, f"{OFFER_INDEX_URL}: offers")
    ec2 = expect(offers.get("AmazonEC2"), dict, f"{OFFER_INDEX_URL}: offers.AmazonEC2")
    region_index_url = _url(
        expect(
            ec2.get("currentRegionIndexUrl"),
            str,
            f"{OFFER_INDEX_URL}: AmazonEC2.currentRegionIndexUrl",
        )
    )
    rindex = expect(http.get_json(region_index_url), dict, region_index_url)
    regions = expect(rindex.get("regions"), dict, f"{region_index_url}: regions")
    if region not in regions:
        raise PriceUpdateError(
            f"AWS price list has no EC2 offer for region {region!r}; known regions: "
            f"{', '.join(sorted(regions)[:40])}"
        )
    entry = expect(regions[region], dict, f"{region_index_url}: regions.{region}")
    csv_url = _csv_url(
        expect(
            entry.get("currentVersionUrl"), str, f"{region_index_url}: {region}.currentVersionUrl"
        )
    )
    return parse_ec2_offer_csv(http.stream_lines(csv_url), region=region, today=today, url=csv_url)


def bulk_savings_plans(
    http: Http, *, region: str, today: date, payment: str = "All Upfront"
) -> Fetched:
    """Savings Plans region index -> stream the region's Savings Plans CSV."""
    index_url = _url(_SP_REGION_INDEX)
    rindex = expect(http.get_json(index_url), dict, index_url)
    regions = expect(rindex.get("regions"), list, f"{index_url}: regions")
    for raw in regions:
        entry = expect(raw, dict, f"{index_url}: regions[]")
        if entry.get("regionCode") == region:
            csv_url = _csv_url(
                expect(entry.get("versionUrl"), str, f"{index_url}: {region}.versionUrl")
            )
            return parse_savings_plans_csv(
                http.stream_lines(csv_url), region=region, today=today, url=csv_url, payment=payment
            )
    return Fetched(points=(), notes=(f"aws {region}: no Savings Plans price file for this region",))


# --- boto3 (credentials) ---------------------------------------------------------------------
def has_credentials(session: Any = None) -> bool:
    """True when boto3 is installed and finds AWS credentials (env, profile, SSO, role)."""
    try:
        import boto3
    except ImportError:
        return False
    sess = session if session is not None else boto3.Session()
    return sess.get_credentials() is not None


def api_on_demand(pricing: Any, *, region: str, today: date) -> Fetched:
    """On-demand Linux rates of GPU and ML-ASIC instances via the Price List Query API.

    ``pricing`` is a boto3 ``pricing`` client (any of its endpoints prices every region).
    """
    found: dict[str, PricePoint] = {}
    for family in ("GPU instance", "Machine Learning ASIC Instances"):
        filters = [
            {"Type": "TERM_MATCH", "Field": field, "Value": value}
            for field, value in (
                ("regionCode", region), ("instanceFamily", family), ("operatingSystem", "Linux"),
                ("tenancy", "Shared"), ("preInstalledSw", "NA"), ("capacitystatus", "Used"),
                ("marketoption", "OnDemand"), ("licenseModel", "No License required"),
            )
        ]  # fmt: skip
        kwargs: dict[str, Any] = {
            "ServiceCode": "AmazonEC2",
            "Filters": filters,
            "FormatVersion": "aws_v1",
            "MaxResults": 100,
        }
        while True:
            page = pricing.get_products(**kwargs)
            for raw in page.get("PriceList", []):
                point = _api_product(raw, region=region, today=today)
                if point is not None:
                    found.setdefault(point.item, point)
            token = page.get("NextToken")
            if not token:
                break
            kwargs["NextToken"] = token
    return Fetched(points=tuple(found.values()))


def _api_product(raw: str | dict[str, Any], *, region: str, today: date) -> PricePoint | None:
    where = "pricing.get_products PriceList item"
    try:
        doc = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        raise PriceUpdateError(f"{where}: not valid JSON ({exc})") from None
    doc = expect(doc, dict, where)
    attrs = expect(
        expect(doc.get("product"), dict, f"{where}: product").get("attributes"),
        dict,
        f"{where}: attributes",
    )
    instance = str(attrs.get("instanceType", ""))
    terms = expect(doc.get("terms", {}), dict, f"{where}: terms").get("OnDemand", {})
    for term in expect(terms, dict, f"{where}: terms.OnDemand").values():
        for dim in expect(
            expect(term, dict, where).get("priceDimensions", {}), dict, where
        ).values():
            if dim.get("unit") != "Hrs":
                continue
            usd = _price(str(dim.get("pricePerUnit", {}).get("USD", "")), f"{where} {instance}")
            if usd == 0 or not instance:
                continue
            return PricePoint(
                provider="aws",
                region=region,
                item=instance,
                option="on_demand",
                unit="instance-hour",
                usd=usd,
                effective_from=today,
                source=(
                    f"AWS Price List Query API (pricing.get_products) {region}, rate code "
                    f"{dim.get('rateCode', '?')}, effectiveDate {term.get('effectiveDate', '?')}; "
                    f"fetched {today}"
                ),
            )
    return None


def api_spot_medians(
    ec2: Any, instance_types: Sequence[str], *, region: str, now: datetime
) -> Fetched:
    """Median Linux spot price per instance over the last 30 days, across availability zones.

    The API returns only price *changes* per AZ (plus the price in force at ``StartTime``), so
    the median is over those records; it damps one AZ's spike without needing a time-weighted
    series. ``ec2`` is a boto3 EC2 client for ``region``.
    """
    if not instance_types:
        return Fetched(points=())
    prices: dict[str, list[float]] = {}
    kwargs: dict[str, Any] = {
        "InstanceTypes": list(instance_types),
        "ProductDescriptions": ["Linux/UNIX"],
        "StartTime": now - _SPOT_WINDOW,
        "EndTime": now,
    }
    while True:
        page = ec2.describe_spot_price_history(**kwargs)
        for rec in page.get("SpotPriceHistory", []):
            prices.setdefault(rec["InstanceType"], []).append(
                _price(str(rec["SpotPrice"]), f"describe_spot_price_history {rec['InstanceType']}")
            )
        token = page.get("NextToken")
        if not token:
            break
        kwargs["NextToken"] = token
    today = now.date()
    points = tuple(
        PricePoint(
            provider="aws",
            region=region,
            item=inst,
            option="spot",
            unit="instance-hour",
            usd=statistics.median(values),
            effective_from=today,
            source=(
                f"EC2 describe_spot_price_history {region} Linux/UNIX: median of {len(values)} "
                f"price records {(now - _SPOT_WINDOW).date()}..{today} across AZs; fetched {today}"
            ),
        )
        for inst, values in sorted(prices.items())
    )
    missing = sorted(set(instance_types) - set(prices))
    notes = tuple(f"aws {region} {m}: no spot price records in the last 30 days" for m in missing)
    return Fetched(points=points, notes=notes)
