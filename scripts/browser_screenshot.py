#!/usr/bin/env python3
"""Screenshot of graphmem's styled graph in Neo4j Browser, taken in headless Chromium.

Starts nothing but the browser (Debian's ``chromium``, driven over the DevTools protocol on a
pipe: no extra port, no Python package beyond the standard library). It needs a running Neo4j
started with graphmem's ``browser.post_connect_cmd`` (``graphmem neo4j start`` / ``graphmem
demo``) and the API that serves the style and the guide (``graphmem serve`` / ``graphmem demo``),
with the demo memory loaded.

Steps: open the Browser, fill the connect form, wait until the post-connect commands have run
(the ``:style`` frame shows graphmem's stylesheet; the ``:play`` frame shows the guide), run a
query that draws the release example, wait for the graph view to settle, save a PNG, and print a
JSON summary (node colours and captions, relationship captions, what the post-connect commands
did). Exit code 0 when the styled graph rendered; 1 otherwise (the PNG is still written).

    .venv/bin/python scripts/browser_screenshot.py --out /tmp/graphmem-browser.png
    .venv/bin/python scripts/browser_screenshot.py --browser-url http://localhost:7474/browser/ \\
        --bolt-url bolt://localhost:7687 --user neo4j \\
        --password-file ~/.cache/graphmem/neo4j-instance/password --out /tmp/x.png

Without ``--browser-url`` / ``--bolt-url`` / ``--user`` / ``--password`` the values come from
graphmem's settings (``GRAPHMEM_*`` environment variables, the instance's password file). For a
Neo4j started without the post-connect command (the test suite's), ``--style-url`` and
``--guide-url`` make the script run ``:style`` and ``:play`` itself.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_QUERY = "MATCH p = (:Fact {tenant: $tenant})-[:SUPERSEDES|SUPPORTED_BY]->() RETURN p"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    """Chromium or Neo4j Browser did not do what was expected."""


class Chromium:
    """Headless Chromium, spoken to over ``--remote-debugging-pipe`` (fd 3 in, fd 4 out;
    messages are JSON, each ended by a NUL byte)."""

    def __init__(self, executable: str, width: int, height: int, log: Path) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="graphmem-chromium-"))
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def child_fds() -> None:  # runs in the child, before exec
            a = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        argv = [executable, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}", "about:blank"]
        self._log = log.open("wb")
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            close_fds=False, preexec_fn=child_fds,  # no threads here
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        with contextlib.suppress(OSError, BrowserError):
            self.call("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for fd in (self._to_chrome, self._from_chrome):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_chrome, data):]

    def _read(self, timeout: float) -> dict[str, Any] | None:
        while b"\0" not in self._buf:
            ready, _, _ = select.select([self._from_chrome], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium exited (code {self.proc.poll()})")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        self._next_id += 1
        msg_id = self._next_id
        message: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._send(message)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            reply = self._read(left)
            if reply is None:
                break
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)
        raise BrowserError(f"{method}: no answer within {timeout}s")


class Page:
    """One tab of the browser (a flattened target session)."""

    def __init__(self, chrome: Chromium, width: int, height: int) -> None:
        self.chrome = chrome
        targets = chrome.call("Target.getTargets")["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        target_id = page["targetId"] if page else chrome.call(
            "Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = chrome.call(
            "Target.attachToTarget", {"targetId": target_id, "flatten": True})["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def call(self, method: str, params: dict[str, Any] | None = None,
             timeout: float = 30.0) -> dict[str, Any]:
        return self.chrome.call(method, params, self.session, timeout)

    def js(self, expression: str, timeout: float = 30.0) -> Any:
        reply = self.call("Runtime.evaluate", {
            "expression": expression, "returnByValue": True, "awaitPromise": True}, timeout)
        if "exceptionDetails" in reply:
            raise BrowserError(f"script failed: {reply['exceptionDetails']}")
        return reply.get("result", {}).get("value")

    def wait_for(self, expression: str, what: str, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.js(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out after {timeout:.0f}s waiting for {what}")
            time.sleep(0.25)

    def navigate(self, url: str) -> None:
        self.call("Page.navigate", {"url": url})
        self.wait_for("document.readyState === 'complete'", "the page to load", 60)

    def type_into(self, selector: str, text: str) -> None:
        """Focus an input, select what it holds and type over it (React sees real input)."""
        found = self.js(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el) return false;
            el.focus(); if (el.select) el.select(); return true; }})()""")
        if not found:
            raise BrowserError(f"no element {selector}")
        self.call("Input.insertText", {"text": text})

    def key(self, key: str, code: str, key_code: int, modifiers: int = 0) -> None:
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {
                "type": kind, "key": key, "code": code, "windowsVirtualKeyCode": key_code,
                "nativeVirtualKeyCode": key_code, "modifiers": modifiers})

    def screenshot(self, out: Path, clip: dict[str, float] | None = None) -> None:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": False}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        data = self.call("Page.captureScreenshot", params, timeout=60)["data"]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(data))


@contextlib.contextmanager
def chromium(executable: str, width: int, height: int, log: Path) -> Iterator[Page]:
    chrome = Chromium(executable, width, height, log)
    try:
        yield Page(chrome, width, height)
    finally:
        chrome.close()


# --- Neo4j Browser steps ----------------------------------------------------------------------
SELECTOR = r"(?m)^((?:node|relationship)\S*) \{"
FRAMES = "[...document.querySelectorAll('[data-testid=frame]')]"
# What the post-connect commands produced: the :style frame and the :play frame (a guide).
POST_CONNECT_STATE = f"""(() => {{
  const frames = {FRAMES};
  const cmd = f => (f.querySelector('[data-testid=frameCommand]') || {{}}).innerText || '';
  const style = frames.find(f => cmd(f).includes(':style'));
  const play = frames.find(f => cmd(f).includes(':play'));
  return {{
    style: style ? {{command: cmd(style), text: style.innerText.slice(0, 40000)}} : null,
    play: play ? {{command: cmd(play), slides: play.querySelectorAll('[data-testid=carousel]')
                   .length ? (play.innerText.match(/\\d+ \\/ (\\d+)/) || [null, null])[1] : null,
                 text: play.innerText.slice(0, 2000)}} : null,
  }};
}})()"""
GRAPH_STATE = """(() => {
  const frame = [...document.querySelectorAll('[data-testid=frame]')]
    .find(f => f.querySelector('svg g.node'));
  if (!frame) return null;
  const nodes = [...frame.querySelectorAll('svg g.node')].map(g => {
    const c = g.querySelector('circle.b-outline') || g.querySelector('circle');
    return {fill: c && c.getAttribute('fill'), stroke: c && c.getAttribute('stroke'),
            r: c && Number(c.getAttribute('r')),
            caption: [...g.querySelectorAll('text')].map(t => t.textContent.trim()).join(' '),
            at: g.getAttribute('transform')};
  });
  const rels = [...frame.querySelectorAll('svg g.relationship')].map(g => ({
    caption: [...g.querySelectorAll('text')].map(t => t.textContent.trim()).join(' '),
    color: (g.querySelector('path.b-outline') || g.querySelector('path') || {getAttribute: () =>
      null}).getAttribute('fill')}));
  return {nodes, rels};
})()"""


def connect(page: Page, browser_url: str, bolt_url: str, user: str, password: str) -> None:
    query = urllib.parse.urlencode({"dbms": bolt_url, "preselectAuthMethod": "NATIVE"})
    page.navigate(f"{browser_url}{'&' if '?' in browser_url else '?'}{query}")
    page.wait_for("!!document.querySelector('[data-testid=password]')", "the connect form", 60)
    page.type_into("[data-testid=username]", user)
    page.type_into("[data-testid=password]", password)
    page.js("document.querySelector('[data-testid=connect]').click()")
    page.wait_for("!document.querySelector('[data-testid=password]') && "
                  "!!document.querySelector('#monaco-main-editor textarea')", "connecting", 60)


def run_query(page: Page, query: str) -> None:
    page.js("document.querySelector('#monaco-main-editor textarea').focus()")
    page.call("Input.insertText", {"text": query})
    page.js("document.querySelector('[data-testid=editor-Run]').click()")


def run_command(page: Page, command: str, done_js: str, timeout: float) -> None:
    """Run a Browser command until its frame shows ``done_js`` (an expression of the frame
    ``f``). Right after connecting the Browser may not have read the server's settings yet
    (its remote-content allowlist among them), so a refused fetch is retried."""
    frame = (f"{FRAMES}.find(f => (f.querySelector('[data-testid=frameCommand]') || {{}})"
             f".innerText === {json.dumps(command)})")
    deadline = time.monotonic() + timeout
    while True:
        run_query(page, command)
        state = page.wait_for(f"(() => {{ const f = {frame}; if (!f) return null; "
                              f"if ({done_js}) return 'done'; "
                              "return /error|not found|not allowed/i.test(f.innerText) "
                              "? 'failed' : null; })()", command, timeout)
        if state == "done":
            return
        if time.monotonic() > deadline:
            raise BrowserError(f"{command} failed: {page.js(f'({frame}).innerText')[:500]}")
        page.js(f"({frame}).querySelector('button[title=\"Close\"]').click()")
        page.wait_for(f"!{frame}", f"the failed {command} frame to close", timeout)
        time.sleep(1.0)


def wait_for_graph(page: Page, timeout: float) -> dict[str, Any]:
    """Wait until the graph view has nodes and the layout has come to rest."""
    page.wait_for("!!document.querySelector('[data-testid=frame] svg g.node')",
                  "the graph view", timeout)
    # Give the graph room: the frame fullscreen, the overview panel folded, zoomed to fit.
    page.js("""(() => {
      const frame = [...document.querySelectorAll('[data-testid=frame]')]
        .find(f => f.querySelector('svg g.node'));
      const click = sel => { const b = frame.querySelector(sel); if (b) b.click(); };
      click('button[title="Fullscreen"]');
      click('button[title="Collapse the node properties display"]');
    })()""")
    last, still_since = None, time.monotonic()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = page.js(GRAPH_STATE)
        layout = [n["at"] for n in state["nodes"]] if state else None
        if layout != last:
            last, still_since = layout, time.monotonic()
        elif time.monotonic() - still_since > 1.5:
            break
        time.sleep(0.25)
    page.js("""(() => { const b = document.querySelector('button[aria-label="zoom-to-fit"]');
                        if (b) b.click(); })()""")
    time.sleep(1.5)  # the zoom is animated
    state = page.js(GRAPH_STATE)
    if not state:
        raise BrowserError("the graph view disappeared")
    result: dict[str, Any] = state
    return result


def _settings_defaults(args: argparse.Namespace) -> None:
    """Fill missing connection values from graphmem's settings (if graphmem is installed)."""
    if all((args.browser_url, args.bolt_url, args.user, args.password)):
        return
    try:
        from graphmem.config import Settings
    except ImportError as exc:
        raise SystemExit(f"give --browser-url, --bolt-url, --user and --password ({exc})") from exc
    settings = Settings()
    args.browser_url = args.browser_url or f"http://localhost:{settings.neo4j_http_port}/browser/"
    args.bolt_url = args.bolt_url or f"bolt://localhost:{settings.neo4j_bolt_port}"
    args.user = args.user or settings.neo4j_user
    if args.password is None:
        args.password = settings.resolved_password() or ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--browser-url", help="Neo4j Browser, e.g. http://localhost:7474/browser/")
    ap.add_argument("--bolt-url", help="e.g. bolt://localhost:7687")
    ap.add_argument("--user", help="Neo4j user (default: from settings, neo4j)")
    ap.add_argument("--password", help="Neo4j password (default: from settings / password file)")
    ap.add_argument("--password-file", type=Path, help="read the password from this file")
    ap.add_argument("--tenant", default="demo", help="tenant of the default query")
    ap.add_argument("--query", help="Cypher that draws a graph (default: every fact of the "
                    "tenant with its sources and what it superseded: the release example)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/graphmem-browser.png"))
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds for each wait")
    ap.add_argument("--style-url", help="run `:style URL` after connecting (for a Neo4j started "
                    "without graphmem's browser.post_connect_cmd)")
    ap.add_argument("--guide-url", help="run `:play URL` after connecting (likewise)")
    ap.add_argument("--no-post-connect", action="store_true",
                    help="do not require the :style and :play frames")
    args = ap.parse_args(argv)
    if args.password_file is not None:
        args.password = args.password_file.read_text(encoding="utf-8").strip()
    _settings_defaults(args)
    if not Path(args.chromium).exists():
        raise SystemExit(f"no Chromium at {args.chromium} (apt-get install chromium)")

    summary: dict[str, Any] = {"out": str(args.out), "ok": False}
    log = args.out.with_suffix(".chromium.log")
    with chromium(args.chromium, args.width, args.height, log) as page:
        try:
            connect(page, args.browser_url, args.bolt_url, args.user, args.password)
            if args.style_url:
                run_command(page, f":style {args.style_url}", "f.innerText.includes('node.')",
                            args.timeout)
            if args.guide_url:
                run_command(page, f":play {args.guide_url}",
                            "!!f.querySelector('[data-testid=carousel]')", args.timeout)
            if not args.no_post_connect:
                page.wait_for(f"(() => {{ const s = {POST_CONNECT_STATE}; return !!(s.style && "
                              "s.style.text.includes('node.') && s.play && s.play.slides); })()",
                              "the post-connect :style and :play frames", args.timeout)
            state = page.js(POST_CONNECT_STATE)
            if state and state.get("style"):  # the whole sheet is long: keep its selectors
                text = state["style"].pop("text")
                state["style"]["selectors"] = re.findall(SELECTOR, text)
            summary["post_connect"] = state
            query = args.query or DEFAULT_QUERY.replace("$tenant", json.dumps(args.tenant))
            run_query(page, query)
            summary["graph"] = wait_for_graph(page, args.timeout)
            summary["ok"] = True
        except BrowserError as exc:
            summary["error"] = str(exc)
        finally:
            page.screenshot(args.out)
    print(json.dumps(summary, indent=2))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
