"""MCP over stdio (``graphmem mcp``): the process is bound to one tenant (``--tenant``) and to
what its ``--owner`` / ``--read-only`` options grant; the client (Claude Desktop, Cursor) starts
it and is trusted like the CLI."""


import contextlib
import logging
import sys

from graphmem.access import Access
from graphmem.config import Settings
from graphmem.mcp.tools import build_server


def run_stdio(settings: Settings, access: Access) -> None:
    """Serve MCP on stdin/stdout for ``access`` (a tenant, maybe some owners, maybe read only)
    until the client closes the pipe."""
    from graphmem.service import Memory

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout: the protocol only
    with contextlib.redirect_stdout(sys.stderr):
        memory = Memory.open(settings)
    try:
        scoped = memory.for_tenant(access.tenant, access, caller="mcp-stdio")
        server = build_server(lambda _: scoped, read_only=access.read_only,
                              tools=settings.mcp_tools)
        server.run("stdio")
    finally:
        memory.close()

