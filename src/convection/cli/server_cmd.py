"""``convection server``: the Heat-compatible API and the engine, in one process.

The engine takes up every operation a previous process left in progress
as it starts. SIGINT or SIGTERM stops the server gracefully: no new
requests, the engine stops starting work and running jobs record their
outcome, so whatever is left is resumed by the next server or engine.

Every request needs an ``X-Auth-Token`` made by ``convection token create``
on the same store (:mod:`convection.tokens._tokens`); the token's project and role
decide what it may do. ``--no-auth`` accepts any token and takes the project
from the URL; it is refused unless the server listens on a loopback address
only. The startup log says which mode runs (and never shows a token).
"""

from __future__ import annotations

import ipaddress
import logging
from typing import TYPE_CHECKING, Annotated

import typer

from convection.cli.context import invocation, redact_url
from convection.common import InvalidInput

if TYPE_CHECKING:
    from convection.api import Authenticator
    from convection.store import Store

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
    no_engine: Annotated[
        bool,
        typer.Option(
            "--no-engine",
            help="Serve the APIs only; `convection engine` processes on the same --db do the work.",
        ),
    ] = False,
) -> int:
    """Serve Heat's orchestration API v1 (python-heatclient and `openstack stack`
    work against it) and Mistral's v2, and run the engine. Requests need an
    X-Auth-Token from `convection token create` on the same --db. OpenAPI
    documentation is at /docs, health at /healthz."""
    host, port = parse_bind(bind)
    if no_auth and not is_loopback(host):
        raise InvalidInput.single(
            f"--no-auth is refused on {host}: it would let anyone on the network act in any "
            "project. Bind to a loopback address (127.0.0.1, ::1) or drop --no-auth."
        )
    # Imported here: every other command starts faster without the web stack.
    import uvicorn

    from convection.api import ApiSettings, configure_logging, create_app

    inv = invocation(ctx)
    if db is not None:
        inv.set_flag("db", db)
    # Signal URLs (a handle's curl_cli) point here unless CONVECTION_API_URL
    # names the address machines outside reach (a proxy, a 0.0.0.0 bind).
    inv.default("api_url", f"http://{bind}")
    stacks = inv.local_stacks
    configure_logging()
    authenticator = _authenticator(stacks.store, no_auth=no_auth)
    settings = ApiSettings(
        run_engine=not no_engine,
        store_url=inv.db_url,
        rate_limit=float(inv.settings.api_rate_limit),
        rate_limit_burst=inv.settings.api_rate_burst,
    )
    app = create_app(stacks, settings, authenticator=authenticator)
    log.info(
        "Convection API on http://%s:%d/v1/{project} (store %s, %s)",
        bind.rpartition(":")[0],
        port,
        redact_url(inv.db_url),
        "no auth" if no_auth else "token auth",
    )
    if no_engine:
        log.info("No engine here (--no-engine): `convection engine` on this store does the work")
    if not no_auth:
        _hint_without_tokens(stacks.store, inv.command())
    config = uvicorn.Config(
        app, host=host, port=port, log_config=None, access_log=False, lifespan="on"
    )
    uvicorn.Server(config).run()
    return 0


def _authenticator(store: Store, *, no_auth: bool) -> Authenticator:
    """Tokens from the server's own store, unless ``--no-auth``.

    Each request verifies its token against the store, so a token made or
    revoked by ``convection token`` in another process counts at once.
    """
    from convection.api import OpenAccess, TokenAuthenticator
    from convection.tokens import Tokens

    return OpenAccess() if no_auth else TokenAuthenticator(Tokens(store))


def _hint_without_tokens(store: Store, command: str) -> None:
    """A server no one can use yet says how to let someone in: no live
    project token (narrowed ones only signal or serve an agent)."""
    from datetime import UTC, datetime

    from convection.tokens import Tokens

    now = datetime.now(UTC)
    usable = (
        t.revoked_at is None
        and (t.expires_at is None or t.expires_at > now)
        and t.resource_name is None
        and t.server_id is None
        for t in Tokens(store).list()
    )
    if not any(usable):
        log.warning(
            "no API tokens exist yet; every request will get 401. Make one with: "
            "%s token create --project PROJECT --role admin",
            command,
        )
