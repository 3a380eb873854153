"""The media type of request bodies: an operation that reads a JSON body refuses a body of any
other media type (or of none named) with 415 before the body is validated, instead of reading
the text as a JSON document it is not."""

from __future__ import annotations

import email.message

from fastapi import Request
from starlette.exceptions import HTTPException

JSON = "application/json"


def is_json(content_type: str) -> bool:
    """``application/json`` or ``application/*+json``, with any parameters (``charset=utf-8``):
    the media types FastAPI parses as JSON."""
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json"))


async def json_body(request: Request) -> None:
    """An app-wide dependency (it runs before the body is validated): a non-empty body sent to
    an operation that takes JSON must say it is JSON, else 415. Operations without a body and
    requests without one pass."""
    route = request.scope.get("route")
    declared = list((getattr(route, "openapi_extra", None) or {})
                     .get("requestBody", {}).get("content", {}))  # a route reading its body
    if getattr(route, "body_field", None) is None and not declared:
        return
    content_type = request.headers.get("content-type")
    if content_type is not None and (is_json(content_type) or content_type.split(";")[0]
                                     .strip().lower() in declared):
        return
    if not await request.body():  # read once by FastAPI already; a missing body is a 422
        return
    accepted = " or ".join(declared or [JSON])
    sent = f"not {content_type}" if content_type else "no Content-Type was sent"
    headers = {"Accept-Post": ", ".join(declared or [JSON])} if request.method == "POST" else {}
    raise HTTPException(415, detail=f"the body must be {accepted} ({sent})", headers=headers)
