"""Neo4j Browser support, for a local user: the graphmem GRASS style and a Browser guide that
walks through the demo graph and every audit query.

``GET /browser/style.grass`` serves ``cypher/browser/style.grass``; ``GET /browser/guide.html``
fills ``cypher/browser/guide.html`` at request time with a colour legend (read from the style)
and one slide per ``cypher/audit/*.cypher`` file, so the guide never drifts from the queries.
No API key: both are static, public knowledge; instead only loopback clients get an answer (403
problem+json for others). CORS headers let Neo4j Browser, served by the local Neo4j at
``http://localhost:<neo4j_http_port>``, fetch them (``:style`` and ``:play`` use XHR; ``:play``
sends ``pragma`` and ``cache-control`` headers, so a preflight comes first).

`post_connect_cmd(settings)` is the ``browser.post_connect_cmd`` that makes the Browser apply
the style and open the guide right after connecting (Browser 5.x runs each ``;``-separated part).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, PlainTextResponse

from graphmem import audit
from graphmem.config import Settings, is_loopback
from graphmem.cypher import CYPHER_DIR

from . import problems

BROWSER_DIR = CYPHER_DIR / "browser"
STYLE_FILE = BROWSER_DIR / "style.grass"
GUIDE_FILE = BROWSER_DIR / "guide.html"
LEGEND_MARK = "<!-- legend -->"
AUDIT_MARK = "<!-- audit-slides -->"
# Request headers the Browser's XHR sends (the guide fetch adds pragma and cache-control).
_ALLOWED_HEADERS = ("cache-control", "pragma", "content-type", "x-ajax-browser-auth", "x-stream")
_TENANT = re.compile(r"[A-Za-z0-9_.@-]{1,128}")
_RULE = re.compile(r"([^{}\s]+)\s*\{([^{}]*(?:'[^']*'[^{}]*)*)\}")


@dataclass(frozen=True)
class GrassRule:
    selector: str
    """``node``, ``node.Label``, ``relationship`` or ``relationship.TYPE``."""
    props: dict[str, str]
    """Property -> value, quotes of captions removed (as Neo4j Browser reads them)."""


def parse_grass(text: str) -> list[GrassRule]:
    """The rules of a GRASS stylesheet in order, read the way Neo4j Browser 5.x reads them:
    ``selector { key: value; ... }``, a value holds no ``:`` or ``;`` and quotes are dropped."""
    rules: list[GrassRule] = []
    for selector, body in _RULE.findall(text):
        props: dict[str, str] = {}
        for part in body.split(";"):
            key, sep, value = part.partition(":")
            if sep and key.strip() and ":" not in value:
                props[key.strip()] = value.strip().strip("'\"")
        rules.append(GrassRule(selector, props))
    return rules


def post_connect_cmd(settings: Settings, tenant: str | None = None) -> str:
    """``browser.post_connect_cmd`` for an API served by these settings: apply the graphmem
    style, then open the guide (for ``tenant``, default ``demo``). Browser 5.x splits the value
    on ``;`` and runs each part as a ``:`` command."""
    base = api_base_url(settings)
    guide = f"{base}/browser/guide.html"
    if tenant is not None and tenant != "demo" and _TENANT.fullmatch(tenant):
        guide += f"?tenant={tenant}"
    return f"style {base}/browser/style.grass; play {guide}"


def api_base_url(settings: Settings) -> str:
    """The API as the local Browser reaches it: ``localhost`` (the host Neo4j's
    ``browser.remote_content_hostname_whitelist`` allows), or 127.0.0.1 if it listens there."""
    host = settings.host
    if host == "127.0.0.1":
        return f"http://127.0.0.1:{settings.port}"
    return f"http://localhost:{settings.port}"


def browser_origins(settings: Settings) -> set[str]:
    """The origins Neo4j Browser is served from by the local Neo4j."""
    port = settings.neo4j_http_port
    return {f"http://localhost:{port}", f"http://127.0.0.1:{port}", f"http://[::1]:{port}"}


def query_body(text: str) -> str:
    """An audit query without its ``//`` header (the part to run)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines) and (lines[i].startswith("//") or not lines[i].strip()):
        i += 1
    return "\n".join(lines[i:]).strip()


def param_lines(example: str, tenant: str) -> list[str]:
    """The ``:param`` commands of an Example header, one per entry; ``tenant`` set to the
    guide's tenant."""
    out = []
    for part in example.split(";"):
        cmd = part.strip()
        if not cmd:
            continue
        if re.match(r":param\s+tenant\s*=>", cmd):
            cmd = f":param tenant => '{tenant}'"
        out.append(cmd)
    return out


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def legend_html(rules: list[GrassRule]) -> str:
    chips = []
    for rule in rules:
        tag, _, label = rule.selector.partition(".")
        if tag != "node" or not label:
            continue
        bg = rule.props.get("color", "#A5ABB6")
        fg = rule.props.get("text-color-internal", "#FFFFFF")
        chips.append(
            '<span style="display:inline-block;margin:2px 4px 2px 0;padding:1px 8px;'
            f'border-radius:10px;font-size:12px;background:{_esc(bg)};color:{_esc(fg)}">'
            f"{_esc(label)}</span>"
        )
    return "\n          ".join(chips)


def audit_slides(queries: list[audit.AuditQuery], tenant: str) -> str:
    """An overview slide, then one slide per audit query (integrity checks last)."""
    ordered = sorted(queries, key=lambda q: (q.name.startswith("integrity_"), q.name))
    items = "\n".join(
        f"          <li><code>{_esc(q.name)}</code>: {_esc(q.purpose)}</li>" for q in ordered
    )
    slides = [
        f"""    <slide class="row-fluid">
      <div class="col-sm-3">
        <h3>Audit queries</h3>
        <p class="lead">Named, read-only queries in <code>cypher/audit/</code>: the same text
          runs here, in cypher-shell and behind <code>GET /v1/audit/&lt;name&gt;</code>.</p>
      </div>
      <div class="col-sm-9">
        <p>Each of the next slides sets the query's parameters with <code>:param</code> (its
          Example), then runs it. The integrity checks must return no rows.</p>
        <ul>
{items}
        </ul>
      </div>
    </slide>"""
    ]
    for q in ordered:
        params = ";\n".join(_esc(line) for line in param_lines(q.example, tenant))
        declared = ", ".join(f"<code>${_esc(n)}</code> ({_esc(t)})" for n, t in q.params.items())
        slides.append(f"""    <slide class="row-fluid">
      <div class="col-sm-3">
        <h3>{_esc(q.name)}</h3>
        <p class="lead">{_esc(q.purpose)}</p>
        <p><strong>Parameters:</strong> {declared or "none"}</p>
        <p><strong>Columns:</strong> {_esc(q.columns)}</p>
        <p style="color:#68707d;font-size:12px">cypher/audit/{_esc(q.name)}.cypher</p>
      </div>
      <div class="col-sm-9">
        <p>1. Set the parameters (click the block, then run it):</p>
        <pre class="code runnable">{params}</pre>
        <p>2. Run the query:</p>
        <pre class="code runnable">{_esc(query_body(q.text))}</pre>
      </div>
    </slide>""")
    return "\n\n".join(slides)


def render_guide(tenant: str, api_base: str, template: str | None = None) -> str:
    """The guide for one tenant, audit slides read from the files now."""
    page = GUIDE_FILE.read_text(encoding="utf-8") if template is None else template
    rules = parse_grass(STYLE_FILE.read_text(encoding="utf-8"))
    page = page.replace(LEGEND_MARK, legend_html(rules))
    page = page.replace(AUDIT_MARK, audit_slides(audit.all_queries(), tenant))
    return page.replace("{{tenant}}", _esc(tenant)).replace("{{api}}", _esc(api_base))


def router(settings: Settings) -> APIRouter:
    r = APIRouter(prefix="/browser", tags=["neo4j browser"])
    origins = browser_origins(settings)

    def cors(request: Request, response: Response) -> Response:
        origin = request.headers.get("origin")
        if origin in origins:
            response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Vary"] = "Origin"
        return response

    def refused(request: Request) -> Response | None:
        host = request.client.host if request.client else None
        if is_loopback(host):
            return None
        return problems.problem(
            403, "forbidden", "the Neo4j Browser files are served to loopback clients only"
        )

    @r.options("/{name}", include_in_schema=False)
    def preflight(name: str, request: Request) -> Response:
        if (denied := refused(request)) is not None:
            return denied
        response = Response(status_code=204)
        if request.headers.get("origin") in origins:
            response.headers["Access-Control-Allow-Methods"] = "GET, OPTIONS"
            response.headers["Access-Control-Allow-Headers"] = ", ".join(_ALLOWED_HEADERS)
            response.headers["Access-Control-Max-Age"] = "600"
            if request.headers.get("access-control-request-private-network") == "true":
                response.headers["Access-Control-Allow-Private-Network"] = "true"
        return cors(request, response)

    @r.get("/style.grass", response_class=PlainTextResponse)
    def style(request: Request) -> Response:
        """The GRASS style (``:style http://localhost:<port>/browser/style.grass``)."""
        if (denied := refused(request)) is not None:
            return denied
        text = STYLE_FILE.read_text(encoding="utf-8")
        return cors(request, PlainTextResponse(text, headers={"Cache-Control": "no-cache"}))

    @r.get("/guide.html", response_class=HTMLResponse)
    def guide(request: Request, tenant: str = "demo") -> Response:
        """The Browser guide (``:play http://localhost:<port>/browser/guide.html``)."""
        if (denied := refused(request)) is not None:
            return denied
        if not _TENANT.fullmatch(tenant):
            return cors(request, problems.problem(
                422, "invalid input", "tenant: letters, digits and _ . @ - only",
                field="tenant"))
        page = render_guide(tenant, str(request.base_url).rstrip("/"))
        return cors(request, HTMLResponse(page, headers={"Cache-Control": "no-cache"}))

    return r
