"""``convection agent``: run a server's deployments, pulled from the API.

For a machine the engine cannot reach (``OS::Heat::DeployedServer``): start
it there with the URL, server id and token from the server resource's
``os_collect_config`` attribute (its ``convection.command`` is the whole
command line). The token may also come from ``CONVECTION_AGENT_TOKEN``, so
it need not show in the process list; it is never logged.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import platformdirs
import typer

from convection.common import InvalidInput

log = logging.getLogger("convection.agent")


def _state_dir(server_id: str, given: Path | None) -> Path:
    if given is not None:
        return given
    return Path(platformdirs.user_state_dir("convection")) / "agent" / server_id


def agent(
    url: Annotated[str, typer.Option(help="The API endpoint, http://HOST:PORT/v1/PROJECT.")],
    server_id: Annotated[str, typer.Option("--server-id", help="This server's id.")],
    token: Annotated[
        str,
        typer.Option(
            envvar="CONVECTION_AGENT_TOKEN",
            help="The server's agent token (or CONVECTION_AGENT_TOKEN).",
            show_default=False,
        ),
    ],
    project: Annotated[
        str | None, typer.Option(help="The project, when --url is the bare server URL.")
    ] = None,
    state_dir: Annotated[
        Path | None,
        typer.Option("--state-dir", help="Where runs and reports are recorded."),
    ] = None,
    once: Annotated[bool, typer.Option("--once", help="Poll once, then exit.")] = False,
    interval: Annotated[float, typer.Option(min=0.1, help="Seconds between polls.")] = 30.0,
) -> int:
    """Poll this server's deployments, run each once with the same hooks as
    push mode, and report the results."""
    import asyncio

    from convection.agent import Agent, AgentClient, AgentHttpError, AgentState, endpoint

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        base = endpoint(url, project)
    except AgentHttpError as exc:
        raise InvalidInput.single(str(exc)) from None
    state = AgentState(_state_dir(server_id, state_dir))
    client = AgentClient(base, server_id, token)
    log.info("agent for server %s polling %s every %.1f s", server_id, base, interval)
    try:
        asyncio.run(Agent(client, state).run(interval=interval, once=once))
    except AgentHttpError as exc:
        raise InvalidInput.single(str(exc)) from None
    except KeyboardInterrupt:
        return 0
    finally:
        client.close()
    return 0
