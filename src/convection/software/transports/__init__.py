"""Transports: how Convection acts on a node (a local sandbox, an SSH host)."""

from __future__ import annotations

from convection.software.transports._ssh_pool import SSHHost, SSHPool
from convection.software.transports._supervisor import ServiceInfo
from convection.software.transports.base import (
    FILE_LIMIT,
    OUTPUT_LIMIT,
    AnsibleTarget,
    RunResult,
    Transport,
)
from convection.software.transports.local import LocalNode
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
