"""How ``trainbill serve`` holds its sockets: header and idle timeouts, a connection cap below
the open-file limit, rate-limited logs.

uvicorn's own settings leave four holes, each reproduced (issue #44):

* **No header timeout.** A client sending its request headers at 1 byte/s, or connecting and
  sending nothing, held its connection forever (uvicorn's keep-alive timer only starts after
  a response). ``GuardedH11Protocol`` arms a deadline (``Limits.header_timeout_s``) when the
  connection opens and after every response, and only a complete request head disarms it.
* **No connection cap that protects the file limit.** ``limit_concurrency`` answers 503 only
  once a request arrives, so idle sockets piled up to the open-file limit; then ``accept()``
  failed with EMFILE, ``/healthz`` stopped answering and asyncio logged a traceback per try.
  Here a new connection past ``connection_cap`` closes the longest-idle one (a socket that
  sends nothing is the cheapest to drop), or, when every connection is working, is answered
  503 and closed at once; the cap stays below the open-file limit by the accept burst
  (``backlog``) and a reserve, so ``accept()`` always has a descriptor.
* **Unbounded logs.** ``RateLimitFilter`` lets ``log_lines_per_window`` lines of one kind
  through per window and says how many it dropped.

And one for latency: everything alive when the server starts (the app, the catalog, the
imported library) lives as long as the process, yet every full garbage collection scanned it
again, about 30 ms each on the reference machine, a pause for every request in flight.
``serve`` moves it out of the collector's sight (``gc.freeze``) before the first request, so
a collection scans only what requests made.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import resource
import threading
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from trainbill.web.limits import LIMITS, Limits

__all__ = ["GuardedH11Protocol", "RateLimitFilter", "connection_cap", "protocol_for", "serve"]

_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"retry-after: 2\r\nconnection: close\r\ncontent-length: 41\r\n\r\n"
    b"server busy: too many open connections.\r\n"
)


def connection_cap(limits: Limits = LIMITS) -> int:
    """Connections to hold at most: the configured cap, kept below the soft open-file limit
    by the accept burst and a reserve for files, logs and the event loop's own descriptors."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return limits.max_connections
    return max(8, min(limits.max_connections, soft - limits.fd_reserve - limits.backlog))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a header deadline and the connection cap."""

    limits: Limits = LIMITS
    cap: int = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._idle_since = time.monotonic()
        self._deadline: asyncio.TimerHandle | None = None
        if len(self.connections) > self.cap and not self._evict_one():
            transport.write(_BUSY)
            transport.close()
            return
        self._arm()

    def _busy(self) -> bool:
        cycle = getattr(self, "cycle", None)  # None until the first request head
        return cycle is not None and not cycle.response_complete

    def _evict_one(self) -> bool:
        """Close the longest-idle other connection; False when every one is working."""
        idle = [
            c
            for c in self.connections
            if c is not self and isinstance(c, GuardedH11Protocol) and not c._busy()
        ]
        if not idle:
            return False
        oldest = min(idle, key=lambda c: c._idle_since)
        oldest._close()
        self.connections.discard(oldest)
        return True

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.limits.header_timeout_s, self._late)

    def _disarm(self) -> None:
        if getattr(self, "_deadline", None) is not None:
            assert self._deadline is not None
            self._deadline.cancel()
            self._deadline = None

    def _late(self) -> None:
        """No complete request head in time: close (a request in progress is left alone)."""
        self._deadline = None
        if not self._busy():
            self._close()

    def _close(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            if self.conn.our_state in (h11.IDLE, h11.DONE):
                with contextlib.suppress(h11.LocalProtocolError):
                    self.conn.send(h11.ConnectionClosed())
            self.transport.close()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before:  # a complete request head: its own timeouts apply now
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._idle_since = time.monotonic()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def protocol_for(limits: Limits) -> type[GuardedH11Protocol]:
    """The protocol class with ``limits`` and the connection cap of this process."""
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {"limits": limits, "cap": connection_cap(limits)},
    )


class RateLimitFilter(logging.Filter):
    """At most ``per_window`` records of one kind (logger, message template) per window; the
    number dropped is added to the next record of that kind let through."""

    def __init__(self, per_window: int, window_s: float) -> None:
        super().__init__()
        self.per_window = per_window
        self.window_s = window_s
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str], list[float]] = {}  # kind -> [start, count, dropped]

    def filter(self, record: logging.LogRecord) -> bool:
        kind = (record.name, str(record.msg)[:200])
        now = time.monotonic()
        with self._lock:
            if len(self._seen) > 1000:  # bounded: kinds are templates, not values
                self._seen.clear()
            state = self._seen.setdefault(kind, [now, 0.0, 0.0])
            if now - state[0] >= self.window_s:
                state[0], state[1] = now, 0.0
            state[1] += 1
            if state[1] > self.per_window:
                state[2] += 1
                return False
            dropped, state[2] = int(state[2]), 0.0
        if dropped:
            record.msg = f"{record.msg} ({dropped} similar lines dropped)"
        # A traceback per line is what filled 58 MB: keep the first line of the exception.
        if record.exc_info and state[1] > 1:
            exc = record.exc_info[1]
            record.msg = f"{record.msg}: {type(exc).__name__}: {exc}"
            record.exc_info = None
            record.exc_text = None
        return True


def _limit_logs(limits: Limits) -> None:
    flt = RateLimitFilter(limits.log_lines_per_window, limits.log_window_s)
    for name in ("asyncio", "uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RateLimitFilter) for f in logger.filters):
            logger.addFilter(flt)


def serve(app: Any, *, host: str, port: int, limits: Limits = LIMITS) -> None:
    """Run ``app`` with uvicorn, its sockets held as the module docstring says."""
    import uvicorn

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol_for(limits),
        timeout_keep_alive=int(max(1, limits.keep_alive_s)),
        backlog=limits.backlog,
        log_level="warning",
    )
    server = uvicorn.Server(config)
    config.load()  # configures logging; the filters go on after it
    _limit_logs(limits)
    gc.collect()  # what start-up left as garbage is freed, not frozen
    gc.freeze()
    server.run()
