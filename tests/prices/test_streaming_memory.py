"""The EC2 offer CSV is streamed: memory stays flat however large the file is."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from trainbill.prices import aws
from trainbill.prices._http import Http

httpx = pytest.importorskip("httpx")

DATA = Path(__file__).resolve().parents[1] / "data" / "prices" / "aws" / "ec2_us-east-1.csv"


@pytest.mark.slow
def test_large_offer_file_streams_in_bounded_memory() -> None:
    """A ~60 MB synthetic offer file (fixture m5.large row x 200,000) parses with < 16 MB peak.

    Holding the file would need > 60 MB; the parser keeps only matching rows (the fixture's 3).
    """
    lines = DATA.read_bytes().splitlines(keepends=True)
    head, rows = b"".join(lines[:6]), lines[6:]
    filler = next(r for r in rows if b"m5.large" in r)
    copies = 200_000
    size = len(head) + len(filler) * copies + sum(len(r) for r in rows)

    class Big(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield head
            chunk = filler * 1000
            for _ in range(copies // 1000):
                yield chunk
            yield b"".join(rows)

    client = httpx.Client(transport=httpx.MockTransport(
        lambda r: httpx.Response(200, headers={"Content-Length": str(size)}, stream=Big())
    ))  # fmt: skip
    tracemalloc.start()
    t0 = time.perf_counter()
    got = aws.parse_ec2_offer_csv(
        Http(client).stream_lines("https://x.test/index.csv"),
        region="us-east-1",
        today=date(2026, 12, 2),
        url="x",
    )
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert size > 60e6
    assert {p.item for p in got.points} == {"p5.48xlarge", "p4d.24xlarge", "trn1.32xlarge"}
    assert peak < 16e6, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB file ({elapsed:.1f} s)"
    print(
        f"streamed {size / 1e6:.0f} MB in {elapsed:.1f} s, peak traced memory {peak / 1e6:.2f} MB"
    )
