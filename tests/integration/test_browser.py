"""Neo4j Browser support: the GRASS style, the guide to the audit queries, the post-connect
command, and (where Chromium is installed) the styled graph rendered in a real headless browser.
"""

from __future__ import annotations

import html
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from graphmem import audit, demo
from graphmem.api import browser
from graphmem.api.app import create_app
from graphmem.config import Settings
from graphmem.servers import neo4j_server
from graphmem.service import Memory

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "browser_screenshot.py"
CHROMIUM = Path("/usr/bin/chromium")
LABELS = ("Message", "Sentence", "Session", "Observation", "ProfileFact", "Fact", "Episode",
          "Entity", "FactKey", "FactType", "GraphMeta")
CAPTIONED = ("Message", "Sentence", "Session", "Observation", "ProfileFact", "Fact", "Episode")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def browser_parse_grass(text: str) -> dict[str, dict[str, str]]:
    """Neo4j Browser 5.x's own GRASS parser (grassUtils.parseGrassCSS), ported line by line, so
    the test sees the sheet exactly as the Browser does."""
    inside_string = inside_props = inside_binding = False
    keyword = props = ""
    rules: dict[str, str] = {}
    for c in text:
        skip = True
        if c == "{":
            if inside_string:
                skip = False
            elif inside_props:
                inside_binding = True
            else:
                inside_props = True
        elif c == "}":
            if inside_string:
                skip = False
            elif inside_binding:
                inside_binding = False
            else:
                inside_props = False
                rules[keyword] = props
                keyword = props = ""
        elif c in "'\"":
            inside_string = not inside_string
        else:
            skip = False
        if skip:
            continue
        if inside_props:
            props += c
        elif not c.isspace():
            keyword += c
    out: dict[str, dict[str, str]] = {}
    for selector, body in rules.items():
        out[selector] = {}
        for prop in body.split(";"):
            kv = prop.split(":")
            if len(kv) == 2:
                out[selector][kv[0].strip()] = kv[1].strip()
    return out


@pytest.fixture(scope="module")
def local(settings: Settings, memory: Memory) -> Iterator[TestClient]:
    """The app as a loopback client sees it."""
    with TestClient(create_app(settings, memory), client=("127.0.0.1", 50123)) as client:
        yield client


@pytest.fixture(scope="module")
def remote(settings: Settings, memory: Memory) -> Iterator[TestClient]:
    """The app as a client on another machine sees it."""
    with TestClient(create_app(settings, memory), client=("10.1.2.3", 1234)) as client:
        yield client


# --- style ------------------------------------------------------------------------------------
def test_style_has_a_rule_and_a_colour_per_label(local: TestClient) -> None:
    r = local.get("/browser/style.grass")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    sheet = browser_parse_grass(r.text)
    assert list(sheet) == [rule.selector for rule in browser.parse_grass(r.text)]
    for label in LABELS:
        rule = sheet.get(f"node.{label}")
        assert rule is not None, f"no rule for :{label}"
        for prop in ("color", "border-color", "text-color-internal", "diameter", "caption"):
            assert rule.get(prop), f":{label} has no {prop}"
    colours = [sheet[f"node.{label}"]["color"].upper() for label in LABELS]
    assert len(set(colours)) == len(LABELS), f"colours are not distinct: {colours}"
    for label in CAPTIONED:
        assert sheet[f"node.{label}"]["caption"] == "{caption}"
    # Later rules win in the Browser: the generic :Fact rule must come before its sub-labels.
    order = list(sheet)
    assert order.index("node.Fact") < order.index("node.Observation")
    assert order.index("node.Fact") < order.index("node.ProfileFact")
    # Messages and facts are the prominent nodes.
    size = {label: float(sheet[f"node.{label}"]["diameter"].removesuffix("px")) for label in LABELS}
    small = max(size[x] for x in ("Sentence", "Session", "FactKey", "FactType", "GraphMeta"))
    assert min(size["Message"], size["Observation"], size["ProfileFact"]) > small
    assert sheet["relationship.SUPERSEDES"]["caption"] == "{reason}"
    for rel in ("relationship", "relationship.NEXT", "relationship.SUPPORTED_BY",
                "relationship.PART_OF", "relationship.DERIVED_FROM"):
        assert sheet[rel]["caption"] == "<type>"


# --- guide ------------------------------------------------------------------------------------
def test_guide_walks_through_every_audit_query(local: TestClient) -> None:
    r = local.get("/browser/guide.html")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    page = r.text
    assert '<article class="guide">' in page and "<carousel" in page
    queries = audit.all_queries()
    assert queries
    # intro, a session, the release example, procedural memory, documents, entities, the audit
    # overview, then one per query
    assert page.count('<slide class="row-fluid">') == 7 + len(queries)
    assert "{{" not in page and browser.AUDIT_MARK not in page and browser.LEGEND_MARK not in page
    runnable = [html.unescape(b) for b in re.findall(
        r'<pre class="code runnable">(.*?)</pre>', page, re.S)]
    text = html.unescape(page)
    for q in queries:
        assert f"<h3>{q.name}</h3>" in page
        assert browser.query_body(q.text) in runnable, f"{q.name}: query text missing"
        assert q.purpose in text
        parts = [p.strip() for p in q.example.split(";") if p.strip()]
        assert parts and all(p.startswith(":param ") for p in parts), q.name
        for part in parts:
            assert part in text, f"{q.name}: {part!r} missing"
    # the walk-through before the audit queries
    assert "[:NEXT]->" in text and "obs-r2" in text and "SUPERSEDES" in text
    assert ":param tenant => 'demo'" in runnable
    assert any(b.startswith(":style http://") and b.endswith("/browser/style.grass")
               for b in runnable)


def test_guide_for_another_tenant(local: TestClient) -> None:
    text = html.unescape(local.get("/browser/guide.html", params={"tenant": "acme-1"}).text)
    assert ":param tenant => 'acme-1'" in text
    assert ":param tenant => 'demo'" not in text
    r = local.get("/browser/guide.html", params={"tenant": "x' RETURN 1 //"})
    assert r.status_code == 422
    assert r.headers["content-type"] == "application/problem+json"


# --- access -----------------------------------------------------------------------------------
@pytest.mark.parametrize("method,path", [("GET", "/browser/style.grass"),
                                         ("GET", "/browser/guide.html"),
                                         ("OPTIONS", "/browser/guide.html")])
def test_other_machines_get_403(remote: TestClient, method: str, path: str) -> None:
    r = remote.request(method, path, headers={"Origin": "http://localhost:7474"})
    assert r.status_code == 403
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["status"] == 403 and "loopback" in body["detail"]
    assert "access-control-allow-origin" not in r.headers


def test_cors_lets_neo4j_browser_fetch(local: TestClient, settings: Settings) -> None:
    origin = f"http://localhost:{settings.neo4j_http_port}"
    r = local.get("/browser/style.grass", headers={"Origin": origin})
    assert r.headers["access-control-allow-origin"] == origin
    # :play sends pragma and cache-control, so the Browser asks first
    r = local.options("/browser/guide.html", headers={
        "Origin": f"http://127.0.0.1:{settings.neo4j_http_port}",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "pragma,cache-control"})
    assert r.status_code == 204
    assert r.headers["access-control-allow-origin"] == f"http://127.0.0.1:{settings.neo4j_http_port}"
    assert "GET" in r.headers["access-control-allow-methods"]
    allowed = {h.strip() for h in r.headers["access-control-allow-headers"].split(",")}
    assert {"pragma", "cache-control"} <= allowed
    # another web page on this machine may not read them
    r = local.get("/browser/guide.html", headers={"Origin": "http://evil.example"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


# --- post-connect command ---------------------------------------------------------------------
def test_conf_carries_the_post_connect_command(settings: Settings) -> None:
    api = settings.model_copy(update={"port": 8123})
    cmd = browser.post_connect_cmd(api)
    assert cmd == ("style http://127.0.0.1:8123/browser/style.grass; "
                   "play http://127.0.0.1:8123/browser/guide.html")
    conf = neo4j_server.render_conf(settings, post_connect_cmd=cmd)
    assert f"browser.post_connect_cmd={cmd}\n" in conf
    assert "browser.remote_content_hostname_whitelist=localhost,127.0.0.1" in conf
    assert "post_connect_cmd" not in neo4j_server.render_conf(settings)
    other = browser.post_connect_cmd(api.model_copy(update={"host": "0.0.0.0"}), tenant="acme")
    assert other.endswith("play http://localhost:8123/browser/guide.html?tenant=acme")


def test_cli_passes_the_post_connect_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem import cli

    seen: list[str | None] = []

    def fake_start(settings: Settings, post_connect_cmd: str | None = None) -> Any:
        seen.append(post_connect_cmd)
        raise neo4j_server.Neo4jServerError("not started in this test")

    monkeypatch.setattr(neo4j_server, "start", fake_start)
    monkeypatch.setenv("GRAPHMEM_PORT", "8124")
    runner = CliRunner()
    assert runner.invoke(cli.app, ["neo4j", "start"]).exit_code == 1
    assert runner.invoke(cli.app, ["neo4j", "start", "--no-browser-setup"]).exit_code == 1
    assert runner.invoke(cli.app, ["demo"]).exit_code == 1
    assert seen == [
        "style http://127.0.0.1:8124/browser/style.grass; "
        "play http://127.0.0.1:8124/browser/guide.html",
        None,
        "style http://127.0.0.1:8124/browser/style.grass; "
        "play http://127.0.0.1:8124/browser/guide.html",
    ]


# --- a real browser ---------------------------------------------------------------------------
@pytest.fixture
def served_api(settings: Settings, memory: Memory) -> Iterator[str]:
    """The app over real HTTP on a loopback port (Chromium fetches the style from it): a free
    one, or GRAPHMEM_TEST_API_PORT."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", int(os.environ.get("GRAPHMEM_TEST_API_PORT", "0"))))
    port = sock.getsockname()[1]
    app = create_app(settings.model_copy(update={"port": port}), memory)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            thread.join(0.05)
        assert server.started, "the API did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@pytest.mark.skipif(not CHROMIUM.exists(),
                    reason="needs Debian's Chromium at /usr/bin/chromium (apt-get install "
                    "chromium); CI does not install it")
def test_styled_graph_renders_in_headless_chromium(
    settings: Settings, memory: Memory, tenant: str, served_api: str, tmp_path: Path
) -> None:
    demo.load(memory, tenant)
    out = tmp_path / "browser.png"
    password_file = tmp_path / "password"
    password_file.write_text(settings.resolved_password() or "", encoding="utf-8")
    try:
        done = subprocess.run(
            [sys.executable, str(SCRIPT),
             "--browser-url", f"http://localhost:{settings.neo4j_http_port}/browser/",
             "--bolt-url", f"bolt://localhost:{settings.neo4j_bolt_port}",
             "--user", settings.neo4j_user, "--password-file", str(password_file),
             "--tenant", tenant, "--out", str(out),
             # the suite's Neo4j has no post-connect command: the script runs both itself
             "--style-url", f"{served_api}/browser/style.grass",
             "--guide-url", f"{served_api}/browser/guide.html?tenant={tenant}"],
            capture_output=True, text=True, timeout=300, check=False,
        )
    finally:
        for who in ("alice", "bob"):
            memory.ops(tenant).delete_owner(who)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    summary = json.loads(done.stdout)
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 30_000, "no real screenshot"

    sheet = browser_parse_grass(browser.STYLE_FILE.read_text(encoding="utf-8"))
    style_frame = summary["post_connect"]["style"]
    assert style_frame["selectors"] == list(sheet)  # the Browser took the whole sheet
    assert int(summary["post_connect"]["play"]["slides"]) == 7 + len(audit.all_queries())

    nodes, rels = summary["graph"]["nodes"], summary["graph"]["rels"]
    fills = {n["fill"].upper() for n in nodes}
    for label in ("Observation", "Message", "ProfileFact"):
        assert sheet[f"node.{label}"]["color"].upper() in fills, f":{label} is not styled"
    captions = [n["caption"] for n in nodes]
    assert any(c.startswith("release · requirement: Rollback") for c in captions), captions
    assert any(c.startswith("alice: ") for c in captions), captions
    supersedes = [r for r in rels
                  if r["color"].upper() == sheet["relationship.SUPERSEDES"]["color"].upper()]
    reasons = ("explicit replacement: a rollback verified on staging is not enough",
               "moved for the robotics lab job")  # of the demo's two SUPERSEDES edges
    shown = [r["caption"].rstrip("…") for r in supersedes]  # long captions are cut to fit
    assert len(supersedes) == 2 and any(shown), supersedes
    assert all(any(reason.startswith(c) for reason in reasons) for c in shown), shown
    assert any(r["caption"] == "SUPPORTED_BY" for r in rels)
