"""Google Cloud prices from the Cloud Billing Catalog API (needs an API key; REFERENCE §3.6).

A GPU VM (A2/A3) is not one SKU: its hourly price is ``vCPUs x core SKU + GiB x RAM SKU +
GPUs x GPU SKU`` for the machine series, so each catalog instance is *assembled* from three SKUs
of the same usage type (OnDemand, Preemptible = spot, Commit1Yr, Commit3Yr) in its region. TPUs
are priced per chip-hour from the Cloud TPU service. SKU prices are ``units + nanos / 1e9`` USD
per ``usageUnit``. SKU descriptions are matched with the patterns below (a mapping of names,
not prices); an instance whose components are not all found is skipped with a note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import Any

from trainbill._record import record
from trainbill.catalog import Instance, PricePoint
from trainbill.prices._errors import PriceUpdateError
from trainbill.prices._http import Http, expect
from trainbill.prices._model import Fetched

__all__ = [
    "API_KEY_ENV",
    "COMPUTE_SERVICE",
    "SKUS_URL",
    "TPU_SERVICE",
    "Sku",
    "assemble",
    "fetch",
    "fetch_skus",
    "parse_sku",
    "require_api_key",
]

API_KEY_ENV = "TRAINBILL_GCP_API_KEY"
SKUS_URL = "https://cloudbilling.googleapis.com/v1/services/{service}/skus"
COMPUTE_SERVICE = "6F81-5844-456A"
TPU_SERVICE = "E000-3F24-B8AA"
_USAGE = {
    "OnDemand": "on_demand",
    "Preemptible": "spot",
    "Commit1Yr": "sp_1yr",
    "Commit3Yr": "sp_3yr",
}
#: GPU SKU description patterns per catalog accelerator id.
_GPU_SKU = {
    "a100-40gb": r"\bA100 GPU\b",
    "a100-80gb": r"\bA100 80GB GPU\b",
    "h100": r"\bH100 80GB GPU\b",
    "h200": r"\bH200 141GB GPU\b",
    "b200": r"\bB200 GPU\b",
    "l4": r"\bL4 GPU\b",
}
#: TPU SKU description patterns per catalog accelerator id (matched case-insensitively).
_TPU_SKU = {"tpu-v5p": r"\bv5p\b", "tpu-v6e": r"\bv6e\b", "tpu-v5e": r"\b(?:v5e|v5 ?lite)"}
_MAX_PAGES = 200


@record
class Sku:
    """The parts of a Catalog API SKU we price with."""

    sku_id: str
    description: str
    option: str
    regions: tuple[str, ...]
    usage_unit: str
    usd: float


def require_api_key(api_key: str | None) -> str:
    """The key from ``--api-key`` or ``$TRAINBILL_GCP_API_KEY``; a clear error when neither is
    set."""
    if api_key and api_key.strip():
        return api_key.strip()
    raise PriceUpdateError(
        "GCP prices need a Cloud Billing Catalog API key: pass --api-key KEY or set "
        f"{API_KEY_ENV}. To fix: create an API key in the Google Cloud console "
        "(APIs & Services > Credentials) with the Cloud Billing API enabled."
    )


def parse_sku(raw: Any, where: str) -> Sku | None:
    """A Compute-family SKU with a known usage type, or None for everything else."""
    sku = expect(raw, dict, where)
    category = expect(sku.get("category", {}), dict, f"{where}: category")
    option = _USAGE.get(str(category.get("usageType", "")))
    if option is None or category.get("resourceFamily") not in {"Compute", "TPU"}:
        return None
    infos = expect(sku.get("pricingInfo"), list, f"{where}: pricingInfo")
    if not infos:
        return None
    expr = expect(
        expect(infos[0], dict, where).get("pricingExpression"), dict, f"{where}: pricingExpression"
    )
    tiers = expect(expr.get("tieredRates"), list, f"{where}: tieredRates")
    if not tiers:
        return None
    first = min(tiers, key=lambda t: float(t.get("startUsageAmount", 0)))
    price = expect(first.get("unitPrice"), dict, f"{where}: unitPrice")
    try:
        usd = int(price.get("units", "0") or 0) + int(price.get("nanos", 0) or 0) / 1e9
    except (TypeError, ValueError):
        raise PriceUpdateError(f"{where}: unitPrice {price!r} is not units + nanos") from None
    return Sku(
        sku_id=str(sku.get("skuId", "?")),
        description=str(sku.get("description", "")),
        option=option,
        regions=tuple(
            str(r) for r in expect(sku.get("serviceRegions", []), list, f"{where}: serviceRegions")
        ),
        usage_unit=str(expr.get("usageUnit", "")),
        usd=usd,
    )


def fetch_skus(http: Http, *, service: str, api_key: str) -> list[Sku]:
    """Every priced SKU of a service, following ``nextPageToken``."""
    url = SKUS_URL.format(service=service)
    params = {"key": api_key, "currencyCode": "USD", "pageSize": "5000"}
    out: list[Sku] = []
    for page in range(1, _MAX_PAGES + 1):
        doc = expect(http.get_json(url, params), dict, f"{url} page {page}")
        for i, raw in enumerate(expect(doc.get("skus", []), list, f"{url} page {page}: skus")):
            sku = parse_sku(raw, f"{url} page {page}: skus[{i}]")
            if sku is not None:
                out.append(sku)
        token = doc.get("nextPageToken")
        if not token:
            return out
        params = {**params, "pageToken": expect(token, str, f"{url}: nextPageToken")}
    raise PriceUpdateError(f"{url}: paging did not end after {_MAX_PAGES} pages")


def _find(
    skus: Sequence[Sku], pattern: str, option: str, region: str, unit: str, flags: int = 0
) -> Sku | None:
    rx = re.compile(pattern, flags)
    for s in skus:
        if (
            s.option == option
            and region in s.regions
            and s.usage_unit == unit
            and rx.search(s.description)
        ):
            return s
    return None


def assemble(
    skus: Sequence[Sku],
    tpu_skus: Sequence[Sku],
    instances: Sequence[Instance],
    *,
    region: str,
    today: date,
) -> Fetched:
    """Price each instance per option from its component SKUs (see the module docstring)."""
    points: list[PricePoint] = []
    notes: list[str] = []
    for inst in instances:
        for usage, option in _USAGE.items():
            if inst.billing == "chip":
                pattern = _TPU_SKU.get(inst.accelerator)
                chip = pattern and _find(tpu_skus, pattern, option, region, "h", re.IGNORECASE)
                if not chip:
                    notes.append(f"gcp {region} {inst.instance} {usage}: no TPU chip SKU found")
                    continue
                points.append(
                    PricePoint(
                        provider="gcp",
                        region=region,
                        item=inst.instance,
                        option=option,
                        unit="chip-hour",
                        usd=chip.usd,
                        effective_from=today,
                        source=(
                            f"GCP Cloud Billing Catalog API {region}: '{chip.description}' "
                            f"(SKU {chip.sku_id}) per chip-hour; fetched {today}"
                        ),
                    )
                )
                continue
            series = inst.instance.split("-", 1)[0].upper()
            gpu_pattern = _GPU_SKU.get(inst.accelerator)
            cpu = _find(skus, rf"\b{series} (?:Instance )?(?:Core|Cpu)\b", option, region, "h")
            ram = _find(skus, rf"\b{series} (?:Instance )?Ram\b", option, region, "GiBy.h")
            gpu = _find(skus, gpu_pattern, option, region, "h") if gpu_pattern else None
            missing = [n for n, s in (("vCPU", cpu), ("RAM", ram), ("GPU", gpu)) if s is None]
            if missing or cpu is None or ram is None or gpu is None:
                notes.append(
                    f"gcp {region} {inst.instance} {usage}: no {'/'.join(missing)} SKU found"
                )
                continue
            usd = (
                inst.vcpus * cpu.usd + inst.memory_gib * ram.usd + inst.accelerator_count * gpu.usd
            )
            points.append(
                PricePoint(
                    provider="gcp",
                    region=region,
                    item=inst.instance,
                    option=option,
                    unit="instance-hour",
                    usd=usd,
                    effective_from=today,
                    source=(
                        f"GCP Cloud Billing Catalog API {region}: {inst.vcpus} x "
                        f"'{cpu.description}' ${cpu.usd:g}/h + {inst.memory_gib:g} GiB x "
                        f"'{ram.description}' ${ram.usd:g}/GiB-h + {inst.accelerator_count} x "
                        f"'{gpu.description}' ${gpu.usd:g}/h; fetched {today}"
                    ),
                )
            )
    return Fetched(points=tuple(points), notes=tuple(notes))


def fetch(
    http: Http, *, region: str, instances: Sequence[Instance], api_key: str | None, today: date
) -> Fetched:
    """Fetch Compute Engine (and, for TPU instances, Cloud TPU) SKUs and assemble prices."""
    key = require_api_key(api_key)
    vms = [i for i in instances if i.billing != "chip"]
    tpus = [i for i in instances if i.billing == "chip"]
    skus = fetch_skus(http, service=COMPUTE_SERVICE, api_key=key) if vms else []
    tpu_skus = fetch_skus(http, service=TPU_SERVICE, api_key=key) if tpus else []
    return assemble(skus, tpu_skus, [*vms, *tpus], region=region, today=today)
