"""Errors raised while software configuration runs on a node.

::

    ConvectionError
    └── SoftwareError                 software configuration could not be applied
        ├── InvalidConfig             a config, input or option is malformed
        ├── InputMissing              STRICT get_input named an input that has no value
        ├── HookNotFound              no hook for a config ``group``
        ├── DeploymentInterrupted     a marker without a result, and no rerun_safe
        └── NodeError                 the node could not do what was asked
            ├── SandboxError          a local path escapes the sandbox, a user is unknown
            ├── PrivateKeyError       an SSH private key could not be loaded
            ├── HostUnreachable       TCP/DNS failure or connect timeout
            ├── AuthenticationFailed  the host refused the key
            ├── HostKeyError
            │   ├── HostKeyUnknown    not in known_hosts and trust-on-first-use is off
            │   └── HostKeyMismatch   known_hosts has a different key: always refused
            └── ConnectionLost        the connection dropped while a command ran

A failed *run* (non-zero status, an ``error_output``, a timeout) is not an
exception: it is a :class:`~convection.software.outcome.DeployOutcome` with
status FAILED, so the caller can record outputs and stderr with the failure.
Exceptions are for what stops a run from producing a result at all.

No message carries a secret: no key material, no passphrase, no input value.
Host, port and user are not secret and are kept as fields for the caller.
"""

from __future__ import annotations

from convection.common import ConvectionError


class SoftwareError(ConvectionError):
    """Base of every software-configuration error."""


class InvalidConfig(SoftwareError):
    """A software config, input declaration or option is malformed."""

    def __init__(self, message: str, *, field: str = "") -> None:
        self.message = message
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)

    def __repr__(self) -> str:
        return f"InvalidConfig({self.message!r}, field={self.field!r})"


class InputMissing(SoftwareError):
    """A STRICT StructuredDeployment asked for an input with no value.

    The message is Heat's ``UserParameterMissing`` text.
    """

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"The Parameter ({key}) was not provided.")

    def __repr__(self) -> str:
        return f"InputMissing({self.key!r})"


class HookNotFound(SoftwareError):
    """No hook is registered for a config's ``group``."""

    def __init__(self, group: str, known: tuple[str, ...] = (), detail: str = "") -> None:
        self.group = group
        self.known = known
        self.detail = detail
        text = f"no hook for config group {group!r}"
        if detail:
            text += f" ({detail})"
        if known:
            text += f"; known groups: {', '.join(known)}"
        super().__init__(text)

    def __repr__(self) -> str:
        return f"HookNotFound({self.group!r})"


class DeploymentInterrupted(SoftwareError):
    """A deployment started earlier never finished, and may not run again.

    heat-agents writes its "deployed" marker before running a hook, so a
    config runs at most once. When the marker is there but no result is,
    the earlier run was interrupted (crash, lost connection, reboot) and its
    effects are unknown. Running it again is only safe when the config says
    so with ``options: {rerun_safe: true}``.
    """

    def __init__(self, deployment_id: str, node: str, marker_path: str) -> None:
        self.deployment_id = deployment_id
        self.node = node
        self.marker_path = marker_path
        super().__init__(
            f"deployment {deployment_id} was started on node {node} earlier and did not "
            f"finish; its effects are unknown and its config does not declare "
            f"options.rerun_safe: true, so it is not run again. Check the node, then "
            f"remove {marker_path} on it to run it once more."
        )

    def __repr__(self) -> str:
        return f"DeploymentInterrupted({self.deployment_id!r}, node={self.node!r})"


class NodeError(SoftwareError):
    """A node (local sandbox or SSH host) could not do what was asked."""

    def __init__(self, node: str, message: str) -> None:
        self.node = node
        self.message = message
        super().__init__(f"node {node}: {message}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.node!r}, {self.message!r})"


class SandboxError(NodeError):
    """A local-node request would leave its sandbox, or cannot be honoured."""


class PrivateKeyError(NodeError):
    """The SSH private key could not be loaded. Says where it came from, never what it is."""

    def __init__(self, node: str, source: str) -> None:
        self.source = source
        super().__init__(node, f"the SSH private key from {source} could not be loaded")


class _HostError(NodeError):
    """An error about one SSH endpoint; host, port and user are fields."""

    def __init__(self, host: str, port: int, username: str, message: str) -> None:
        self.host = host
        self.port = port
        self.username = username
        super().__init__(f"{username}@{host}:{port}", message)


class HostUnreachable(_HostError):
    """No TCP connection could be made (refused, no route, DNS, timeout)."""

    def __init__(self, host: str, port: int, username: str, reason: str) -> None:
        self.reason = reason
        super().__init__(host, port, username, f"host unreachable: {reason}")


class AuthenticationFailed(_HostError):
    """The host refused public-key authentication for this user and key."""

    def __init__(self, host: str, port: int, username: str) -> None:
        super().__init__(
            host, port, username, "authentication failed: the host refused the key for this user"
        )


class HostKeyError(_HostError):
    """The host's key could not be verified."""

    def __init__(self, host: str, port: int, username: str, known_hosts: str, message: str) -> None:
        self.known_hosts = known_hosts
        super().__init__(host, port, username, message)


class HostKeyUnknown(HostKeyError):
    """The host is not in known_hosts and trust-on-first-use is off."""

    def __init__(self, host: str, port: int, username: str, known_hosts: str) -> None:
        super().__init__(
            host,
            port,
            username,
            known_hosts,
            f"host key not verifiable: the host is not in {known_hosts} and "
            f"trust_on_first_use is off",
        )


class HostKeyMismatch(HostKeyError):
    """known_hosts holds a different key for the host. Refused, even with TOFU."""

    def __init__(self, host: str, port: int, username: str, known_hosts: str, offered: str) -> None:
        self.offered = offered
        super().__init__(
            host,
            port,
            username,
            known_hosts,
            f"HOST KEY MISMATCH: the host offered {offered}, which is not the key recorded "
            f"in {known_hosts}; refusing to connect (possible man-in-the-middle, or the "
            f"host was rebuilt: remove its old entry only after checking)",
        )


class ConnectionLost(_HostError):
    """The SSH connection dropped while a command was running."""

    def __init__(self, host: str, port: int, username: str, during: str) -> None:
        self.during = during
        super().__init__(
            host, port, username, f"connection lost while {during}; the result is unknown"
        )
