"""HTTP plumbing: retry with backoff on 429/5xx/timeouts, JSON validation, truncated streams."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from trainbill.prices import PriceUpdateError

httpx = pytest.importorskip("httpx")

URL = "https://example.test/prices.json"


def test_retries_429_with_exponential_backoff(rec: Any) -> None:
    """Two 429s then 200: waits 1 s then 2 s (backoff 1 s, doubling) and returns the body."""
    rec.add(
        URL,
        lambda r: httpx.Response(429),
        lambda r: httpx.Response(429),
        lambda r: httpx.Response(200, json={"ok": 1}),
    )
    assert rec.http().get_json(URL) == {"ok": 1}
    assert rec.sleeps == [1.0, 2.0]


def test_retry_after_header_is_honoured(rec: Any) -> None:
    """A numeric Retry-After (7 s) replaces the computed backoff."""
    rec.add(
        URL,
        lambda r: httpx.Response(429, headers={"Retry-After": "7"}),
        lambda r: httpx.Response(200, json=[]),
    )
    assert rec.http().get_json(URL) == []
    assert rec.sleeps == [7.0]


def test_gives_up_after_bounded_attempts(rec: Any) -> None:
    """Persistent 503: 3 attempts, 2 waits (1 s, 2 s), then a clear error naming the URL."""
    rec.add(URL, lambda r: httpx.Response(503))
    with pytest.raises(
        PriceUpdateError, match=r"example\.test/prices\.json failed after 3 attempt\(s\): HTTP 503"
    ):
        rec.http(attempts=3).get_json(URL)
    assert rec.sleeps == [1.0, 2.0]
    assert len(rec.requests) == 3


def test_timeout_is_retried(rec: Any) -> None:
    """A read timeout on the first try is retried; the second answer is used."""

    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    rec.add(URL, timeout, lambda r: httpx.Response(200, json={"n": 2}))
    assert rec.http().get_json(URL) == {"n": 2}
    assert rec.sleeps == [1.0]


def test_timeouts_exhausted(rec: Any) -> None:
    """Only timeouts: the error says so after the last attempt."""

    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("timed out", request=request)

    rec.add(URL, timeout)
    with pytest.raises(PriceUpdateError, match="timed out"):
        rec.http(attempts=2).get_json(URL)


def test_client_error_is_not_retried(rec: Any) -> None:
    """HTTP 403 (bad key) fails at once with the status; the API key is not echoed."""
    rec.add(URL, lambda r: httpx.Response(403, text="API key not valid"))
    with pytest.raises(PriceUpdateError, match="HTTP 403") as err:
        rec.http().get_json(URL, {"key": "SECRET123"})
    assert "SECRET123" not in str(err.value)
    assert rec.sleeps == []


def test_malformed_json(rec: Any) -> None:
    """An HTML error page with status 200 is a clear 'not valid JSON' error."""
    rec.add(URL, lambda r: httpx.Response(200, text="<html>Service Unavailable</html>"))
    with pytest.raises(PriceUpdateError, match=r"response is not valid JSON.*<html>"):
        rec.http().get_json(URL)


class _CutStream(httpx.SyncByteStream):
    """Yields some bytes, then drops the connection like a server dying mid-download."""

    def __iter__(self) -> Iterator[bytes]:
        yield b"a,b\n1,2\n"
        raise httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body"
        )


def test_stream_cut_off_mid_download(rec: Any) -> None:
    """A dropped connection mid-stream is an error naming the URL and bytes received (8)."""
    rec.add(URL, lambda r: httpx.Response(200, stream=_CutStream()))
    lines = rec.http().stream_lines(URL)
    with pytest.raises(PriceUpdateError, match=r"cut off after 8 bytes"):
        list(lines)


def test_stream_shorter_than_content_length(rec: Any) -> None:
    """Fewer bytes than Content-Length announced (8 of 100) is reported as truncated."""

    class Short(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield b"a,b\n1,2\n"

    rec.add(URL, lambda r: httpx.Response(200, headers={"Content-Length": "100"}, stream=Short()))
    with pytest.raises(PriceUpdateError, match="truncated: got 8 of 100 bytes"):
        list(rec.http().stream_lines(URL))


def test_stream_lines_whole_file(rec: Any) -> None:
    """A complete download yields every line, without line endings."""
    rec.add(URL, lambda r: httpx.Response(200, content=b"a,b\r\n1,2\n3,4"))
    assert list(rec.http().stream_lines(URL)) == ["a,b", "1,2", "3,4"]
