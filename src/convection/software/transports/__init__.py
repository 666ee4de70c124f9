"""Transports: how Convection acts on a node (a local sandbox, an SSH host).

``SSHPool`` and ``SSHTransport`` are imported on first use (PEP 562): they
bring asyncssh and its cryptography bindings, which a process that never
opens an SSH connection should not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convection.software.transports._ssh_host import SSHHost
from convection.software.transports._supervisor import ServiceInfo
from convection.software.transports.base import (
    FILE_LIMIT,
    OUTPUT_LIMIT,
    AnsibleTarget,
    RunResult,
    Transport,
)
from convection.software.transports.local import LocalNode

if TYPE_CHECKING:
    from convection.software.transports._ssh_pool import SSHPool
    from convection.software.transports.ssh import SSHTransport

__all__ = [
    "FILE_LIMIT",
    "OUTPUT_LIMIT",
    "AnsibleTarget",
    "LocalNode",
    "RunResult",
    "SSHHost",
    "SSHPool",
    "SSHTransport",
    "ServiceInfo",
    "Transport",
]


def __getattr__(name: str) -> Any:
    if name == "SSHPool":
        from convection.software.transports._ssh_pool import SSHPool

        return SSHPool
    if name == "SSHTransport":
        from convection.software.transports.ssh import SSHTransport

        return SSHTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
