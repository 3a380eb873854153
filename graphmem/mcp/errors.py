"""How graphmem's errors reach an MCP client: a tool's as a result with ``isError`` whose text
names the field at fault (`describe`, `tool_errors`; arguments that do not validate too, via
`Server`), a resource's as a JSON-RPC error (`resource_errors`). Nothing a caller sends crashes
the server."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, TextContent
from pydantic import ValidationError

from graphmem.errors import (
    Forbidden,
    GraphMemError,
    InvalidInput,
    NotFound,
    StoreUnavailable,
)
from graphmem.wire import MAX_ERRORS, field_name

Ctx = Context[Any, Any]


def describe(exc: GraphMemError | ValidationError) -> str:
    """The text a client reads for an anticipated error: what went wrong and which field."""
    if isinstance(exc, StoreUnavailable):  # where Neo4j is stays in the server log
        return "store unavailable: Neo4j is unreachable; try again later"
    if isinstance(exc, InvalidInput):
        return f"{exc.title}: {exc.field}: {exc.problem}"
    if isinstance(exc, Forbidden) and exc.field is not None:
        return f"{exc.title}: {exc.field}: {exc.detail}"
    if isinstance(exc, GraphMemError):
        return f"{exc.title}: {exc.detail}"
    found = exc.errors()
    more = f" (and {len(found) - MAX_ERRORS} more errors)" if len(found) > MAX_ERRORS else ""
    return "invalid input: " + "; ".join(
        f"{field_name(e['loc']) if e['loc'] else 'input'}: {e['msg']}"
        for e in found[:MAX_ERRORS]) + more


class Server(MCPServer[Any]):
    """The SDK's server, with errors and results as an agent should read them: arguments that
    do not validate described as every other bad input is (`describe`: fields named
    ``messages[0].timestamp``, at most `MAX_ERRORS` of them, counted) instead of pydantic's own
    text with links to its docs; an error's text without the SDK's "Error executing tool"
    preamble; a result's JSON text on one line (the SDK indents it)."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Ctx | None = None) -> Any:
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(describe(exc.__cause__)) from exc.__cause__
            text = str(exc).removeprefix(f"Error executing tool {name}: ")
            raise ToolError(text) from exc.__cause__
        for block in getattr(result, "content", None) or ():
            if isinstance(block, TextContent) and block.text[:1] in "[{":
                with contextlib.suppress(ValueError):
                    block.text = json.dumps(json.loads(block.text), separators=(",", ":"),
                                            ensure_ascii=False)
        return result


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """graphmem's own errors and invalid models as `ToolError` (a result with ``isError``);
    anything else stays a crash for the SDK to log (the client reads only the tool's name)."""
    try:
        yield
    except (GraphMemError, ValidationError) as exc:
        raise ToolError(describe(exc)) from None


@contextlib.contextmanager
def resource_errors(ctx: Ctx) -> Iterator[None]:
    """graphmem's own errors reading a resource as JSON-RPC errors whose message names the field
    at fault: an unknown id is the SDK's not found, and a refusal (forbidden) or bad input is
    invalid params too (-32602), with ``data`` giving the URI, the HTTP status the API would
    send and the field; a store that is down stays an internal error (-32603)."""
    try:
        yield
    except NotFound as exc:
        raise ResourceNotFoundError(describe(exc)) from None
    except (GraphMemError, ValidationError) as exc:
        if isinstance(exc, GraphMemError) and exc.status >= 500:
            raise ResourceError(describe(exc)) from None
        data: dict[str, Any] = {"uri": _uri(ctx),
                                "status": 422 if isinstance(exc, ValidationError) else exc.status}
        field = getattr(exc, "field", None)  # InvalidInput's, Forbidden's when one asked
        if field is not None:
            data["field"] = field
        raise MCPError(INVALID_PARAMS, describe(exc), data) from None


def _uri(ctx: Ctx) -> str | None:
    """The URI a resource read asked for."""
    try:
        params = ctx.request_context.params
    except ValueError:  # no request: called outside the protocol
        return None
    uri = (params or {}).get("uri")
    return uri if isinstance(uri, str) else None

