"""The server's own caps: what one request may send and occupy (``create_app(limits=...)``)."""

from __future__ import annotations

from trainbill._record import record
from trainbill.spec import MAX_AXIS_VALUES

__all__ = ["LIMITS", "Limits"]


@record
class Limits:
    """Caps that keep one request from occupying the server."""

    max_body_bytes: int = 64 * 1024
    max_trials: int = 20_000
    #: Planner work grows with instance types × node counts (each pair costs a few exact
    #: ``usage_for`` calls); the rest of the grid is vectorized. The default search (every
    #: catalog instance, 14 node counts) is 25 × 14 = 350 pairs, about a second.
    max_search_cells: int = 512
    max_axis_values: int = MAX_AXIS_VALUES
    max_price_rows: int = 1000
    #: Calibration documents in one calibrated forecast (a profile and a few bills' fits).
    max_calibrations: int = 8
    #: A plan's ``cluster.nodes`` (and each extra group's ``count``), as for ``space.nodes``.
    max_nodes: int = 100_000
    max_gpus: int = 1_000_000
    #: A forecast wall-clock above this (about 114 years) is a typo, not a plan; past it the
    #: Monte Carlo and the planner's fits stop being computable.
    max_wall_hours: float = 1e6
    #: A body not fully received within this many seconds is answered 408 (300 clients that
    #: opened a body and never finished it were all held open).
    body_timeout_s: float = 10.0
    #: Simulate/optimize/sizing/report running at once, and waiting behind them; past both, 503.
    #: Two running matches the two cores of the reference machine: more only shares them.
    heavy_workers: int = 2
    heavy_queue: int = 8
    #: Every other /v1 request (forecast, charts, prices), on capacity of its own.
    light_workers: int = 8
    light_queue: int = 64
    #: What a 503 tells the client to wait, in seconds (about one heavy request's time).
    retry_after_s: int = 2
    #: A request's headers not complete this many seconds after the connection opened (or
    #: after its previous response): the connection is closed. A client sending headers at
    #: 1 byte/s held its connection forever.
    header_timeout_s: float = 10.0
    #: An idle keep-alive connection is closed after this many seconds.
    keep_alive_s: float = 5.0
    #: Open connections at most; also kept ``fd_reserve`` + ``backlog`` below the process's
    #: open-file limit (``web._server.connection_cap``). Past it the longest-idle connection is
    #: closed for the new one, or, when every connection is busy, the new one gets a 503.
    max_connections: int = 1000
    fd_reserve: int = 128
    #: Connections the kernel queues, and the most asyncio accepts in one go.
    backlog: int = 64
    #: Log lines of one kind (logger + message template) per ``log_window_s``; the rest are
    #: counted and summarised once (1,100 sockets at the file limit wrote 142,539 tracebacks).
    log_lines_per_window: int = 5
    log_window_s: float = 60.0
    #: Distinct (plan, catalog, day) forecasts whose answer is kept (``/v1/forecast``).
    forecast_cache_entries: int = 256


LIMITS = Limits()
