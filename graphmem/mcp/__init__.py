"""graphmem as an MCP server (Model Context Protocol, the official ``mcp`` SDK): the tools and
resources an agent uses to remember, recall and check facts, over one tenant's `TenantMemory`.

One server definition (`graphmem.mcp.tools.build_server`), two transports: stdio
(`graphmem.mcp.stdio.run_stdio`, ``graphmem mcp``) and streamable HTTP at ``/mcp`` of the API
(`graphmem.mcp.http.http_endpoint`). Errors: `graphmem.mcp.errors`.
"""
