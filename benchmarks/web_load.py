"""Loopback load test of ``trainbill serve``: ``python benchmarks/web_load.py [--heavy 40]``.

Starts the real server (``python -m trainbill serve``) on 127.0.0.1 at a free port in its own
process, then, every phase bounded in request count and time (the server is stopped at the end):

0. the forecast's two regimes (issue #44): the *cold* latency of plans the server has not
   seen (each computes its outlook), then 16 concurrent clients repeating one plan (answered
   from the server's kept answers, ``web._answers``) beside the same 16 clients on
   ``GET /healthz``, a trivial endpoint measured in the same run: the ratio of the two rates
   reads the same on a shared machine, where absolute rates do not. Goal: ≥ 300 req/s,
   p99 ≤ 100 ms. Measured twice, each client with its own connection: with httpx (one
   ``AsyncClient`` per client, as 16 users would be; 16 coroutines sharing one client's pool
   measured the pool, p99 ≈ 170 ms on ``/healthz`` too) and with a lean client (``RawClient``:
   a keep-alive socket and a few microseconds of Python per request), whose figures come
   closer to the server's own capacity, as the load generator shares the two cores with it;
1. sequential ``POST /v1/forecast``: requests/s and latency p50/p99;
2. 20 concurrent clients × 5 forecasts each;
3. mixed: ``--heavy`` concurrent ``POST /v1/optimize`` while ``/healthz`` and forecasts are
   polled: how many optimizes ran or were told 503 + Retry-After, and the liveness latency;
4. abusive: 50 clients that open a body and stall, plus an oversized chunked body, while
   ``/healthz`` is polled;
5. soak: mixed load for ``--soak-seconds`` (forecasts over more distinct plans than the server
   keeps answers for, so its store churns; repeats; liveness, ``HEAD``, prices, instances, small
   simulations, refusals, and an optimize every 5 s) with the server's RSS printed at the
   start, every minute (every tenth of a shorter soak) and at the end: flat means no leak.

``--phases 05`` runs only the phases named (default all).

The server's resident memory (``VmRSS``) is printed after every phase.

Traffic goes only to 127.0.0.1. Figures are for this machine (2 shared cores): read ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
FORECAST = {
    "run": {"hours": 72},
    "model": {"params": 70e9},
    "cluster": {"provider": "aws", "region": "us-east-1", "instance": "p5.48xlarge", "nodes": 32},
    "purchase": {"spot_fraction": 0.5},
    "prices": {"as_of": "2025-05-01"},
}
OPTIMIZE = {"plan": FORECAST, "deadline_hours": 200}
PHASE_TIMEOUT_S = 120.0
#: Issue #44's goal for a plan the server has seen, at 16 concurrent clients.
GOAL_RATE, GOAL_P99_MS = 300, 100
#: Requests per lean client in phase 0 (16 × 100: the p99 is then the 16th slowest).
LEAN_PER_CLIENT = 100


class RawClient:
    """One HTTP/1.1 keep-alive connection with next to no client-side work per request.

    Only for this benchmark's own server, whose answers carry ``content-length``: the request
    bytes are prepared once, the answer is read as a head and a counted body."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._io: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def request(self, raw: bytes) -> int:
        """Send one prepared request; the status of its answer (body read and dropped)."""
        if self._io is None:
            self._io = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self._io
        writer.write(raw)
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
            elif name.strip().lower() == b"connection" and value.strip().lower() == b"close":
                self._io = None
        await reader.readexactly(length)
        if self._io is None:
            writer.close()
        return status

    def close(self) -> None:
        if self._io is not None:
            self._io[1].close()
            self._io = None


def raw_request(method: str, path: str, body: object | None = None) -> bytes:
    """The bytes of one request to 127.0.0.1 (a JSON body if given)."""
    head = f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n"
    if body is None:
        return (head + "\r\n").encode()
    data = json.dumps(body).encode()
    head += f"content-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
    return head.encode() + data


async def _raw_clients(
    port: int, n: int, per: int, raw: bytes
) -> tuple[list[float], float, list[int]]:
    """``n`` lean clients sending ``raw`` ``per`` times each: latencies, wall time, statuses."""
    clients = [RawClient(port) for _ in range(n)]
    lat: list[float] = []
    codes: list[int] = []

    async def one(c: RawClient) -> None:
        for _ in range(per):
            t0 = time.perf_counter()
            codes.append(await c.request(raw))
            lat.append(time.perf_counter() - t0)

    start = time.perf_counter()
    try:
        await asyncio.gather(*(one(c) for c in clients))
    finally:
        for c in clients:
            c.close()
    return lat, time.perf_counter() - start, codes


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return (
        ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")
    )


def _line(name: str, lat: list[float], wall: float, extra: str = "") -> None:
    rate = len(lat) / wall if wall > 0 else float("nan")
    print(f"  {name:34} n={len(lat):4d}  {rate:7.1f} req/s  p50 {_pct(lat, 0.5) * 1e3:8.1f} ms  "
          f"p99 {_pct(lat, 0.99) * 1e3:8.1f} ms {extra}")  # fmt: skip


async def _timed(call: Callable[[], Awaitable[httpx.Response]]) -> tuple[float, int]:
    start = time.perf_counter()
    r = await call()
    return time.perf_counter() - start, r.status_code


async def _poll(
    client: httpx.AsyncClient, path: str, stop: asyncio.Event, out: list[float]
) -> None:
    while not stop.is_set():
        dt, _ = await _timed(lambda: client.get(path))
        out.append(dt)
        await asyncio.sleep(0.1)


def _rss_mib(pid: int) -> float:
    """The process's resident memory in MiB (Linux ``/proc``), NaN elsewhere."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _plan(nodes: int) -> dict[str, object]:
    """The benchmark plan at another node count: a plan the server has not seen."""
    return {**FORECAST, "cluster": {**FORECAST["cluster"], "nodes": nodes}}  # type: ignore[dict-item]


async def _clients(
    base: str, n: int, per: int, call: Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]
) -> tuple[list[float], float, list[int]]:
    """``n`` clients, each its own ``httpx.AsyncClient`` (one connection), making ``per`` calls.

    One client each, as ``n`` users would be: 16 coroutines sharing one client's connection
    pool measured the pool (p99 ≈ 170 ms on ``/healthz`` and the forecast alike, against
    ≈ 25 ms with a client each, same server, same run). The clients are made before the clock
    starts: making one (its TLS context) takes tens of milliseconds of CPU, which made the
    first requests of a round the slowest."""
    lat: list[float] = []
    codes: list[int] = []
    clients = [httpx.AsyncClient(base_url=base, timeout=PHASE_TIMEOUT_S) for _ in range(n)]

    async def one(client: httpx.AsyncClient) -> None:
        for _ in range(per):
            dt, code = await _timed(lambda: call(client))
            lat.append(dt)
            codes.append(code)

    start = time.perf_counter()
    try:
        await asyncio.gather(*(one(c) for c in clients))
        return lat, time.perf_counter() - start, codes
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))


def _codes(codes: list[int]) -> str:
    return "(" + ", ".join(f"{c}: {codes.count(c)}" for c in sorted(set(codes))) + ")"


async def _repeat(
    name: str,
    run: Callable[[str, int], Awaitable[tuple[list[float], float, list[int]]]],
    pid: int,
    rounds: int,
    per: int,
) -> None:
    """``/healthz`` and the repeat forecast, 16 clients each, through one kind of client, in
    ``rounds`` alternating rounds of ``per`` requests a client: both endpoints then share the
    machine's quiet and busy moments, so their ratio holds when absolute figures do not."""
    got: dict[str, tuple[list[float], float, list[int]]] = {"healthz": ([], 0.0, []),
                                                            "forecast": ([], 0.0, [])}  # fmt: skip
    for _ in range(rounds):
        for what, (lat, wall, codes) in got.items():
            more, w, c = await run(what, per)
            got[what] = (lat + more, wall + w, codes + c)
    (trivial, t_wall, t_codes), (warm, w_wall, codes) = got["healthz"], got["forecast"]
    _line(f"GET /healthz, 16 {name}", trivial, t_wall, _codes(t_codes))
    _line(f"POST /v1/forecast, repeat, 16 {name}", warm, w_wall, _codes(codes))
    rate, p99 = len(warm) / w_wall, _pct(warm, 0.99) * 1e3
    ratio = rate / (len(trivial) / t_wall)
    met = "met" if rate >= GOAL_RATE and p99 <= GOAL_P99_MS else "NOT met"
    print(f"  {name}: repeat forecast rate / healthz rate {ratio:.2f}, p99 ratio "
          f"{p99 / (_pct(trivial, 0.99) * 1e3):.2f}; goal >= {GOAL_RATE} req/s and p99 <= "
          f"{GOAL_P99_MS} ms {met}: {rate:.0f} req/s, p99 {p99:.1f} ms; "
          f"server RSS {_rss_mib(pid):.0f} MiB")  # fmt: skip


async def _regimes(client: httpx.AsyncClient, pid: int, port: int, base: str) -> None:
    print("0. cold plans, then one plan repeated by 16 clients beside a trivial endpoint")
    cold: list[float] = []
    start = time.perf_counter()
    for nodes in range(2, 22):  # 20 plans the server has not seen
        dt, code = await _timed(lambda n=nodes: client.post("/v1/forecast", json=_plan(n)))  # type: ignore[misc]
        assert code == 200, code
        cold.append(dt)
    _line("POST /v1/forecast, cold plans", cold, time.perf_counter() - start)
    await client.post("/v1/forecast", json=FORECAST)  # seen once
    lean = {"healthz": raw_request("GET", "/healthz"),
            "forecast": raw_request("POST", "/v1/forecast", FORECAST)}  # fmt: skip

    async def by_lean(what: str, per: int) -> tuple[list[float], float, list[int]]:
        return await _raw_clients(port, 16, per, lean[what])

    async def by_httpx(what: str, per: int) -> tuple[list[float], float, list[int]]:
        if what == "healthz":
            return await _clients(base, 16, per, lambda c: c.get("/healthz"))
        return await _clients(base, 16, per, lambda c: c.post("/v1/forecast", json=FORECAST))

    await _repeat("lean clients", by_lean, pid, rounds=4, per=LEAN_PER_CLIENT // 4)
    await _repeat("httpx clients", by_httpx, pid, rounds=4, per=LEAN_PER_CLIENT // 4)


#: Distinct plans the soak rotates over: more than the server keeps answers for
#: (``Limits.forecast_cache_entries``, 256), so its store is full and evicting throughout.
SOAK_PLANS = 400
#: Plans the soak's "repeat" clients ask again and again (always kept).
SOAK_REPEATS = 8


async def _soak_traffic(
    client: httpx.AsyncClient, stop: asyncio.Event, count: dict[str, int]
) -> list[asyncio.Task[None]]:
    """The soak's clients, each looping until ``stop``: their requests counted by status."""

    async def loop(call: Callable[[int], Awaitable[httpx.Response]], pause: float = 0.0) -> None:
        i = 0
        while not stop.is_set():
            try:
                r = await call(i)
                key = str(r.status_code)
            except httpx.HTTPError as exc:
                key = type(exc).__name__
            count[key] = count.get(key, 0) + 1
            i += 1
            if pause:
                await asyncio.sleep(pause)

    bad = {**FORECAST, "run": {"hours": -1}}
    calls: list[tuple[Callable[[int], Awaitable[httpx.Response]], float]] = [
        # New plans, cycling through more than are kept: each one worked out.
        (lambda i: client.post("/v1/forecast", json=_plan(2 + (i * 37) % SOAK_PLANS)), 0.0),
        (lambda i: client.post("/v1/forecast", json=_plan(2 + (i * 53 + 11) % SOAK_PLANS)), 0.0),
        # Repeats, answered from the kept answers.
        (lambda i: client.post("/v1/forecast", json=_plan(2 + i % SOAK_REPEATS)), 0.0),
        (lambda _: client.post("/v1/forecast", json=FORECAST), 0.0),
        (lambda _: client.get("/healthz"), 0.05),
        (lambda _: client.head("/healthz"), 0.2),
        (lambda _: client.get("/v1/prices", params={"provider": "aws", "limit": 50}), 0.2),
        (lambda _: client.get("/v1/instances"), 0.5),
        (lambda i: client.post("/v1/simulate",
                               json={"plan": FORECAST, "trials": 200, "seed": i}), 1.0),
        (lambda _: client.post("/v1/forecast", json=bad), 0.5),  # a 422 each time
        (lambda _: client.get("/no/such/page"), 1.0),  # a 404 each time
        (lambda _: client.post("/v1/optimize", json=OPTIMIZE), 5.0),
    ]  # fmt: skip
    return [asyncio.create_task(loop(call, pause)) for call, pause in calls]


async def _soak(client: httpx.AsyncClient, pid: int, seconds: float) -> None:
    """Mixed load for ``seconds``; the server's RSS at the start, each minute (each tenth of a
    soak under two minutes) and at the end."""
    step = 60.0 if seconds >= 120 else seconds / 10
    print(f"5. soak: mixed load for {seconds:.0f} s (new plans over {SOAK_PLANS}, repeats, "
          "liveness, HEAD, prices, instances, simulations, refusals, an optimize every 5 s); "
          f"server RSS every {step:.0f} s")  # fmt: skip
    stop = asyncio.Event()
    count: dict[str, int] = {}
    start = time.perf_counter()
    samples = [(0.0, _rss_mib(pid))]
    print(f"  t={0:5.0f} s  RSS {samples[0][1]:6.1f} MiB")
    tasks = await _soak_traffic(client, stop, count)
    while (left := seconds - (time.perf_counter() - start)) > 0:
        await asyncio.sleep(min(step - (time.perf_counter() - start) % step, left))
        t = time.perf_counter() - start
        samples.append((t, _rss_mib(pid)))
        done = sum(count.values())
        print(f"  t={t:5.0f} s  RSS {samples[-1][1]:6.1f} MiB  ({done:,} requests so far)")
    stop.set()
    await asyncio.gather(*tasks)
    rss = [x for _, x in samples]
    half = rss[len(rss) // 2 :]
    print(f"  requests by status: {dict(sorted(count.items()))}")
    print(f"  RSS start {rss[0]:.1f}, end {rss[-1]:.1f}, max {max(rss):.1f} MiB; over the "
          f"second half {min(half):.1f}..{max(half):.1f} MiB "
          f"({rss[-1] - half[0]:+.1f} MiB)")  # fmt: skip


async def _sequential(client: httpx.AsyncClient) -> None:
    print("1. sequential forecasts")
    lat: list[float] = []
    start = time.perf_counter()
    for _ in range(30):
        dt, code = await _timed(lambda: client.post("/v1/forecast", json=FORECAST))
        assert code == 200, code
        lat.append(dt)
    _line("POST /v1/forecast", lat, time.perf_counter() - start)


async def _concurrent(base: str) -> None:
    print("2. 20 concurrent clients x 5 forecasts")
    lat, wall, codes = await _clients(base, 20, 5, lambda c: c.post("/v1/forecast", json=FORECAST))
    _line("POST /v1/forecast", lat, wall, _codes(codes))


async def _heavy(client: httpx.AsyncClient, heavy: int) -> None:
    print(f"3. mixed: {heavy} concurrent optimize, healthz and forecasts polled")
    stop = asyncio.Event()
    health: list[float] = []
    fc: list[float] = []
    pollers = [asyncio.create_task(_poll(client, "/healthz", stop, health))]

    async def forecast_poll() -> None:
        while not stop.is_set():
            dt, _ = await _timed(lambda: client.post("/v1/forecast", json=FORECAST))
            fc.append(dt)
            await asyncio.sleep(0.1)

    pollers.append(asyncio.create_task(forecast_poll()))
    start = time.perf_counter()
    results = await asyncio.gather(*(_timed(lambda: client.post("/v1/optimize", json=OPTIMIZE))
                                     for _ in range(heavy)))  # fmt: skip
    wall = time.perf_counter() - start
    stop.set()
    await asyncio.gather(*pollers)
    ok = [dt for dt, code in results if code == 200]
    busy = [dt for dt, code in results if code == 503]
    _line("POST /v1/optimize (ran)", ok, wall)
    _line("POST /v1/optimize (503 busy)", busy, wall)
    _line("GET /healthz under heavy load", health, wall, f"max {max(health) * 1e3:.1f} ms")
    _line("POST /v1/forecast under heavy load", fc, wall)


async def _abusive(client: httpx.AsyncClient) -> None:
    print("4. abusive: 50 stalled bodies + one oversized chunked body")

    async def stalled() -> int:
        async def body() -> AsyncIterator[bytes]:
            yield b'{"run": '
            await asyncio.sleep(30)
            yield b"{}}"

        try:
            r = await client.post(
                "/v1/forecast", content=body(), headers={"content-type": "application/json"}
            )
            return r.status_code
        except httpx.HTTPError:
            return -1

    async def oversized() -> int:
        async def body() -> AsyncIterator[bytes]:
            for _ in range(100):
                yield b"x" * 4096

        try:
            r = await client.post(
                "/v1/forecast", content=body(), headers={"content-type": "application/json"}
            )
        except httpx.HTTPError:
            return -1  # the server answered 413 and closed while the client was still sending
        return r.status_code

    stop = asyncio.Event()
    health: list[float] = []
    poller = asyncio.create_task(_poll(client, "/healthz", stop, health))
    start = time.perf_counter()
    codes = await asyncio.gather(*(stalled() for _ in range(50)), oversized())
    wall = time.perf_counter() - start
    stop.set()
    await poller
    print(
        f"  stalled bodies answered: {sorted(set(codes[:-1]))} (-1: closed by the server "
        f"after its 408) in {wall:.1f} s; oversized chunked: "
        f"{codes[-1] if codes[-1] > 0 else 'closed by the server mid-upload (413 sent)'}"
    )
    _line("GET /healthz during abuse", health, wall, f"max {max(health) * 1e3:.1f} ms")


async def _phases(base: str, port: int, pid: int, args: argparse.Namespace) -> None:
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
    async with httpx.AsyncClient(base_url=base, timeout=PHASE_TIMEOUT_S, limits=limits) as client:
        print(f"  server RSS at start {_rss_mib(pid):.0f} MiB")
        steps: dict[str, Callable[[], Awaitable[None]]] = {
            "0": lambda: _regimes(client, pid, port, base),
            "1": lambda: _sequential(client),
            "2": lambda: _concurrent(base),
            "3": lambda: _heavy(client, args.heavy),
            "4": lambda: _abusive(client),
            "5": lambda: _soak(client, pid, args.soak_seconds),
        }
        for name, step in steps.items():
            if name in args.phases and (name != "5" or args.soak_seconds > 0):
                await step()
                print(f"  server RSS {_rss_mib(pid):.0f} MiB")


def main(argv: list[str] | None = None) -> int:
    """Start the server, run the phases, stop the server."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heavy", type=int, default=40, help="concurrent optimize requests in phase 3")
    ap.add_argument("--soak-seconds", "--mixed-seconds", type=float, default=60.0,
                    help="soak (mixed load) length; 300 for the issue's five minutes")  # fmt: skip
    ap.add_argument("--phases", default="012345", help="which phases to run, e.g. 05")
    args = ap.parse_args(argv)
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in the finally
    server = subprocess.Popen(
        [sys.executable, "-m", "trainbill", "serve", "--port", str(port)],
        # A file, not a pipe: a pipe nobody reads would stall the server once full.
        env=env, stdout=subprocess.DEVNULL, stderr=log, text=True,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                log.seek(0)
                print("server did not start:", log.read()[-2000:])
                return 1
            time.sleep(0.2)
        print(f"trainbill serve on {base} (pid {server.pid})")
        phases = _phases(base, port, server.pid, args)
        asyncio.run(asyncio.wait_for(phases, timeout=6 * PHASE_TIMEOUT_S + args.soak_seconds))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.seek(0)
        lines = log.read().splitlines()
        log.close()
        print(f"server stderr: {len(lines)} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
