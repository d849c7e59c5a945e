"""``trainbill prices``: list and show catalog prices, and update them from the clouds.

``list``/``show`` read the packaged catalog plus overlays (the price cache, ``TRAINBILL_CATALOG``
and ``--catalog``) and work with the core install. ``update`` needs ``trainbill[prices]``
(httpx, boto3), imported only when it runs.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from trainbill.catalog import Catalog, load_catalog
from trainbill.cli import app
from trainbill.errors import SpecError, TrainbillError
from trainbill.prices import (
    InstanceQuote,
    PriceUpdateError,
    cache_dir,
    instance_quote,
    overlays_from_env,
    price_table,
    stale_warning,
)

__all__ = ["prices_app"]

prices_app = typer.Typer(
    help="Prices: list and show the catalog's dated prices; update them from AWS, Azure, GCP.",
    no_args_is_help=True,
)
app.add_typer(prices_app, name="prices")

_CLOUDS = ("aws", "gcp", "azure")
_CatalogOpt = Annotated[
    list[Path] | None,
    typer.Option("--catalog", help="Overlay catalog directory with your own rates (repeatable)."),
]
_JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
_AsOfOpt = Annotated[
    str | None, typer.Option("--as-of", help="Price date YYYY-MM-DD (default: today).")
]


def _console() -> Console:
    con = Console(highlight=False)
    return con if con.is_terminal else Console(highlight=False, width=160)


def _catalog(dirs: list[Path] | None) -> Catalog:
    return load_catalog([*overlays_from_env(), *(dirs or [])])


def _today() -> date:
    """Today's date in UTC (the clouds publish prices in UTC)."""
    return datetime.now(UTC).date()


def _as_of(text: str | None) -> date:
    if text is None:
        return _today()
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise SpecError(f"{text!r} is not a date (expected YYYY-MM-DD)", field="--as-of") from None


def _cloud(text: str | None) -> str | None:
    if text is not None and text not in _CLOUDS:
        raise SpecError(f"{text!r} is not one of {', '.join(_CLOUDS)}", field="--cloud")
    return text


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.4f}".rstrip("0").rstrip(".")


def _dump(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


@prices_app.command("list")
def list_prices(
    gpu: Annotated[str | None, typer.Option("--gpu", help="Accelerator id or family (h100, a100).")] = None,
    cloud: Annotated[str | None, typer.Option("--cloud", help="aws, gcp or azure.")] = None,
    region: Annotated[str | None, typer.Option("--region", help="Only this region.")] = None,
    as_of: _AsOfOpt = None,
    catalog_dir: _CatalogOpt = None,
    as_json: _JsonOpt = False,
) -> None:
    """Instance prices per purchase option in force on a date (default today)."""
    day = _as_of(as_of)
    catalog = _catalog(catalog_dir)
    provider = _cloud(cloud)
    quotes = price_table(catalog, as_of=day, gpu=gpu, provider=provider, region=region)
    if not quotes:
        raise TrainbillError(_why_no_prices(catalog, day=day, provider=provider, region=region))
    if as_json:
        _dump([q.to_json() | {"history": None} for q in quotes])
        return
    table = Table(title=f"Prices in force on {day.isoformat()} (USD per instance-hour; TPU per chip-hour)")
    for col in ("cloud", "region", "instance", "gpu", "on-demand", "spot", "1-yr", "3-yr", "as of"):
        table.add_column(col, justify="right" if col in {"on-demand", "spot", "1-yr", "3-yr"} else "left")
    for q in quotes:

        def cell(option: str, quote: InstanceQuote = q) -> str:
            o = quote.options.get(option)
            if o is None:
                return "-"
            return _money(o.usd_per_hour) + ("*" if o.basis == "derived" else "")

        od = q.options.get("on_demand")
        gpu_text = f"{q.accelerator_count}x {q.accelerator}" if q.accelerator else "?"
        od_point = q.point("on_demand")
        stale = od_point is not None and stale_warning(od_point, day) is not None
        as_of_text = (od.effective_from.isoformat() + (" (old)" if stale else "")) if od else "-"
        table.add_row(
            q.provider, q.region, q.instance, gpu_text, cell("on_demand"), cell("spot"),
            cell("sp_1yr"), cell("sp_3yr"), as_of_text,
        )  # fmt: skip
    con = _console()
    con.print(table)
    con.print(
        "* derived from on-demand and the catalog's commitment discount assumption, not a quoted rate."
        " (old) = on-demand price point over 90 days old: run 'trainbill prices update <cloud>'."
    )


@prices_app.command("show")
def show_price(
    instance: Annotated[str, typer.Argument(help="Instance type, e.g. p5.48xlarge.")],
    as_of: _AsOfOpt = None,
    region: Annotated[str | None, typer.Option("--region", help="Region (default: the cloud's reference region).")] = None,
    catalog_dir: _CatalogOpt = None,
    as_json: _JsonOpt = False,
) -> None:
    """One instance: rates per option on a date, their sources, and the full price history."""
    day = _as_of(as_of)
    quote = instance_quote(_catalog(catalog_dir), instance, as_of=day, region=region)
    if not quote.options:
        first = min((p.effective_from for p in quote.history if p.region == quote.region), default=None)
        since = f"its first price point in {quote.region} is {first.isoformat()}" if first else f"it has no price in {quote.region}"
        msg = f"--as-of: {instance} has no price in force on {day.isoformat()}: {since}"
        raise TrainbillError(msg)
    od_point = quote.point("on_demand")
    warning = stale_warning(od_point, day) if od_point is not None else None
    if as_json:
        _dump(quote.to_json() | {"stale_warning": warning})
        return
    con = _console()
    gpu_text = f"{quote.accelerator_count}x {quote.accelerator}" if quote.accelerator else "unknown accelerator"
    con.print(f"{quote.instance} ({quote.provider} {quote.region}, {gpu_text}) as of {day.isoformat()}")
    table = Table(title=f"USD per {quote.unit}")
    for col in ("option", "rate", "basis", "effective", "source"):
        table.add_column(col, overflow="fold")
    for name, o in quote.options.items():
        table.add_row(name, _money(o.usd_per_hour), o.basis, o.effective_from.isoformat(), o.source)
    con.print(table)
    hist = Table(title="History (all price points)")
    for col in ("region", "option", "usd", "effective", "source"):
        hist.add_column(col, overflow="fold")
    for p in quote.history:
        hist.add_row(p.region, p.option, _money(p.usd), p.effective_from.isoformat(), p.source)
    con.print(hist)
    if warning:
        sys.stderr.write(f"trainbill: warning: {warning}\n")


def _why_no_prices(catalog: Catalog, *, day: date, provider: str | None, region: str | None) -> str:
    """One line saying which filter left ``prices list`` empty, instead of an empty table."""
    providers = [provider] if provider else ["aws", "azure", "gcp"]
    known = sorted({r for p in providers for r in catalog.regions(p)})
    if region is not None and region not in known:
        where = f" for {provider}" if provider else ""
        return f"--region: {region!r} has no prices{where}; known regions: {', '.join(known)}"
    return f"no instance price in force on {day.isoformat()} matches the filters (--gpu/--cloud/--region/--as-of)"


def _http_client() -> Any:
    """The httpx client for updates (tests replace this with a MockTransport client)."""
    from trainbill.prices._http import new_client

    return new_client()


def _sleep(seconds: float) -> None:
    import time

    time.sleep(seconds)


def _aws_api(region: str) -> tuple[Any, Any] | None:
    from trainbill.prices.update import aws_clients

    return aws_clients(region)


@prices_app.command("update")
def update_prices(
    cloud: Annotated[str, typer.Argument(help="aws, azure or gcp.")],
    region: Annotated[str | None, typer.Option("--region", help="Region (default: the cloud's reference region).")] = None,
    api_key: Annotated[
        str | None, typer.Option("--api-key", help="GCP Cloud Billing API key (or TRAINBILL_GCP_API_KEY).")
    ] = None,
    sku: Annotated[
        list[str] | None, typer.Option("--sku", help="Azure/GCP: only these VM sizes (default: the catalog's).")
    ] = None,
    bulk: Annotated[bool, typer.Option("--bulk", help="AWS: use the bulk price file even with credentials.")] = False,
    no_aws_api: Annotated[bool, typer.Option("--no-aws-api", help="AWS: never call boto3 APIs.")] = False,
    sp_payment: Annotated[
        str, typer.Option("--sp-payment", help="AWS Savings Plan payment: 'No Upfront', 'Partial Upfront', 'All Upfront'.")
    ] = "All Upfront",
    catalog_dir: _CatalogOpt = None,
) -> None:
    """Fetch current prices into the local price cache (a dated overlay; atomic, all or nothing)."""
    if cloud not in _CLOUDS:
        raise SpecError(f"{cloud!r} is not one of aws, azure, gcp", field="CLOUD")
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise PriceUpdateError(
            "prices update needs httpx: pip install 'trainbill[prices]'"
        ) from None
    from trainbill.prices._http import Http
    from trainbill.prices.update import run_update

    key = api_key or os.environ.get("TRAINBILL_GCP_API_KEY")
    today = _today()
    target = cache_dir()
    with _http_client() as client:
        report = run_update(
            cloud, Http(client, sleep=_sleep), _catalog(catalog_dir), target,
            region=region, today=today, now=datetime.now(UTC), api_key=key, skus=sku or (),
            aws_api_factory=None if no_aws_api else _aws_api, bulk=bulk, sp_payment=sp_payment,
        )  # fmt: skip
    con = _console()
    w = report.write
    con.print(
        f"{report.cloud} {report.region}: {report.fetched} price points fetched, "
        f"{len(w.added)} new, {w.unchanged} unchanged; cache {w.path} now holds {w.total}."
    )
    for p in w.added:
        con.print(f"  + {p.item} {p.option} ${p.usd:,.4f}/{p.unit}")
    for note in report.notes[:20]:
        con.print(f"  note: {note}")
    if len(report.notes) > 20:
        con.print(f"  ... and {len(report.notes) - 20} more notes")
