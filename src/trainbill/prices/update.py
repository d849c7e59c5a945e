"""``prices update``: fetch one cloud's prices and merge them into the cache, all or nothing.

Everything is fetched and validated in memory first (only accelerator rows are kept, so this
is small even when the source file is hundreds of MB); the cache is written only after the
whole fetch succeeded, atomically. Any error before that leaves the previous cache untouched.
This module imports ``httpx`` and is imported lazily by the CLI (``trainbill[prices]``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from trainbill.catalog import Catalog
from trainbill.prices import aws, azure, gcp
from trainbill.prices._cache import CacheWrite, write_price_points
from trainbill.prices._errors import PriceUpdateError
from trainbill.prices._http import Http
from trainbill.prices._model import Fetched

__all__ = ["CLOUDS", "UpdateReport", "aws_clients", "fetch_cloud", "run_update"]

CLOUDS = ("aws", "azure", "gcp")


@dataclass(frozen=True, slots=True, kw_only=True)
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
    return session.client("pricing", region_name="us-east-1"), session.client("ec2", region_name=region)


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
                ec2, types, region=region, now=now or datetime.combine(today, datetime.min.time(), UTC)
            )
        else:
            result += Fetched(
                points=(),
                notes=("aws: no AWS credentials, so no spot prices (describe_spot_price_history needs them)",),
            )
        return result
    if cloud == "azure":
        names = list(skus) or sorted(i.instance for i in catalog.instances.values() if i.provider == "azure")
        return azure.fetch(http, region=region, skus=names, today=today)
    if cloud == "gcp":
        wanted = [i for i in catalog.instances.values() if i.provider == "gcp"]
        if skus:
            wanted = [i for i in wanted if i.instance in set(skus)]
        return gcp.fetch(http, region=region, instances=wanted, api_key=api_key, today=today)
    raise PriceUpdateError(f"unknown cloud {cloud!r}; allowed: {', '.join(CLOUDS)}")


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
    """Fetch, then write the cache atomically; raises before writing if anything failed."""
    if cloud not in CLOUDS:
        raise PriceUpdateError(f"unknown cloud {cloud!r}; allowed: {', '.join(CLOUDS)}")
    reg = region or catalog.reference_region(cloud)
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
    return UpdateReport(cloud=cloud, region=reg, fetched=len(fetched.points), write=write, notes=fetched.notes)
