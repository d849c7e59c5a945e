"""HTTP plumbing for price updates: bounded retries, streaming lines, validated JSON.

Price endpoints throttle (Azure answers 429 when paged too fast), time out on multi-hundred-MB
AWS files and occasionally return HTML error pages with status 200, so every call goes through
one place that retries what is worth retrying, turns the rest into ``PriceUpdateError`` with the
URL (never the API key) in the message, and checks that a streamed download arrived whole.
``sleep`` is injected so tests exercise the backoff without waiting.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx

from trainbill.prices._errors import PriceUpdateError

__all__ = ["USER_AGENT", "Http", "expect", "new_client"]

USER_AGENT = "trainbill-prices/0.1 (+https://github.com/trainbill)"
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


def new_client(*, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """An ``httpx.Client`` with finite timeouts (a hung socket must not hang the CLI)."""
    return httpx.Client(
        timeout=httpx.Timeout(30.0, read=120.0),
        follow_redirects=True,
        headers={"User-Agent": USER_AGENT},
        transport=transport,
    )


def _public(url: httpx.URL | str) -> str:
    """The URL without its query string, so API keys never reach an error message."""
    return str(httpx.URL(str(url)).copy_with(query=None))


class Http:
    """GET with bounded exponential backoff on 429, 5xx, timeouts and connection errors.

    Args:
        client: the ``httpx.Client`` to use (tests pass one built on ``httpx.MockTransport``).
        attempts: total tries per request, first one included.
        backoff_s: first wait; doubles on each retry, capped at ``max_backoff_s``. A numeric
            ``Retry-After`` header is honoured up to the same cap.
        sleep: called with the wait in seconds (injectable so tests run instantly).
    """

    def __init__(
        self,
        client: httpx.Client,
        *,
        attempts: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if attempts < 1:
            msg = f"attempts must be >= 1, got {attempts}"
            raise ValueError(msg)
        self.client = client
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.sleep = sleep

    def _wait(self, attempt: int, response: httpx.Response | None) -> float:
        wait = min(self.backoff_s * 2.0**attempt, self.max_backoff_s)
        if response is not None:
            header = response.headers.get("Retry-After", "")
            with contextlib.suppress(ValueError):
                wait = min(max(float(header), 0.0), self.max_backoff_s)
        return wait

    def _give_up(self, url: str, why: str) -> PriceUpdateError:
        return PriceUpdateError(
            f"GET {_public(url)} failed after {self.attempts} attempt(s): {why}. "
            "The price cache was not changed; try again later."
        )

    def _open(self, url: str, params: Mapping[str, str] | None) -> httpx.Response:
        """Send a streamed GET, retrying until a non-retryable status arrives."""
        why = ""
        for attempt in range(self.attempts):
            response: httpx.Response | None = None
            try:
                request = self.client.build_request("GET", url, params=params)
                response = self.client.send(request, stream=True)
            except httpx.TimeoutException as exc:
                why = f"timed out ({type(exc).__name__})"
            except httpx.TransportError as exc:
                why = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code not in _RETRY_STATUS:
                    if response.is_error:
                        response.read()
                        response.close()
                        raise PriceUpdateError(
                            f"GET {_public(response.request.url)} returned HTTP "
                            f"{response.status_code}: {response.text[:200]!r}"
                        )
                    return response
                why = f"HTTP {response.status_code}"
                response.close()
            if attempt + 1 < self.attempts:
                self.sleep(self._wait(attempt, response))
        raise self._give_up(url, why)

    def get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any:
        """GET a JSON document; malformed JSON is an error naming the URL and position."""
        for attempt in range(self.attempts):
            response = self._open(url, params)
            try:
                body = response.read()
            except httpx.TimeoutException:
                response.close()
                if attempt + 1 < self.attempts:
                    self.sleep(self._wait(attempt, None))
                    continue
                raise self._give_up(url, "timed out reading the body") from None
            except httpx.TransportError as exc:
                response.close()
                raise PriceUpdateError(
                    f"download of {_public(url)} was cut off: {exc}. The price cache was not "
                    "changed."
                ) from None
            finally:
                response.close()
            try:
                return json.loads(body)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise PriceUpdateError(
                    f"{_public(url)}: response is not valid JSON ({exc}); "
                    f"first bytes: {body[:80]!r}. The price cache was not changed."
                ) from None
        raise self._give_up(url, "timed out reading the body")  # pragma: no cover

    def stream_lines(self, url: str) -> Iterator[str]:
        """Yield a text download line by line without holding it in memory.

        Raises ``PriceUpdateError`` if the connection drops or fewer bytes arrive than
        ``Content-Length`` announced: a truncated price file must never be taken as complete.
        """
        response = self._open(url, None)
        # A body already in memory (some transports pre-read small bodies) was not counted
        # by ``num_bytes_downloaded`` and cannot be cut off any more.
        preloaded = response.is_stream_consumed
        try:
            try:
                yield from response.iter_lines()
            except httpx.HTTPError as exc:
                raise PriceUpdateError(
                    f"download of {_public(url)} was cut off after "
                    f"{response.num_bytes_downloaded} bytes ({type(exc).__name__}: {exc}). "
                    "The price cache was not changed."
                ) from None
            expected = response.headers.get("Content-Length")
            if (
                not preloaded
                and expected is not None
                and expected.isdigit()
                and response.num_bytes_downloaded != int(expected)
            ):
                raise PriceUpdateError(
                    f"download of {_public(url)} is truncated: got "
                    f"{response.num_bytes_downloaded} of {expected} bytes. "
                    "The price cache was not changed."
                )
        finally:
            response.close()


def expect(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    """Check a decoded JSON value's type, naming where it was found when it is wrong."""
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise PriceUpdateError(
            f"{where}: expected {names}, got {type(value).__name__} "
            f"({json.dumps(value)[:80] if value is not None else 'null'})"
        )
    return value
