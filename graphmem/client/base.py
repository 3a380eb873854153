"""What the sync and async clients share: their httpx settings, the retry policy, and reading an
answer into the reply model or an exception. No I/O here."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from graphmem import __version__
from graphmem.client.calls import Call
from graphmem.client.errors import TransportError, TransportTimeout, from_response, retry_after

T = TypeVar("T")
DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=5.0)
"""60 s to answer (a full batch of 1000 messages is embedded before the reply), 5 s to connect."""
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Transport errors raised before the request left: safe to retry any request."""


def httpx_options(base_url: str | None, api_key: str | None, timeout: float | httpx.Timeout,
                  headers: dict[str, str] | None) -> dict[str, Any]:
    """Keyword arguments for `httpx.Client` / `httpx.AsyncClient`. The URL and key default to
    the environment's ``GRAPHMEM_URL`` and ``GRAPHMEM_API_KEY``; with neither a URL nor
    ``GRAPHMEM_URL``, a ValueError says what to set (no server is guessed)."""
    url = base_url or os.environ.get("GRAPHMEM_URL")
    if not url:
        raise ValueError("no graphmem server URL: pass base_url (e.g. "
                         "\"http://127.0.0.1:8000\") or set GRAPHMEM_URL, and pass api_key or "
                         "set GRAPHMEM_API_KEY when the server asks for a key")
    key = api_key if api_key is not None else os.environ.get("GRAPHMEM_API_KEY")
    out = {"User-Agent": f"graphmem-python/{__version__}", "Accept": "application/json"}
    if key:
        out["Authorization"] = f"Bearer {key}"
    out.update(headers or {})
    return {"base_url": url, "headers": out, "timeout": timeout}


@dataclass(frozen=True)
class Retry:
    """How often and how long to wait before sending a request again.

    A request is sent again after a connection that never opened or a 429 (the key's rate was
    spent: nothing was read; any request), and after a 503 or a lost answer (only requests safe
    to repeat, `Endpoint.retry`), at most ``retries`` times, waiting ``backoff`` x 2^attempt
    seconds (+-20 % jitter), at least the server's ``Retry-After``, at most ``max_backoff``."""

    retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 8.0

    def delay(self, call: Call[Any], attempt: int,
              outcome: httpx.Response | httpx.TransportError) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None: do not send again."""
        if attempt >= self.retries:
            return None
        wait = self.backoff * 2.0**attempt * random.uniform(0.8, 1.2)
        if isinstance(outcome, httpx.Response):
            if not (outcome.status_code == 429
                    or (outcome.status_code == 503 and call.endpoint.retry)):
                return None
            wait = max(wait, retry_after(outcome) or 0.0)
        elif not isinstance(outcome, NEVER_SENT) and not call.endpoint.retry:
            return None
        return min(wait, self.max_backoff)


def result(call: Call[T], response: httpx.Response) -> T:
    """The reply model of a 2xx answer; else the exception for the error."""
    if response.is_success:
        return call.parse(response.json())
    raise from_response(response)


def no_answer(exc: httpx.TransportError) -> TransportError:
    cls = TransportTimeout if isinstance(exc, httpx.TimeoutException) else TransportError
    return cls(f"no answer: {type(exc).__name__}: {exc}".rstrip(": "))
