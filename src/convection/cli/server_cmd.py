"""``convection server``: the Heat-compatible API and the engine, in one process.

The engine takes up every operation a previous process left in progress
as it starts. SIGINT or SIGTERM stops the server gracefully: no new
requests, the engine stops starting work and running jobs record their
outcome, so whatever is left is resumed by the next server or engine.

``--no-auth`` accepts any token and takes the project from the URL; it is
refused unless the server listens on a loopback address only.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Annotated

import typer

from convection.cli.context import invocation, redact_url
from convection.errors import InvalidInput

log = logging.getLogger("convection.server")

DEFAULT_BIND = "127.0.0.1:8004"


def parse_bind(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> (host, port)."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidInput.single(f"--bind {value!r}: expected HOST:PORT, e.g. {DEFAULT_BIND}")
    return host.removeprefix("[").removesuffix("]"), int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def server(
    ctx: typer.Context,
    bind: Annotated[
        str, typer.Option("--bind", metavar="HOST:PORT", help="Address to listen on.")
    ] = DEFAULT_BIND,
    db: Annotated[
        str | None,
        typer.Option(
            "--db", metavar="URL", help="Store URL (as the global --db).", show_default=False
        ),
    ] = None,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth",
            help="Accept any token; the tenant id in the URL is the project. Loopback only.",
        ),
    ] = False,
) -> int:
    """Serve Heat's orchestration API v1 (python-heatclient and `openstack stack`
    work against it) and run the engine. OpenAPI documentation is at /docs,
    health at /healthz."""
    host, port = parse_bind(bind)
    if no_auth and not is_loopback(host):
        raise InvalidInput.single(
            f"--no-auth is refused on {host}: it would let anyone on the network act in any "
            "project. Bind to a loopback address (127.0.0.1, ::1) or drop --no-auth."
        )
    if not no_auth:
        raise InvalidInput.single(
            "token authentication is not available yet; run with --no-auth on a loopback address"
        )
    # Imported here: every other command starts faster without the web stack.
    import uvicorn

    from convection.api import ApiSettings, create_app
    from convection.api import logs as api_logs

    inv = invocation(ctx)
    if db is not None:
        inv.flags["db"] = db
    stacks = inv.stacks
    api_logs.configure()
    app = create_app(stacks, ApiSettings())
    log.info(
        "Convection API on http://%s:%d/v1/{project} (store %s, no auth)",
        bind.rpartition(":")[0],
        port,
        redact_url(inv.db_url),
    )
    config = uvicorn.Config(
        app, host=host, port=port, log_config=None, access_log=False, lifespan="on"
    )
    uvicorn.Server(config).run()
    return 0
