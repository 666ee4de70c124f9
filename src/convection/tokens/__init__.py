"""API tokens on the store: issue, list, revoke and verify credentials.

Below the engine because the engine uses them too: plugins mint narrowed
signal tokens (``ctx.api``), and a deleted stack's tokens are revoked by
the engine before ``DELETE_COMPLETE`` is written. Only a secret's SHA-256
is stored. Imports only ``store`` and ``common``.
"""

from convection.tokens._tokens import Role, Tokens

__all__ = ["Role", "Tokens"]
