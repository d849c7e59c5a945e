"""``trainbill prices``: list and show catalog prices, and update them from the clouds.

``list``/``show`` read the packaged catalog plus overlays (the price cache, ``TRAINBILL_CATALOG``
and ``--catalog``) and work with the core install. ``update`` needs ``trainbill[prices]``
(httpx, boto3), imported only when it runs.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from trainbill.catalog import Catalog, load_catalog
from trainbill.cli import app
from trainbill.errors import SpecError, TrainbillError
from trainbill.prices import (
    STALE_AFTER_DAYS,
    InstanceQuote,
    PriceUpdateError,
    cache_dir,
    instance_quote,
    overlays_from_env,
    price_table,
    stale_warning,
)

if TYPE_CHECKING:
    from trainbill.prices.compare import GpuPriceRow

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
    if con.is_terminal or os.environ.get("COLUMNS", "").isdigit():
        return con  # COLUMNS, when set, is the width asked for (Rich reads it)
    return Console(highlight=False, width=160)


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


_PricesGpu = Annotated[
    str | None, typer.Option("--gpu", help="Accelerator id or family (h100, a100).")
]
_PricesCloud = Annotated[str | None, typer.Option("--cloud", help="aws, gcp or azure.")]
_PricesRegion = Annotated[str | None, typer.Option("--region", help="Only this region.")]
_PricesSort = Annotated[
    str, typer.Option("--sort", help="gpu, on-demand, spot, commitment, pflop, hbm or age.")
]
_PricesWide = Annotated[
    bool, typer.Option("--wide", help="Show every column, whatever the terminal width.")
]
_PricesAllowStandIns = Annotated[
    bool,
    typer.Option(
        "--allow-stand-ins",
        help="Also rank catalog stand-ins (prices no cloud publishes, e.g. an H800 node).",
    ),
]


@prices_app.command("list")
def list_prices(
    gpu: _PricesGpu = None,
    cloud: _PricesCloud = None,
    region: _PricesRegion = None,
    sort: _PricesSort = "gpu",
    as_of: _AsOfOpt = None,
    catalog_dir: _CatalogOpt = None,
    as_json: _JsonOpt = False,
    wide: _PricesWide = False,
    allow_stand_ins: _PricesAllowStandIns = False,
) -> None:
    """Compare accelerators: $/GPU-hour on-demand, spot and commitment by cloud and region, HBM,
    dense BF16/FP8 TFLOP/s and $ per PFLOP-hour at peak, with each price's date and age."""
    from trainbill.prices.compare import gpu_price_rows, sort_rows

    day = _as_of(as_of)
    catalog = _catalog(catalog_dir)
    provider = _cloud(cloud)
    quotes = price_table(catalog, as_of=day, gpu=gpu, provider=provider, region=region)
    if not quotes:
        raise TrainbillError(_why_no_prices(catalog, day=day, provider=provider, region=region))
    rows = sort_rows(
        gpu_price_rows(catalog, quotes, as_of=day), sort, allow_stand_ins=allow_stand_ins
    )
    if as_json:
        _prices_json(quotes, rows, sort=sort, allow_stand_ins=allow_stand_ins)
        return
    _prices_table(rows, day=day, wide=wide, allow_stand_ins=allow_stand_ins)


def _prices_json(
    quotes: Sequence[InstanceQuote],
    rows: Sequence[GpuPriceRow],
    *,
    sort: str,
    allow_stand_ins: bool,
) -> None:
    """``prices list --json``: the instance-level keys stay as they were; ``per_gpu`` adds the
    comparison, ``rank`` the place in the --sort ranking (None: not ranked, a stand-in or no
    accelerator), and the entries come in that order."""
    from trainbill.prices.compare import ranked

    places = {(r.cloud, r.region, r.instance): i for i, r in enumerate(rows)}
    per = {(r.cloud, r.region, r.instance): r for r in rows}

    def entry(q: InstanceQuote) -> dict[str, object]:
        row = per.get((q.provider, q.region, q.instance))
        rank = (
            places[(q.provider, q.region, q.instance)] + 1
            if row is not None and ranked(row, sort, allow_stand_ins=allow_stand_ins)
            else None
        )
        return q.to_json() | {
            "history": None,
            "per_gpu": row.as_dict() if row is not None else None,
            "rank": rank,
        }

    order = sorted(
        quotes, key=lambda q: places.get((q.provider, q.region, q.instance), len(places))
    )
    _dump([entry(q) for q in order])


def _prices_table(
    rows: Sequence[GpuPriceRow], *, day: date, wide: bool, allow_stand_ins: bool
) -> None:
    """The ranked rows as a table, money columns aligned, with the footer that explains them."""
    from trainbill.cli._tables import Col, align_money, print_table

    def usd(x: float | None) -> str:
        """Up to 4 decimals, never fewer than 2: $2.00, $6.88, $11.0612."""
        if x is None:
            return "-"
        text = f"${x:,.4f}".rstrip("0")
        return text + "0" * max(0, 2 - len(text.rsplit(".", 1)[1]))

    def spot(r: Any) -> str:
        if r.spot_low is None:
            return "-"
        return (
            usd(r.spot_low)
            if r.spot_low == r.spot_high
            else f"{usd(r.spot_low)}-{usd(r.spot_high)}"
        )

    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:,.0f}"

    cols = [
        Col("gpu"),
        Col("cloud", drop=4),
        Col("region"),
        Col("instance"),
        # Money columns left-justified with their decimal points aligned (align_money).
        Col("on-demand"),
        Col("spot", drop=5),
        Col("commitment", "right", drop=6),
        Col("HBM GB", "right", drop=8),
        Col("BF16 TF/s", "right", drop=10),
        Col("FP8 TF/s", "right", drop=11),
        Col("$/PFLOP-h", drop=3),
        Col("price date", drop=9),
        Col("age", "right", drop=7),
    ]
    table_rows = [
        [
            r.accelerator,
            r.cloud,
            r.region,
            f"{r.instance} (STAND-IN)" if r.stand_in else r.instance,
            usd(r.on_demand) + (" stand-in" if r.stand_in else ""),
            spot(r),
            f"{usd(r.commitment)} {r.commitment_option}" if r.commitment is not None else "-",
            num(r.hbm_gb),
            num(r.bf16_tflops),
            num(r.fp8_tflops),
            usd(r.usd_per_pflop_hour),
            r.price_date.isoformat() if r.price_date else "-",
            "-"
            if r.age_days is None
            else f"{r.age_days:,} d" + (" (old)" if r.age_days > STALE_AFTER_DAYS else ""),
        ]
        for r in rows
    ]
    for col in (4, 5, 10):  # one column of money, one decimal point (issue #42)
        for row, cell in zip(table_rows, align_money([t[col] for t in table_rows]), strict=True):
            row[col] = cell
    con = _console()
    footer = [
        (
            "USD per accelerator-hour (instance rate ÷ accelerators per instance; TPUs per "
            "chip-hour). spot: lowest-highest across the region and its zones. commitment: "
            "providers' published rates only (never a claimed discount). "
            "$/PFLOP-h: on-demand $/GPU-hour ÷ dense BF16 peak PFLOP/s, at peak (no MFU "
            f"applied). price date: the on-demand price point's; (old) = over {STALE_AFTER_DAYS} "
            "days: run 'trainbill prices update <cloud>'."
        ),
    ]
    stand_ins = [r.instance for r in rows if r.stand_in]
    if stand_ins:
        footer.append(
            f"STAND-IN: {', '.join(dict.fromkeys(stand_ins))}: a catalog figure no provider "
            "sells at (the row's source says what it stands in for), "
            + (
                "ranked here because --allow-stand-ins was given."
                if allow_stand_ins
                else "listed after the ranked rows and not ranked (--allow-stand-ins ranks it)."
            )
        )
    print_table(
        con,
        f"Accelerator prices in force on {day.isoformat()}",
        cols,
        table_rows,
        wide=wide,
        footer=footer,
    )


@prices_app.command("show")
def show_price(
    instance: Annotated[str, typer.Argument(help="Instance type, e.g. p5.48xlarge.")],
    as_of: _AsOfOpt = None,
    region: Annotated[
        str | None, typer.Option("--region", help="Region (default: the cloud's reference region).")
    ] = None,
    catalog_dir: _CatalogOpt = None,
    as_json: _JsonOpt = False,
) -> None:
    """One instance: rates per option on a date, their sources, and the full price history."""
    day = _as_of(as_of)
    quote = instance_quote(_catalog(catalog_dir), instance, as_of=day, region=region)
    if not quote.options:
        first = min(
            (p.effective_from for p in quote.history if p.region == quote.region), default=None
        )
        since = (
            f"its first price point in {quote.region} is {first.isoformat()}"
            if first
            else f"it has no price in {quote.region}"
        )
        msg = f"--as-of: {instance} has no price in force on {day.isoformat()}: {since}"
        raise TrainbillError(msg)
    od_point = quote.point("on_demand")
    warning = stale_warning(od_point, day) if od_point is not None else None
    if as_json:
        _dump(quote.to_json() | {"stale_warning": warning})
        return
    con = _console()
    gpu_text = (
        f"{quote.accelerator_count}x {quote.accelerator}"
        if quote.accelerator
        else "unknown accelerator"
    )
    con.print(
        f"{quote.instance} ({quote.provider} {quote.region}, {gpu_text}) as of {day.isoformat()}"
    )
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
    return (
        f"no instance price in force on {day.isoformat()} matches the filters "
        "(--gpu/--cloud/--region/--as-of)"
    )


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
    region: Annotated[
        str | None, typer.Option("--region", help="Region (default: the cloud's reference region).")
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", help="GCP Cloud Billing API key (or TRAINBILL_GCP_API_KEY)."),
    ] = None,
    sku: Annotated[
        list[str] | None,
        typer.Option("--sku", help="Azure/GCP: only these VM sizes (default: the catalog's)."),
    ] = None,
    bulk: Annotated[
        bool, typer.Option("--bulk", help="AWS: use the bulk price file even with credentials.")
    ] = False,
    no_aws_api: Annotated[
        bool, typer.Option("--no-aws-api", help="AWS: never call boto3 APIs.")
    ] = False,
    sp_payment: Annotated[
        str,
        typer.Option(
            "--sp-payment",
            help="AWS Savings Plan payment: 'No Upfront', 'Partial Upfront', 'All Upfront'.",
        ),
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
