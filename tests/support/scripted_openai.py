"""TEST DOUBLE: `ScriptedOpenAIServer`, a local HTTP server that plays an OpenAI-compatible API.

Not a model and not a mock of the ``openai`` package: a real HTTP server (stdlib
``ThreadingHTTPServer`` on 127.0.0.1, a free port, a background thread) that the real ``openai``
client talks to over TCP. Each ``POST /v1/chat/completions`` gets the next *scripted* reply::

    with ScriptedOpenAIServer() as srv:
        srv.reply_text("not json")                 # malformed content
        srv.reply_status(500, "boom")              # an error status with an OpenAI error body
        srv.reply_delay(2.0)                       # the next queued reply waits 2 s first...
        srv.reply_json({"ok": True})               # ...this one (a chat.completion with usage)
        srv.default(json={"ok": True})             # what to answer once the queue is empty
        ... LLMClient(LLMSettings(base_url=srv.base_url, model="m")) ...
        srv.requests    # the parsed JSON bodies received, in order (model, messages, ...)

``GET /v1/models`` lists the configured model names. With an empty queue and no default, the
server answers 500 and counts the request in ``unscripted``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

DEFAULT_PROMPT_TOKENS = 11
DEFAULT_COMPLETION_TOKENS = 7


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted answer: a chat.completion with ``content`` (status 200) or an error body."""

    status: int = 200
    content: str = ""
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS
    completion_tokens: int = DEFAULT_COMPLETION_TOKENS
    with_usage: bool = True
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)

    def body(self, model: str, number: int) -> dict[str, Any]:
        if self.status != 200:
            kind = "rate_limit_exceeded" if self.status == 429 else "scripted_error"
            return {"error": {"message": self.content, "type": kind, "param": None, "code": None}}
        body: dict[str, Any] = {
            "id": f"chatcmpl-scripted-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.content},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
        }
        if self.with_usage:
            body["usage"] = {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens,
            }
        return body


class ScriptedOpenAIServer:
    """Test double of an OpenAI-compatible server; see the module docstring. Thread-safe."""

    def __init__(self, models: tuple[str, ...] = ("scripted-model",)) -> None:
        self.models = models
        self.requests: list[dict[str, Any]] = []  # parsed JSON bodies of chat completions
        self.headers: list[dict[str, str]] = []  # their HTTP headers (lower-case names)
        self.unscripted = 0
        self._queue: deque[ScriptedReply] = deque()
        self._default: ScriptedReply | None = None
        self._next_delay = 0.0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="scripted-openai", daemon=True
        )

    # --- lifecycle ------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # wakes handlers sleeping in a scripted delay
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join(timeout=5)
        self._httpd.server_close()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- script -----------------------------------------------------------------------------
    def reply(self, reply: ScriptedReply) -> None:
        """Queue ``reply``; a pending `reply_delay` is added to it."""
        with self._lock:
            if self._next_delay:
                reply = replace(reply, delay_s=self._next_delay)
                self._next_delay = 0.0
            self._queue.append(reply)

    def reply_json(self, obj: Any, **usage: Any) -> None:
        """Queue a chat.completion whose content is ``json.dumps(obj)``.

        ``usage``: ``prompt_tokens``, ``completion_tokens``, ``with_usage`` (see `ScriptedReply`).
        """
        self.reply(ScriptedReply(content=json.dumps(obj), **usage))

    def reply_text(self, text: str, **usage: Any) -> None:
        """Queue a chat.completion whose content is ``text`` as is (e.g. malformed JSON)."""
        self.reply(ScriptedReply(content=text, **usage))

    def reply_status(
        self, status: int, message: str = "scripted error", headers: dict[str, str] | None = None
    ) -> None:
        """Queue an HTTP error ``status`` with an OpenAI-style error body."""
        self.reply(ScriptedReply(status=status, content=message, headers=headers or {}))

    def reply_delay(self, seconds: float) -> None:
        """Make the next queued reply wait ``seconds`` before answering (to cause timeouts)."""
        with self._lock:
            self._next_delay = seconds

    def default(
        self, *, json: Any = None, text: str | None = None, status: int | None = None
    ) -> None:
        """The reply once the queue is empty: ``json`` content, ``text`` content or ``status``."""
        if status is not None:
            reply = ScriptedReply(status=status, content=text or "scripted error")
        elif text is not None:
            reply = ScriptedReply(content=text)
        else:
            reply = ScriptedReply(content=_dumps(json))
        with self._lock:
            self._default = reply

    @property
    def pending(self) -> int:
        """Replies still queued."""
        with self._lock:
            return len(self._queue)

    # --- serving (handler threads) -----------------------------------------------------------
    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[ScriptedReply, int]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            number = len(self.requests)
            if self._queue:
                return self._queue.popleft(), number
            if self._default is not None:
                return self._default, number
            self.unscripted += 1
        return ScriptedReply(status=500, content="ScriptedOpenAIServer: no reply scripted"), number


def _dumps(obj: Any) -> str:
    return json.dumps(obj)


def _handler_for(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/v1/models":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "scripted"}
                for m in server.models
            ]
            self._send(200, {"object": "list", "data": data})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            body = json.loads(raw or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply, number = server._take(body, headers)
            if reply.delay_s and server._closing.wait(reply.delay_s):
                return
            model = str(body.get("model", ""))
            self._send(reply.status, reply.body(model, number), reply.headers)

        def _send(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            payload = json.dumps(obj).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout): nothing to answer

    return Handler
