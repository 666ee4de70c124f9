"""``ctx.api``: the REST API as the machines a stack builds reach it.

Plugins mint narrowed credentials (a WaitConditionHandle's signal token, a
pull agent's server token) through :class:`ApiAccess`, never through the
store, so the engine decides which project and stack a token belongs to:
always the stack the plugin works in. The tokens go through
:class:`~convection.tokens._tokens.Tokens` on the engine's own store, so a server
sharing that store verifies them.

Only an engine configured with an API URL (``Settings.api_url``;
``convection server`` sets it) hands plugins one: without a reachable URL a
signal URL would be a lie, and handles fall back to CLI commands.
"""

from __future__ import annotations

from convection.resources import ApiAccess
from convection.store import StackRecord, Store
from convection.tokens import Tokens


def api_access(store: Store, url: str | None, stack: StackRecord) -> ApiAccess | None:
    """The API access for plugins working in ``stack``, or None without a URL."""
    if url is None:
        return None
    tokens = Tokens(store)

    def signal_token(resource_name: str) -> str:
        return tokens.issue_signal(stack.project, stack.id, resource_name).secret

    def server_token(server_id: str) -> str:
        return tokens.issue_server(stack.project, server_id, stack_id=stack.id).secret

    def revoke(secret: str) -> None:
        found = tokens.verify(secret)
        # Only this stack's narrowed tokens: a plugin cannot revoke others.
        if found is not None and found.stack_id == stack.id:
            tokens.revoke(found.id)

    return ApiAccess(url.rstrip("/"), stack.project, signal_token, server_token, revoke)
