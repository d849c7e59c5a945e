"""``prices update``: fetch one cloud's prices and merge them into the cache, all or nothing.

Everything is fetched and validated in memory first (only accelerator rows are kept, so this
is small even when the source file is hundreds of MB); the cache is written only after the
whole fetch succeeded, atomically. Any error before that leaves the previous cache untouched.
This module imports ``httpx`` and is imported lazily by the CLI (``trainbill[prices]``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from trainbill._record import record
from trainbill.catalog import Catalog
from trainbill.prices import aws, azure, gcp
from trainbill.prices._cache import CacheWrite, write_price_points
from trainbill.prices._errors import PriceUpdateError
from trainbill.prices._http import Http
from trainbill.prices._model import Fetched

__all__ = [
    "CLOUDS",
    "REGION_NAMES",
    "UpdateReport",
    "aws_clients",
    "check_cache_dir",
    "check_region",
    "fetch_cloud",
    "run_update",
]

CLOUDS = ("aws", "azure", "gcp")

_DIRECTIONS = "north|south|east|west|central|northeast|northwest|southeast|southwest"
#: How each cloud spells a region's programmatic name, with an example: checked before any
#: request, so a typo (``us-esat-1``), another cloud's name (``us-central1`` for AWS) or a
#: display name (``East US``) is one line, not a download that ends in "no offer". A list of
#: every region would go stale as clouds open new ones; the naming rule does not. AWS: geography
#: (and partition) prefix, direction, number (``us-east-1``, ``us-gov-west-1``); GCP: geography,
#: direction and number with no dash before it (``us-central1``, ``europe-west4``); Azure:
#: lower-case letters and digits, no separators (``eastus``, ``westeurope``, ``eastus2``).
REGION_NAMES: Mapping[str, tuple[re.Pattern[str], str]] = {
    "aws": (re.compile(rf"[a-z]{{2,4}}(-[a-z]+)?-({_DIRECTIONS})-[0-9]{{1,2}}"), "us-east-1"),
    "gcp": (re.compile(rf"[a-z]+-({_DIRECTIONS})[0-9]{{1,2}}"), "us-central1"),
    "azure": (re.compile(r"[a-z]+[a-z0-9]*"), "eastus"),
}


@record
class UpdateReport:
    """What ``prices update`` did: the cache write plus notes on skipped rows."""

    cloud: str
    region: str
    fetched: int
    write: CacheWrite
    notes: tuple[str, ...]


def aws_clients(region: str) -> tuple[Any, Any] | None:
    """boto3 ``pricing`` and ``ec2`` clients when credentials exist, else None."""
    if not aws.has_credentials():
        return None
    import boto3

    session = boto3.Session()
    return session.client("pricing", region_name="us-east-1"), session.client(
        "ec2", region_name=region
    )


def fetch_cloud(
    cloud: str,
    http: Http,
    catalog: Catalog,
    *,
    region: str,
    today: date,
    now: datetime | None = None,
    api_key: str | None = None,
    skus: Sequence[str] = (),
    aws_api: tuple[Any, Any] | None = None,
    bulk: bool = False,
    sp_payment: str = "All Upfront",
) -> Fetched:
    """Fetch one cloud's accelerator prices for a region (no cache I/O)."""
    if cloud == "aws":
        if sp_payment not in aws.SP_PAYMENT_OPTIONS:
            raise PriceUpdateError(
                f"--sp-payment: {sp_payment!r} not one of {', '.join(aws.SP_PAYMENT_OPTIONS)}"
            )
        if aws_api is not None and not bulk:
            pricing, _ec2 = aws_api
            result = aws.api_on_demand(pricing, region=region, today=today)
        else:
            result = aws.bulk_on_demand(http, region=region, today=today)
        result += aws.bulk_savings_plans(http, region=region, today=today, payment=sp_payment)
        if aws_api is not None:
            _pricing, ec2 = aws_api
            types = sorted({p.item for p in result.points if p.option == "on_demand"})
            result += aws.api_spot_medians(
                ec2,
                types,
                region=region,
                now=now or datetime.combine(today, datetime.min.time(), UTC),
            )
        else:
            result += Fetched(
                points=(),
                notes=(
                    (
                        "aws: no AWS credentials, so no spot prices (describe_spot_price_history "
                        "needs them)"
                    ),
                ),
            )
        return result
    if cloud == "azure":
        names = list(skus) or sorted(
            i.instance for i in catalog.instances.values() if i.provider == "azure"
        )
        return azure.fetch(http, region=region, skus=names, today=today)
    if cloud == "gcp":
        wanted = [i for i in catalog.instances.values() if i.provider == "gcp"]
        if skus:
            wanted = [i for i in wanted if i.instance in set(skus)]
        return gcp.fetch(http, region=region, instances=wanted, api_key=api_key, today=today)
    raise PriceUpdateError(f"unknown cloud {cloud!r}; allowed: {', '.join(CLOUDS)}")


def check_region(cloud: str, region: str, catalog: Catalog) -> None:
    """Refuse a region ``cloud`` cannot have (``REGION_NAMES``), naming the catalog's regions of
    that cloud, and the cloud it belongs to when it is another cloud's name."""
    pattern, example = REGION_NAMES[cloud]
    if pattern.fullmatch(region):
        return
    other = [c for c in CLOUDS if c != cloud and REGION_NAMES[c][0].fullmatch(region)]
    hint = f" ({region!r} is how {' or '.join(other)} names regions)" if other else ""
    known = sorted(r for r in catalog.regions(cloud) if pattern.fullmatch(r))
    msg = (
        f"--region: {region!r} is not a region name on {cloud}{hint}; {cloud} regions look like "
        f"{example} (in the catalog: {', '.join(known) or 'none'}). Nothing was fetched."
    )
    raise PriceUpdateError(msg)


def check_cache_dir(directory: Path) -> None:
    """Refuse a cache directory that cannot be written (a file in the way, no permission), so
    the update fails before its downloads rather than after them."""
    probe = directory
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    problem = None
    if probe.exists() and not probe.is_dir():
        problem = f"{probe} is not a directory"
    elif not os.access(probe, os.W_OK | os.X_OK):
        problem = f"{probe} is not writable"
    if problem is not None:
        msg = (
            f"price cache {directory}: {problem}; set TRAINBILL_CACHE_DIR to a writable "
            "directory. Nothing was fetched."
        )
        raise PriceUpdateError(msg)


def run_update(
    cloud: str,
    http: Http,
    catalog: Catalog,
    cache: Path,
    *,
    region: str | None = None,
    today: date,
    now: datetime | None = None,
    api_key: str | None = None,
    skus: Sequence[str] = (),
    aws_api: tuple[Any, Any] | None = None,
    aws_api_factory: Callable[[str], tuple[Any, Any] | None] | None = None,
    bulk: bool = False,
    sp_payment: str = "All Upfront",
) -> UpdateReport:
    """Fetch, then write the cache atomically; raises before writing if anything failed.

    The cloud, region and cache directory are checked first: a bad one costs no request.
    """
    if cloud not in CLOUDS:
        raise PriceUpdateError(f"unknown cloud {cloud!r}; allowed: {', '.join(CLOUDS)}")
    reg = region or catalog.reference_region(cloud)
    check_region(cloud, reg, catalog)
    check_cache_dir(cache)
    if cloud == "aws" and aws_api is None and aws_api_factory is not None:
        aws_api = aws_api_factory(reg)
    fetched = fetch_cloud(
        cloud, http, catalog, region=reg, today=today, now=now, api_key=api_key, skus=skus,
        aws_api=aws_api, bulk=bulk, sp_payment=sp_payment,
    )  # fmt: skip
    if not fetched.points:
        raise PriceUpdateError(
            f"{cloud} {reg}: the update found no accelerator prices, so the cache was not "
            f"changed. Notes: {'; '.join(fetched.notes[:5]) or 'none'}"
        )
    write = write_price_points(cache, fetched.points)
    return UpdateReport(
        cloud=cloud, region=reg, fetched=len(fetched.points), write=write, notes=fetched.notes
    )
