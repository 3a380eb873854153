"""`serving(handler)`: a standard-library request handler served on 127.0.0.1 in a background
thread, for tests that need a small HTTP peer (a fake LLM endpoint, a recording server)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], port: int = 0) -> Iterator[int]:
    """Serve ``handler`` on ``port`` (0: a free one) until the block ends; yields the port."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
