"""How to reach an SSH host: the description, without the connection code.

Kept apart from ``_ssh_pool`` so that what only describes a host (a
resource's properties, a deployment's target) does not import asyncssh and
its cryptography bindings, about 13 MB and 0.1 s in every process that
never opens an SSH connection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

#: Concurrent channels per host by default: below sshd's MaxSessions of 10,
#: leaving room for the short commands a run needs (upload, kill).
DEFAULT_SESSIONS_PER_HOST: Final = 4
DEFAULT_CONNECT_TIMEOUT: Final = 15.0
#: Send a keepalive this often; three unanswered ones drop the connection,
#: so a dead host is noticed in under a minute even when nothing is sent.
KEEPALIVE_INTERVAL: Final = 15.0


@dataclass(frozen=True, slots=True)
class SSHHost:
    """How to reach one SSH host. Key material and passphrase never show in repr.

    Give the key as ``private_key_path`` or as ``private_key`` (the text, e.g.
    a hidden parameter's value). ``known_hosts`` is required: verification is
    always on. ``trust_on_first_use`` records an unknown host's key in that
    file on first contact; a changed key is refused regardless.
    ``workdir`` is Convection's footprint on the host (absolute); by default
    ``$HOME/.convection/<node name>`` of the login user. ``sudo`` runs every
    command through ``sudo -n`` (no password prompt, ever).
    """

    host: str
    username: str
    known_hosts: Path
    port: int = 22
    private_key_path: Path | None = None
    private_key: str | None = field(default=None, repr=False)
    passphrase: str | None = field(default=None, repr=False)
    trust_on_first_use: bool = False
    sudo: bool = False
    workdir: str | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.host, self.port, self.username)

    @property
    def label(self) -> str:
        return f"{self.username}@{self.host}:{self.port}"


def known_hosts_entry_name(host: str, port: int) -> str:
    """The host field OpenSSH writes: ``host`` on port 22, else ``[host]:port``."""
    return host if port == 22 else f"[{host}]:{port}"
