"""`serve(app)`: the app under a real uvicorn server on a free loopback port, in a background
thread, for tests that need real HTTP (keep-alive connections, chunked bodies, a fuzzer); with
``settings``, the server `graphmem serve` runs (`graphmem.ops.http_server`: its connection
limits)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from graphmem.config import Settings
from graphmem.ops.http_server import server_config


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def serve(app: Any, timeout_s: float = 30.0, settings: Settings | None = None) -> Iterator[str]:
    """Run ``app`` (lifespan included) until the block ends; yields its base URL. Without
    ``settings``: plain uvicorn, keep-alive 30 s; with: `server_config` of those settings."""
    port = free_port()
    if settings is None:
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                timeout_keep_alive=30)
    else:
        config = server_config(app, settings.model_copy(update={"host": "127.0.0.1",
                                                                "port": port}),
                               log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"uvicorn did not start on 127.0.0.1:{port}")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout_s)
