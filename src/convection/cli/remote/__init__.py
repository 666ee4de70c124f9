"""The CLI against a server: ``--url`` (``CONVECTION_URL``) and ``--token``.

:class:`~convection.cli.remote.stacks.RemoteStacks` answers the stack
commands through Heat's REST API with the shapes and exceptions of
:class:`~convection.service.stacks.Stacks`, so a command cannot tell which one it
called. This package's ``__init__`` stays free of httpx: ``--wait``'s
progress imports :mod:`.watch` in every mode, and embedded commands should
not pay for the HTTP stack.

Commands that work on the store itself have no route to call; with a URL
set they refuse (exit 2, a usage error) instead of silently opening a local
database the user did not mean.
"""

from __future__ import annotations

import typer

from convection.cli.output import stderr

#: Commands that need the store, and what to do instead.
LOCAL_ONLY = {
    "engine": "the server runs the engine itself",
    "server": "it serves a store of its own (--db)",
    "token": "tokens are made on the server's store: run it where --db opens that store",
    "status": "it reads the processes' rows in the store: run it where --db opens that store",
}

#: Exit code of a command refused for the mode it runs in (click's usage error).
REFUSED = 2


def refuse_local_only(command: str | None, url: str | None) -> None:
    """Stop with exit 2 when ``command`` needs a store but a URL is set."""
    if command not in LOCAL_ONLY or url is None:
        return
    stderr.print(
        f"error: `convection {command}` has no server route ({LOCAL_ONLY[command]}); "
        "it works on a local store, so it cannot run with --url or CONVECTION_URL set. "
        "Unset them to run it here.",
        markup=False,
        highlight=False,
    )
    raise typer.Exit(REFUSED)
