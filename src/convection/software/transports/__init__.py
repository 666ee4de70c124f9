"""Transports: how Convection acts on a node (a local sandbox, an SSH host).

``SSHPool`` and ``SSHTransport`` are imported on first use (PEP 562): they
bring asyncssh and its cryptography bindings, which a process that never
opens an SSH connection should not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convection.software.transports._ssh_host import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_SESSIONS_PER_HOST,
    KEEPALIVE_INTERVAL,
    SSHHost,
    known_hosts_entry_name,
)
from convection.software.transports._supervisor import ServiceInfo
from convection.software.transports.base import (
    FILE_LIMIT,
    OUTPUT_LIMIT,
    AnsibleTarget,
    FileBatch,
    FileWrite,
    RunResult,
    Transport,
)
from convection.software.transports.local import LocalNode

if TYPE_CHECKING:
    from convection.software.transports._ssh_pool import SSHPool, open_connection
    from convection.software.transports.ssh import SSHTransport

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_SESSIONS_PER_HOST",
    "FILE_LIMIT",
    "KEEPALIVE_INTERVAL",
    "OUTPUT_LIMIT",
    "AnsibleTarget",
    "FileBatch",
    "FileWrite",
    "LocalNode",
    "RunResult",
    "SSHHost",
    "SSHPool",
    "SSHTransport",
    "ServiceInfo",
    "Transport",
    "known_hosts_entry_name",
    "open_connection",
]


if not TYPE_CHECKING:  # mypy sees the imports above, never an Any-typed getattr

    def __getattr__(name: str) -> Any:
        if name in ("SSHPool", "open_connection"):
            from convection.software.transports import _ssh_pool

            return getattr(_ssh_pool, name)
        if name == "SSHTransport":
            from convection.software.transports.ssh import SSHTransport

            return SSHTransport
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
