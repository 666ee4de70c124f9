"""Convection::SSH::Host: an existing machine reached over SSH.

Creating one proves the host can be reached: it connects (verifying the
host key), records the key it verified, and makes Convection's working
directory there. Deleting it removes that directory and nothing else; the
host itself is never touched.

Host keys, always verified:

* ``host_key`` (a public key, ``ALGORITHM BASE64``) trusts exactly that key;
* otherwise the operator's ``known_hosts`` file (default
  ``~/.ssh/known_hosts`` of the engine's user) decides;
* ``trust_on_first_use: true`` accepts a host that neither names, once.

Whichever way the key was verified at create, it is then **pinned** in the
resource's ``data``, and every later connection (deployments, delete, a
re-run after a crash) trusts that key alone: a host that later presents a
different key is refused, TOFU or not, until the resource is replaced.

The private key is ``private_key`` (its text, e.g. a hidden parameter),
``private_key_file`` (a path on the engine's machine) or Nova's
``key_name`` (:mod:`._ssh_props`). No key is ever written to ``data``, an
event or a message. Key files, like ``known_hosts``, are the operator's
files, read by the engine where it runs: they are not template files, so
they are not confined to the template's directory and are not sent in
``files``; relative paths are refused (they would depend on the engine's
working directory) and ``~`` is the engine user's home.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import posixpath
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final

from convection.common import JSON, Diagnostic
from convection.common import Path as SchemaPath
from convection.hot import Range
from convection.resources._context import Peer, ResourceContext
from convection.resources._plugin import Properties, ResourceFailure, ResourcePlugin, Token
from convection.resources._schema import (
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
)
from convection.resources.nodes import _ssh_props as _props
from convection.resources.nodes._common import (
    KIND_KEY,
    NAME_PROPERTY,
    NOVA_PROPERTIES,
    SSH_KIND,
    network_attributes,
    node_name,
    server_attributes,
)
from convection.resources.nodes._ssh_pools import shared_pool
from convection.software import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_SESSIONS_PER_HOST,
    KEEPALIVE_INTERVAL,
    FileBatch,
    FileWrite,
    NodeError,
    SSHHost,
    known_hosts_entry_name,
    node_root,
    safe_dir_name,
)

if TYPE_CHECKING:  # imported where used: they bring asyncssh
    from convection.software import SSHPool, SSHTransport

SSH_HOST_TYPE: Final = "Convection::SSH::Host"
#: The network name in Nova-shaped address attributes.
SSH_NETWORK: Final = "ssh"
DEFAULT_KNOWN_HOSTS: Final = "~/.ssh/known_hosts"
#: Written in the working dir at create: ``check`` reads it back.
MARKER_FILE: Final = ".convection-node"


def _string(description: str, **kw: Any) -> PropertySchema:
    return PropertySchema(type=PropertyType.STRING, description=description, **kw)


class SSHHostResource(ResourcePlugin):
    """An existing SSH host. Physical id: a name unique to this resource version."""

    type_name = SSH_HOST_TYPE
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        **NOVA_PROPERTIES,
        "networks": PropertySchema(
            type=PropertyType.ANY,
            description="Nova's networks: the first fixed_ip is the host when host is not "
            "given (a change replaces the resource).",
        ),
        "key_name": PropertySchema(
            type=PropertyType.ANY,
            description="Nova's key_name: the operator's key of that name in "
            "$CONVECTION_SSH_KEY_DIR (default ~/.ssh), when no other key is given.",
            update_allowed=True,
        ),
        "name": PropertySchema(
            type=PropertyType.STRING,
            description=NAME_PROPERTY.description + " Also the host to reach when "
            "neither host nor a networks fixed_ip is given.",
        ),
        "host": _string(
            "Host name or address to connect to; default: the first networks fixed_ip, else name."
        ),
        "port": PropertySchema(
            type=PropertyType.INTEGER,
            description="SSH port.",
            default=22,
            constraints=(Range(min=1, max=65535),),
        ),
        "user": _string("Login user; default: the engine's user."),
        "private_key": _string(
            "The private key's text (give it from a hidden parameter).", update_allowed=True
        ),
        "private_key_file": _string(
            "Absolute path (or ~/...) of the private key on the engine's machine.",
            update_allowed=True,
        ),
        "passphrase": _string("Passphrase of an encrypted private key.", update_allowed=True),
        "known_hosts": _string(
            "The operator's known_hosts file the host key is checked against at create.",
            default=DEFAULT_KNOWN_HOSTS,
        ),
        "host_key": _string(
            "The host's public key (ALGORITHM BASE64) to trust instead of known_hosts."
        ),
        "trust_on_first_use": PropertySchema(
            type=PropertyType.BOOLEAN,
            description="Accept an unknown host's key at create, then pin it. A changed "
            "key is always refused.",
            default=False,
        ),
        "sudo": PropertySchema(
            type=PropertyType.BOOLEAN,
            description="Run every command through sudo -n (passwordless sudo).",
            default=False,
            update_allowed=True,
        ),
        "workdir": _string(
            "Absolute directory Convection owns on the host (deleted with the resource); "
            "default: ~/.convection/<physical resource name> of the login user."
        ),
        "max_sessions": PropertySchema(
            type=PropertyType.INTEGER,
            description="Commands run at once on this host (keep below sshd's MaxSessions).",
            default=DEFAULT_SESSIONS_PER_HOST,
            constraints=(Range(min=1, max=64),),
            update_allowed=True,
        ),
        "connect_timeout": PropertySchema(
            type=PropertyType.NUMBER,
            description="Seconds to wait for the connection.",
            default=DEFAULT_CONNECT_TIMEOUT,
            constraints=(Range(min=1),),
            update_allowed=True,
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = server_attributes(
        {
            "port": AttributeSchema("The SSH port.", AttributeType.INTEGER),
            "user": AttributeSchema("The login user.", AttributeType.STRING),
            "workdir": AttributeSchema("Convection's directory on the host.", AttributeType.STRING),
            "host_key": AttributeSchema("The pinned host key's fingerprint.", AttributeType.STRING),
        }
    )

    @classmethod
    def validate_values(
        cls,
        values: Properties,
        path: SchemaPath,
        *,
        strict: bool,
        stack_timeout: float | None,
    ) -> list[Diagnostic]:
        return _props.validate(values, path, strict=strict)

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        """Record the target, connect (verifying the key), make the working dir.

        Two durable writes, each one journal commit: the target and the id
        before connecting (so a delete after a crash knows where to look),
        then the pin and the working dir together (the pin alone when the
        working dir fails, so a delete cleans up). A crash between them
        leaves no pin, so a re-run verifies the host afresh by the
        template's rule; one after them finds both and does nothing.
        """
        record = dict(ctx.data) or _record(ctx, props)
        if not ctx.data:
            await asyncio.gather(
                ctx.set_data(record), ctx.set_physical_id(ctx.physical_resource_name)
            )
        changed = False
        if not isinstance(record.get("host_key"), str):
            key, fingerprint = await _first_contact(ctx, props, record)
            record.update(host_key=key, host_key_fingerprint=fingerprint)
            changed = True
        if not isinstance(record.get("workdir"), str):
            try:
                record["workdir"] = await _make_workdir(ctx, props, record)
            except ResourceFailure:
                # Something may be on the host now: keep the pin, so a delete removes it.
                await ctx.set_data(record)
                raise
            changed = True
        if changed:
            await ctx.set_data(record)
        return None

    async def update(self, ctx: ResourceContext, props: Properties) -> Token:
        """Keys, sudo and limits apply to the next connection; the rest replace."""
        record = dict(ctx.data)
        record.update(
            sudo=bool(props.get("sudo")),
            max_sessions=int(props.get("max_sessions") or DEFAULT_SESSIONS_PER_HOST),
            connect_timeout=float(props.get("connect_timeout") or DEFAULT_CONNECT_TIMEOUT),
            name=node_name(props, ctx.physical_resource_name),
        )
        await ctx.set_data(record)
        return None

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        """Remove the working dir; nothing else on the host is touched."""
        data = ctx.data
        if not isinstance(data.get("host_key"), str):
            return None  # never connected: nothing was placed on the host
        peerish = _PeerData(data, props)
        transport = _transport(peerish, _shared_pool(peerish))
        await _failing(transport.remove_footprint())
        _known_hosts_file(data).unlink(missing_ok=True)
        return None

    async def check(self, ctx: ResourceContext, props: Properties) -> str | None:
        """The host still answers with the pinned key, and the working dir is there."""
        data = ctx.data
        workdir = data.get("workdir")
        if not isinstance(data.get("host_key"), str) or not isinstance(workdir, str):
            return "the host was never reached"
        peerish = _PeerData(data, props)
        transport = _transport(peerish, _shared_pool(peerish))
        try:
            # A read, not a run: a run would make the working dir again.
            marker = await transport.get_file(posixpath.join(workdir, MARKER_FILE))
        except NodeError as exc:
            return str(exc)
        return None if marker is not None else f"the working dir {workdir} is missing"

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        data = ctx.data
        attrs: dict[str, JSON] = {
            "name": data.get("name"),
            "instance_name": data.get("name"),
            "port": data.get("port"),
            "user": data.get("user"),
            "workdir": data.get("workdir"),
            "host_key": data.get("host_key_fingerprint"),
            **network_attributes(str(data.get("host")), SSH_NETWORK),
        }
        attrs["show"] = dict(attrs)
        return attrs.get(name)


# -- the record ---------------------------------------------------------------


def _record(ctx: ResourceContext, props: Properties) -> dict[str, JSON]:
    """What every later connection needs, except secrets (read from properties)."""
    name = node_name(props, ctx.physical_resource_name)
    host = _props.host_of(props)
    if host is None:
        raise ResourceFailure("properties.host: a host name or address is required")
    workdir = props.get("workdir")
    return {
        KIND_KEY: SSH_KIND,
        "name": name,
        "dir_name": safe_dir_name(ctx.physical_resource_name),
        "host": host,
        "port": int(props.get("port") or 22),
        "user": str(props.get("user") or getpass.getuser()),
        "sudo": bool(props.get("sudo")),
        "max_sessions": int(props.get("max_sessions") or DEFAULT_SESSIONS_PER_HOST),
        "connect_timeout": float(props.get("connect_timeout") or DEFAULT_CONNECT_TIMEOUT),
        "requested_workdir": workdir if isinstance(workdir, str) and workdir else None,
    }


class _PeerData:
    """The fields a transport is built from: ``data`` plus secret properties."""

    def __init__(self, data: Mapping[str, Any], props: Mapping[str, Any]) -> None:
        self.data = data
        self.properties = props


async def _first_contact(
    ctx: ResourceContext, props: Properties, record: Mapping[str, Any]
) -> tuple[str, str]:
    """Connect on a fresh connection (never a pooled one another resource
    verified), checking the host key by the template's rule, and return the
    key to pin (``ALGORITHM BASE64``) and its fingerprint.

    Why the connection is then handed to the shared pool: a handshake costs
    the host far more than anything the create does on it, and the pool for
    the pinned key is exactly where later connections to this host go. The
    connection presented the pinned key, so it is as trusted as any the
    pool would open itself with only the pin in known_hosts.
    """
    known = _known_hosts_dir() / f"{record['dir_name']}.create"
    text, source = _create_known_hosts(props, record)
    _write_private(known, text)
    tofu = bool(props.get("trust_on_first_use"))
    host = _ssh_host(_PeerData(record, props), known, tofu=tofu)
    try:
        from convection.software import open_connection  # asyncssh: on use

        conn = await open_connection(host, KEEPALIVE_INTERVAL)
    except NodeError as exc:
        # Name what the user gave, not the private copy it was read into.
        raise ResourceFailure(str(exc).replace(str(known), source)) from None
    finally:
        known.unlink(missing_ok=True)
    key = conn.get_server_host_key()
    if key is None:
        conn.close()
        raise ResourceFailure(f"{host.label}: the host presented no key")
    algorithm, blob = key.export_public_key("openssh").decode().split()[:2]
    pinned = {**record, "host_key": f"{algorithm} {blob}"}
    await _shared_pool(_PeerData(pinned, props)).adopt(_pinned_host(_PeerData(pinned, props)), conn)
    fingerprint = f"{key.get_algorithm()} {key.get_fingerprint('sha256')}"
    how = " (trust on first use allowed)" if tofu else ""
    await ctx.emit(f"pinned host key {fingerprint} of {host.label}{how}")
    return f"{algorithm} {blob}", fingerprint


def _create_known_hosts(props: Properties, record: Mapping[str, Any]) -> tuple[str, str]:
    """The known_hosts text the first contact is verified against, and where
    it came from (for messages)."""
    host_key = props.get("host_key")
    if isinstance(host_key, str) and host_key.strip():
        parts = host_key.split()
        if len(parts) < 2:
            raise ResourceFailure("properties.host_key: expected 'ALGORITHM BASE64' (a public key)")
        entry = known_hosts_entry_name(str(record["host"]), int(record["port"]))
        return f"{entry} {parts[0]} {parts[1]}\n", "the host_key property"
    path = _props.operator_path(str(props.get("known_hosts") or DEFAULT_KNOWN_HOSTS), "known_hosts")
    try:
        return path.read_text(), str(path)
    except FileNotFoundError:
        return "", str(path)
    except OSError as exc:
        raise ResourceFailure(
            f"properties.known_hosts: cannot read {path}: {exc.strerror}"
        ) from None


async def _make_workdir(ctx: ResourceContext, props: Properties, record: Mapping[str, Any]) -> str:
    """Make the working dir and its marker in one batch (one channel)."""
    transport = _transport(_PeerData(record, props), _shared_pool(_PeerData(record, props)))
    marker = f"Convection's working dir for {record['name']}; removed with it.\n"
    try:
        workdir = await transport.workdir()
        write = FileWrite(posixpath.join(workdir, MARKER_FILE), marker.encode())
        await transport.apply(FileBatch(make_dirs=(workdir,), write=(write,)))
    except NodeError as exc:
        raise ResourceFailure(str(exc)) from None
    return workdir


# -- transports ---------------------------------------------------------------


def _shared_pool(peer: _PeerData | Peer) -> SSHPool:
    sessions = int(peer.data.get("max_sessions") or DEFAULT_SESSIONS_PER_HOST)
    return shared_pool(sessions, str(peer.data.get("host_key")))


def _transport(peer: _PeerData | Peer, pool: SSHPool) -> SSHTransport:
    data = peer.data
    # Until the working dir is recorded, the transport's name picks its default
    # path: the resource version's own, so a replacement never shares it.
    name = data.get("name") if data.get("workdir") else data["dir_name"]
    from convection.software import SSHTransport  # asyncssh: on use

    try:
        return SSHTransport(_pinned_host(peer), pool, name=str(name))
    except NodeError as exc:
        raise ResourceFailure(str(exc)) from None


def _pinned_host(peer: _PeerData | Peer) -> SSHHost:
    """The host trusting the pinned key alone (written as its known_hosts file)."""
    data = peer.data
    known = _known_hosts_file(data)
    entry = known_hosts_entry_name(str(data["host"]), int(data["port"]))
    _write_if_changed(known, f"{entry} {data['host_key']}\n")
    return _ssh_host(peer, known, tofu=False)


def _ssh_host(peer: _PeerData | Peer, known_hosts: Path, *, tofu: bool) -> SSHHost:
    data, props = peer.data, peer.properties
    key_file = _props.key_file_of(props)
    key_text = props.get("private_key")
    # None: the transport uses $HOME/.convection/<its name> (create records it).
    workdir = data.get("workdir") or data.get("requested_workdir")
    return SSHHost(
        host=str(data["host"]),
        username=str(data["user"]),
        known_hosts=known_hosts,
        port=int(data["port"]),
        private_key_path=key_file,
        private_key=str(key_text) if key_text else None,
        passphrase=props.get("passphrase") or None,
        trust_on_first_use=tofu,
        sudo=bool(data.get("sudo")),
        workdir=str(workdir) if workdir else None,
        connect_timeout=float(data.get("connect_timeout") or DEFAULT_CONNECT_TIMEOUT),
    )


def ssh_transport(peer: Peer) -> SSHTransport:
    """The transport of a created SSH host (the seam's SSH half)."""
    if not isinstance(peer.data.get("host_key"), str):
        raise ResourceFailure(f"server {peer.name} has not connected to its host yet")
    return _transport(peer, _shared_pool(peer))


# -- files --------------------------------------------------------------------


def _known_hosts_dir() -> Path:
    directory = node_root() / "ssh-known-hosts"
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    return directory


def _known_hosts_file(data: Mapping[str, Any]) -> Path:
    """The pinned key as a known_hosts file: derived from ``data`` (the truth)
    and rewritten whenever a transport is made."""
    return _known_hosts_dir() / f"{data['dir_name']}.known_hosts"


def _write_private(path: Path, text: str) -> None:
    """Write atomically (concurrent deployments write the same content)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{id(text)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``path`` unless it already holds ``text``: every deployment makes
    a transport, and a read costs far less than a private write and rename."""
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    _write_private(path, text)


async def _failing(action: Any) -> None:
    try:
        await action
    except NodeError as exc:
        raise ResourceFailure(str(exc)) from None
