"""The API's documentation pages, offline: ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), their
JavaScript, CSS and icon served by the app itself from the installed package ``fastapi-offline``
(under ``/docs/static``). FastAPI's own pages load these files from a CDN, which a machine
without internet cannot reach; so `create_app` turns those off and calls `install` instead.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC = "/docs/static"
SWAGGER_JS, SWAGGER_CSS = "swagger-ui-bundle.js", "swagger-ui.css"
REDOC_JS, FAVICON = "redoc.standalone.js", "favicon.png"


def assets() -> Path:
    """The folder of the Swagger UI and ReDoc files in the installed fastapi-offline package."""
    return Path(str(resources.files("fastapi_offline") / "static"))


def install(app: FastAPI) -> None:
    """Serve ``/docs``, ``/redoc`` and their files (the app was made with both URLs off)."""
    app.mount(STATIC, StaticFiles(directory=assets()), name="docs-static")

    def base(request: Request) -> str:
        return str(request.scope.get("root_path", "")).rstrip("/")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = base(request)
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{STATIC}/{SWAGGER_JS}",
            swagger_css_url=f"{root}{STATIC}/{SWAGGER_CSS}",
            swagger_favicon_url=f"{root}{STATIC}/{FAVICON}",
            oauth2_redirect_url=None,
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = base(request)
        return get_redoc_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{STATIC}/{REDOC_JS}",
            redoc_favicon_url=f"{root}{STATIC}/{FAVICON}", with_google_fonts=False,
        )
