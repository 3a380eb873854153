"""The client's exceptions: every error answer of the API (an ``application/problem+json`` body)
becomes one typed exception, and a request that got no answer becomes a `TransportError`.

    APIError                    any error; ``status``, ``title``, ``detail``, ``body`` (the Problem)
    ├── InvalidInputError       400 / 422: ``field`` names the input at fault, ``errors`` lists each
    │   └── TooLargeError       413: more than one request may carry or cost; send less
    ├── AuthenticationError     401: no API key, or an unknown one
    ├── PermissionDeniedError   403: the key may not do this; ``field`` names the owner it named
    ├── NotFoundError           404: nothing with this id for this tenant (or no such route)
    ├── ConflictError           409: an id already stored with other content; nothing written
    ├── RateLimitError          429: the key's rate is spent; nothing was done (retried for you)
    ├── UnavailableError        503: the server cannot reach its store; retry later
    ├── ServerError             500 and other 5xx: see the server's log
    └── TransportError          no answer: the connection failed or was lost
        └── TransportTimeout    no answer in time

The names are the client's own (``...Error``, as HTTP clients name theirs), apart from the
library's tree (`graphmem.errors`), so code that imports both never mistakes one for the other.
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import ValidationError

from graphmem.wire import MAX_ERRORS, Problem, ProblemItem, field_name


class APIError(Exception):
    """An error answer of the graphmem API, or no answer (`TransportError`, ``status`` None)."""

    def __init__(self, detail: str, *, status: int | None = None, title: str = "error",
                 body: Problem | None = None, response: httpx.Response | None = None) -> None:
        super().__init__(f"{status} {title}: {detail}" if status else detail)
        self.detail = detail
        self.status = status
        self.title = title
        self.body = body
        self.response = response


class InvalidInputError(APIError):
    """Bad input: ``field`` names it (``messages[3].timestamp``), ``errors`` lists every wrong
    input. Raised before sending, too, when a request model does not validate."""

    @property
    def field(self) -> str | None:
        return self.body.field if self.body else None

    @property
    def errors(self) -> list[ProblemItem]:
        return self.body.errors if self.body else []


class TooLargeError(InvalidInputError):
    """Over a size or work limit of one request (413): nothing was written."""


class AuthenticationError(APIError):
    pass


class PermissionDeniedError(APIError):
    """The key may not do this: another owner than its own (``field`` names the input), a
    write with a read-only key, or a call spanning the tenant with a key for some owners."""

    @property
    def field(self) -> str | None:
        return self.body.field if self.body else None


class NotFoundError(APIError):
    pass


class ConflictError(APIError):
    pass


class UnavailableError(APIError):
    """503: the server cannot reach Neo4j (``retry_after`` seconds, if it said)."""

    @property
    def retry_after(self) -> float | None:
        return retry_after(self.response) if self.response is not None else None


class RateLimitError(APIError):
    """429: the key sent more requests than its rate allows; nothing was done. The client
    sends it again after ``retry_after`` seconds, up to its retries, before raising this."""

    @property
    def retry_after(self) -> float | None:
        return retry_after(self.response) if self.response is not None else None


class ServerError(APIError):
    pass


class TransportError(APIError):
    """No answer: connection refused, reset or lost (the httpx error is ``__cause__``)."""


class TransportTimeout(TransportError):
    pass


BY_STATUS: dict[int, type[APIError]] = {
    400: InvalidInputError, 401: AuthenticationError, 403: PermissionDeniedError,
    404: NotFoundError, 409: ConflictError, 413: TooLargeError, 422: InvalidInputError,
    429: RateLimitError, 503: UnavailableError,
}


def from_response(response: httpx.Response) -> APIError:
    """The exception for an error answer; its problem+json body parsed when there is one."""
    status = response.status_code
    cls = BY_STATUS.get(status, ServerError if status >= 500 else APIError)
    body: Problem | None = None
    try:
        data: Any = response.json()
        if isinstance(data, dict):
            body = Problem.model_validate({"status": status, "title": "", "detail": "", **data})
    except (ValueError, ValidationError):
        body = None
    if body is None:
        text = response.text.strip()[:500] or response.reason_phrase
        return cls(text, status=status, title=response.reason_phrase.lower(), response=response)
    title = body.title or response.reason_phrase.lower()
    return cls(body.detail or title, status=status, title=title, body=body, response=response)


def from_validation(exc: ValidationError) -> InvalidInputError:
    """A request model that did not validate before sending, as the server would have said it
    (422, ``field`` like ``messages[0].timestamp``)."""
    found = exc.errors()
    items = [ProblemItem(field=field_name(e["loc"]), problem=e["msg"])
             for e in found[:MAX_ERRORS]]
    items = items or [ProblemItem(field="body", problem=str(exc))]
    detail = "; ".join(f"{i.field}: {i.problem}" for i in items[:5])
    if len(found) > len(items):
        detail += f" (and {len(found) - len(items)} more errors)"
    body = Problem(title="invalid input", status=422, detail=detail, field=items[0].field,
                   errors=items, error_count=len(found))
    return InvalidInputError(detail, status=422, title="invalid input", body=body)




def retry_after(response: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds (the delay form only), else None."""
    value = response.headers.get("Retry-After", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
