"""Loopback load test of ``trainbill serve``: ``python benchmarks/web_load.py [--heavy 40]``.

Starts the real server (``python -m trainbill serve``) on 127.0.0.1 at a free port in its own
process, then, every phase bounded in request count and time (the server is stopped at the end):

0. the forecast's two regimes (issue #44): the *cold* latency of plans the server has not
   seen (each computes its outlook), then 16 concurrent clients repeating one plan (answered
   from the server's LRU of forecasts) beside the same 16 clients on ``GET /healthz``, a
   trivial endpoint measured in the same run: the ratio of the two rates reads the same on a
   shared machine, where absolute rates do not. Goal: ≥ 300 req/s, p99 ≤ 100 ms;
1. sequential ``POST /v1/forecast``: requests/s and latency p50/p99;
2. 20 concurrent clients × 5 forecasts each;
3. mixed: ``--heavy`` concurrent ``POST /v1/optimize`` while ``/healthz`` and forecasts are
   polled: how many optimizes ran or were told 503 + Retry-After, and the liveness latency;
4. abusive: 50 clients that open a body and stall, plus an oversized chunked body, while
   ``/healthz`` is polled;
5. mixed load for ``--mixed-seconds`` (forecasts of 40 rotating plans, liveness, an optimize
   now and then) with the server's RSS sampled every tenth of it: flat means no leak.

The server's resident memory (``VmRSS``) is printed after every phase.

Traffic goes only to 127.0.0.1. Figures are for this machine (2 shared cores): read ratios.
"""

from __future__ import annotations

import argparse
import asyncio
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
    n: int, per: int, call: Callable[[], Awaitable[httpx.Response]]
) -> tuple[list[float], float, list[int]]:
    lat: list[float] = []
    codes: list[int] = []

    async def one() -> None:
        for _ in range(per):
            dt, code = await _timed(call)
            lat.append(dt)
            codes.append(code)

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return lat, time.perf_counter() - start, codes


async def _regimes(client: httpx.AsyncClient, pid: int) -> None:
    print("0. cold plans, then one plan repeated by 16 clients beside a trivial endpoint")
    cold: list[float] = []
    start = time.perf_counter()
    for nodes in range(2, 22):  # 20 plans the server has not seen
        dt, code = await _timed(lambda n=nodes: client.post("/v1/forecast", json=_plan(n)))  # type: ignore[misc]
        assert code == 200, code
        cold.append(dt)
    _line("POST /v1/forecast, cold plans", cold, time.perf_counter() - start)
    await client.post("/v1/forecast", json=FORECAST)  # seen once
    trivial, t_wall, _ = await _clients(16, 40, lambda: client.get("/healthz"))
    _line("GET /healthz, 16 clients", trivial, t_wall)
    warm, w_wall, codes = await _clients(16, 40, lambda: client.post("/v1/forecast", json=FORECAST))
    _line("POST /v1/forecast, repeat, 16 clients", warm, w_wall,
          f"(200: {codes.count(200)}, 503: {codes.count(503)})")  # fmt: skip
    ratio = (len(warm) / w_wall) / (len(trivial) / t_wall)
    print(f"  repeat forecast rate / healthz rate: {ratio:.2f}; "
          f"goal >= 300 req/s and p99 <= 100 ms: rate {len(warm) / w_wall:.0f} req/s, "
          f"p99 {_pct(warm, 0.99) * 1e3:.1f} ms; server RSS {_rss_mib(pid):.0f} MiB")  # fmt: skip


async def _mixed(client: httpx.AsyncClient, pid: int, seconds: float) -> None:
    print(f"5. mixed load for {seconds:.0f} s: 8 forecast clients over 40 plans, liveness, "
          "an optimize every 5 s; server RSS (MiB) sampled")  # fmt: skip
    stop = asyncio.Event()
    samples: list[float] = [_rss_mib(pid)]
    count = [0]

    async def forecasts(k: int) -> None:
        i = k
        while not stop.is_set():
            await client.post("/v1/forecast", json=_plan(2 + i % 40))
            count[0] += 1
            i += 7

    async def heavy() -> None:
        while not stop.is_set():
            await client.post("/v1/optimize", json=OPTIMIZE)
            await asyncio.sleep(5)

    tasks = [asyncio.create_task(forecasts(k)) for k in range(8)]
    tasks += [
        asyncio.create_task(_poll(client, "/healthz", stop, [])),
        asyncio.create_task(heavy()),
    ]
    for _ in range(10):
        await asyncio.sleep(seconds / 10)
        samples.append(_rss_mib(pid))
    stop.set()
    await asyncio.gather(*tasks)
    print(
        f"  {count[0]} forecasts; RSS "
        + " ".join(f"{x:.0f}" for x in samples)
        + f"; growth over the second half {samples[-1] - samples[len(samples) // 2]:+.0f} MiB"
    )


async def _phases(base: str, heavy: int, pid: int = 0, mixed_s: float = 60.0) -> None:
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
    async with httpx.AsyncClient(base_url=base, timeout=PHASE_TIMEOUT_S, limits=limits) as client:
        print(f"  server RSS at start {_rss_mib(pid):.0f} MiB")
        await _regimes(client, pid)
        print("1. sequential forecasts")
        lat: list[float] = []
        start = time.perf_counter()
        for _ in range(30):
            dt, code = await _timed(lambda: client.post("/v1/forecast", json=FORECAST))
            assert code == 200, code
            lat.append(dt)
        _line("POST /v1/forecast", lat, time.perf_counter() - start)

        print("2. 20 concurrent clients x 5 forecasts")

        async def worker(out: list[float], codes: list[int]) -> None:
            for _ in range(5):
                dt, code = await _timed(lambda: client.post("/v1/forecast", json=FORECAST))
                out.append(dt)
                codes.append(code)

        lat, codes = [], []
        start = time.perf_counter()
        await asyncio.gather(*(worker(lat, codes) for _ in range(20)))
        _line("POST /v1/forecast", lat, time.perf_counter() - start,
              f"(200: {codes.count(200)}, 503: {codes.count(503)})")  # fmt: skip

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
        health = []
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
        print(f"  server RSS {_rss_mib(pid):.0f} MiB")
        if mixed_s > 0:
            await _mixed(client, pid, mixed_s)


def main(argv: list[str] | None = None) -> int:
    """Start the server, run the phases, stop the server."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heavy", type=int, default=40, help="concurrent optimize requests in phase 3")
    ap.add_argument("--mixed-seconds", type=float, default=60.0,
                    help="mixed-load phase length (300 for the issue's plateau)")  # fmt: skip
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
        phases = _phases(base, args.heavy, server.pid, args.mixed_seconds)
        asyncio.run(asyncio.wait_for(phases, timeout=5 * PHASE_TIMEOUT_S + args.mixed_seconds))
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
