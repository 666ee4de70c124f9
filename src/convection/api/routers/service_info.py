"""Build info, versions and health: what the service is and whether it runs."""

from __future__ import annotations

import importlib.metadata
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from convection.api import openapi
from convection.api.auth import Reader
from convection.api.routers._common import PREFIX

router = APIRouter(tags=["service"])


def _revision() -> str:
    try:
        return importlib.metadata.version("convection")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@router.get(PREFIX + "/build_info", summary="Build info")
def build_info(principal: Reader) -> dict[str, Any]:
    revision = _revision()
    return {"api": {"revision": revision}, "engine": {"revision": revision}}


@router.get(
    "/",
    summary="API versions (Heat's v1, Mistral's v2)",
    status_code=300,
    responses=openapi.redirect("A browser (Accept: text/html) is sent to the dashboard.", 303),
)
def versions(request: Request) -> Response:
    """Both APIs' versions, so heatclient and mistralclient each find their
    own; 300 and v1 first, as heatclient's discovery expects of Heat. A
    browser (it asks for HTML first) is sent to the dashboard instead."""
    if request.headers.get("accept", "").startswith("text/html"):
        return RedirectResponse("/stacks", status_code=303)
    base = str(request.base_url).rstrip("/")
    body = {
        "versions": [
            {"id": "v1.0", "status": "CURRENT", "links": [{"rel": "self", "href": base + "/v1/"}]},
            {
                "id": "v2.0",
                "status": "CURRENT",
                "links": [{"href": base + "/v2", "target": "v2", "rel": "self"}],
            },
        ]
    }
    return JSONResponse(body, status_code=300)


@router.get(
    "/healthz",
    summary="Health: the store answers and the engine runs",
    responses={503: {"description": "The store does not answer or the engine stopped."}},
)
def healthz(request: Request) -> JSONResponse:
    engine = request.app.state.engine_thread
    checks: dict[str, Any] = {"engine": "off" if engine is None else "ok"}
    if engine is not None and not engine.alive:
        checks["engine"] = "stopped"
    try:
        request.app.state.stacks.list(None, limit=1)
        checks["store"] = "ok"
    except Exception as exc:  # the health answer, not an error page
        checks["store"] = f"error: {type(exc).__name__}"
    healthy = checks["store"] == "ok" and checks["engine"] in ("ok", "off")
    body = {"status": "ok" if healthy else "unhealthy", "checks": checks}
    return JSONResponse(body, status_code=200 if healthy else 503)
