"""``trainbill report`` (one self-contained HTML file) and ``trainbill serve`` (web calculator +
API)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from trainbill.cli import _plan_flags as pf
from trainbill.cli import app
from trainbill.cli._common import (
    CALIBRATION_HELP,
    catalog_from_options,
    check_output_path,
    console,
    read_calibrations,
    write_outputs,
)
from trainbill.errors import SpecError, TrainbillError
from trainbill.report.format import money

__all__: list[str] = []

#: The report's simulation is for reading, not for research: more trials only cost time.
MAX_REPORT_TRIALS = 100_000


@app.command("report")
def report_cmd(
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")],
    plan_file: pf.PlanFile = None,
    params: pf.Params = None,
    active_params: pf.ActiveParams = None,
    tokens: pf.Tokens = None,
    gpu: pf.Gpu = None,
    gpus: pf.Gpus = None,
    precision: pf.Precision = None,
    architecture: pf.Architecture = None,
    attention_share: pf.AttentionShare = None,
    instance: pf.Instance = None,
    nodes: pf.Nodes = None,
    hours: pf.Hours = None,
    provider: pf.Cloud = None,
    region: pf.Region = None,
    spot_fraction: pf.SpotFraction = None,
    as_of: pf.AsOf = None,
    run_date: pf.RunDate = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite the output file if it exists.")
    ] = False,
    trials: Annotated[
        int, typer.Option(help="Monte Carlo trials (0 skips the simulation).")
    ] = 2000,
    seed: Annotated[int, typer.Option(help="Random seed for the simulation.")] = 0,
    catalog_dir: Annotated[
        list[Path] | None, typer.Option("--catalog", help="Overlay catalog directory (own rates).")
    ] = None,
    ledger_csv: Annotated[
        Path | None, typer.Option("--ledger-csv", help="Also write every ledger line as CSV.")
    ] = None,
    ledger_xlsx: Annotated[
        Path | None,
        typer.Option(
            "--ledger-xlsx", help="Also write the ledger workbook (XLSX: ledger, by month, by day)."
        ),
    ] = None,
    calibration: Annotated[
        list[Path] | None, typer.Option("--calibration", help=CALIBRATION_HELP)
    ] = None,
) -> None:
    """Write a self-contained HTML report for finance: waterfall, ledger, risk, right-sizing."""
    from rich.markup import escape

    from trainbill.report import exports, render_html
    from trainbill.usecases.report import CautionKind, report_data

    if not 0 <= trials <= MAX_REPORT_TRIALS:
        msg = f"must be between 0 and {MAX_REPORT_TRIALS:,} (got {trials})"
        raise SpecError(msg, source="command line", field="--trials")
    if seed < 0:
        msg = f"must be a non-negative integer (got {seed})"
        raise SpecError(msg, source="command line", field="--seed")
    outputs = _outputs(
        plan_file, force=force, output=output, ledger_csv=ledger_csv, ledger_xlsx=ledger_xlsx
    )
    flags = pf.run_flags(
        params=params, active_params=active_params, tokens=tokens, precision=precision, gpu=gpu,
        gpus=gpus, instance=instance, nodes=nodes, hours=hours, provider=provider, region=region,
        spot_fraction=spot_fraction, as_of=as_of, run_date=run_date,
        architecture=architecture, attention_share=attention_share,
    )  # fmt: skip
    plan = pf.build_plan(plan_file, flags=flags)
    # Bill rates only (the planner and the right-sizing price plans with no measured MFU); on
    # the catalog they reach the forecast, the planner and the simulation alike, and the
    # forecast's calibration caution is among the warnings the report shows.
    cals = read_calibrations(calibration, command="report", measured_mfu=False)
    data = report_data(plan, catalog_from_options(catalog_dir), cals, trials=trials, seed=seed)
    # Every file's content first (a missing XlsxWriter fails here), then the writes.
    writers: dict[str, Callable[[], str | bytes]] = {
        "--output": lambda: render_html(data),
        "--ledger-csv": lambda: exports.ledger_csv(data.forecast),
        "--ledger-xlsx": lambda: exports.ledger_xlsx(data.forecast, data.outlook),
    }
    contents = {flag: writers[flag]() for flag in outputs}
    write_outputs([(path, contents[flag], flag) for flag, path in outputs.items()], force=force)
    fc = data.forecast
    b = data.outlook.budget if data.outlook is not None else None
    console.print(
        f"wrote {output}: quote {money(fc.quote_usd)}, planned {money(fc.planned_usd)}, real "
        f"bill {money(fc.total_usd)} ({fc.hidden_multiplier:.2f}× planned), budget (P90 of "
        f"simulated runs) {money(b.usd) if b else 'n/a'}"
    )
    for flag in ("--ledger-csv", "--ledger-xlsx"):
        if flag in outputs:
            console.print(f"wrote {outputs[flag]}: the ledger's {len(fc.ledger.lines)} lines")
    for caution in fc.cautions_of(CautionKind.CALIBRATION):
        console.print(f"note: {escape(caution.text)}")
    if data.simulation is None:
        console.print(f"note: {data.simulation_note}")


def _outputs(plan_file: Path | None, *, force: bool, **paths: Path | None) -> dict[str, Path]:
    """The files to write by flag, each checked before any work: never the plan file itself,
    never one path for two files (the second would silently replace the first under --force)."""
    chosen = {f"--{name.replace('_', '-')}": p for name, p in paths.items() if p is not None}
    seen: dict[Path, str] = {}
    for flag, path in chosen.items():
        if str(path) == "-":  # not a file named "-" beside the user's files
            msg = "'-' (standard output) is not supported: give the file to write"
            raise SpecError(msg, source="command line", field=flag)
        inputs = () if plan_file is None else (plan_file,)
        check_output_path(path, flag=flag, force=force, inputs=inputs)
        key = path.resolve()
        if key in seen:
            msg = f"{path} is also the {seen[key]} file; give each output its own path"
            raise SpecError(msg, source="command line", field=flag)
        seen[key] = flag
    return chosen


#: GIL switch interval for the server process (CPython's default is 0.005 s).
SERVER_SWITCH_INTERVAL_S = 0.001


@app.command("serve")
def serve_cmd(
    host: Annotated[
        str, typer.Option(help="Interface to bind (localhost by default; 0.0.0.0 exposes it).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help=(
                "Host name clients use to reach the server (repeatable); localhost, 127.0.0.1 "
                "and ::1 always."
            ),
        ),
    ] = None,
    catalog_dir: Annotated[
        list[Path] | None, typer.Option("--catalog", help="Overlay catalog directory (own rates).")
    ] = None,
) -> None:
    """Run the web calculator and the JSON API (docs at /docs)."""
    if not 0 < port < 65536:
        msg = f"must be between 1 and 65535 (got {port})"
        raise SpecError(msg, source="command line", field="--port")
    try:
        import uvicorn  # noqa: F401 - checked here; web._server runs it

        from trainbill.web import create_app
    except ImportError as exc:
        msg = (
            f"the web server needs the 'web' extra ({exc.name} is missing): pip install "
            "'trainbill[web]'"
        )
        raise TrainbillError(msg) from None
    from trainbill.web._guard import LOCAL_HOSTS

    # The bound address itself is a name clients use (http://10.0.0.5:8000/); a wildcard is not.
    bound = [] if host in {"0.0.0.0", "::", ""} else [host]
    hosts = (*LOCAL_HOSTS, *bound, *(allowed_host or ()))
    application = create_app(
        catalog=catalog_from_options(catalog_dir), allowed_hosts=hosts, listen_host=host
    )
    _check_bindable(host, port)
    console.print(f"trainbill: serving on http://{host}:{port}/ (API docs at /docs); Ctrl-C stops")
    # The event loop (liveness, admission, body reads) shares the GIL with the worker threads
    # running heavy requests; at CPython's default 5 ms switch interval each of the loop's many
    # short GIL acquisitions can wait a full slice behind a NumPy-heavy planner thread. 1 ms
    # keeps /healthz well under a second with the heavy slots full (benchmarks/web_load.py).
    sys.setswitchinterval(SERVER_SWITCH_INTERVAL_S)
    from trainbill.web._server import serve

    serve(application, host=host, port=port)


def _check_bindable(host: str, port: int) -> None:
    """Bind once before announcing the server, so a typo'd host or a port in use is a one-line
    error naming the option (uvicorn would log it after "serving on …" was printed)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        msg = (
            f"cannot resolve {host!r} ({exc.strerror}); give an interface address such as "
            "127.0.0.1 or 0.0.0.0"
        )
        raise SpecError(msg, source="command line", field="--host") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            msg = (
                f"cannot listen on {host}:{port} ({exc.strerror}); is another server using the "
                "port?"
            )
            raise SpecError(msg, source="command line", field="--port") from None
