"""SSH connections: one per host, verified host keys, bounded concurrency.

Why one connection per host: a stack with fifty deployments on one host
would otherwise do fifty handshakes and trip sshd's ``MaxStartups``. The
pool keeps one asyncssh connection per ``(host, port, user)`` and opens
channels on it; a per-host semaphore keeps the number of concurrent
channels under sshd's ``MaxSessions`` (10 by default).

Host keys are always verified against a known_hosts file:

* a key in the file for this host: accepted;
* a host with no entry and ``trust_on_first_use``: accepted, and its key is
  appended to the file once the host has proved it holds the private key;
* a host with no entry and no TOFU: refused (:class:`HostKeyUnknown`);
* a host whose entries do not include the offered key: refused
  (:class:`HostKeyMismatch`), with TOFU too. That decision is made against
  the actual host name *and* address asyncssh connected to, so an entry
  recorded for either one counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Final

import asyncssh

from convection.software.errors import (
    AuthenticationFailed,
    HostKeyMismatch,
    HostKeyUnknown,
    HostUnreachable,
    PrivateKeyError,
)
from convection.software.transports._ssh_host import (
    DEFAULT_SESSIONS_PER_HOST,
    KEEPALIVE_INTERVAL,
    SSHHost,
    known_hosts_entry_name,
)


def load_client_key(host: SSHHost) -> asyncssh.SSHKey:
    """The private key, from text or file. Errors name the source only."""
    if (host.private_key is None) == (host.private_key_path is None):
        raise PrivateKeyError(
            host.label, "configuration (give exactly one of key text or key file)"
        )
    try:
        if host.private_key is not None:
            return asyncssh.import_private_key(host.private_key, host.passphrase)
        assert host.private_key_path is not None
        return asyncssh.read_private_key(host.private_key_path, host.passphrase)
    except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError, OSError, ValueError):
        source = (
            "the private_key value"
            if host.private_key is not None
            else f"file {host.private_key_path}"
        )
        raise PrivateKeyError(host.label, source) from None


class _Verifier(asyncssh.SSHClient):
    """Decides on keys that are not already trusted by known_hosts."""

    def __init__(self, known: asyncssh.SSHKnownHosts, tofu: bool) -> None:
        self._known = known
        self._tofu = tofu
        self.offered: asyncssh.SSHKey | None = None
        self.mismatch = False
        self.accepted_new = False

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        self.offered = key
        lookup_port = None if port == 22 else port
        trusted, ca_keys, *_ = asyncssh.match_known_hosts(self._known, host, addr, lookup_port)
        if trusted or ca_keys:
            self.mismatch = True
            return False
        self.accepted_new = self._tofu
        return self._tofu


def _read_known_hosts(path: Path) -> asyncssh.SSHKnownHosts:
    try:
        text = path.read_text()
    except FileNotFoundError:
        text = ""
    return asyncssh.import_known_hosts(text)


def _record_key(path: Path, host: SSHHost, key: asyncssh.SSHKey) -> None:
    algorithm, blob = key.export_public_key("openssh").decode().split()[:2]
    line = f"{known_hosts_entry_name(host.host, host.port)} {algorithm} {blob}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a") as f:
        f.write(line)


def fingerprint(key: asyncssh.SSHKey | None) -> str:
    if key is None:
        return "an unknown key"
    return f"{key.get_algorithm()} key {key.get_fingerprint('sha256')}"


async def open_connection(host: SSHHost, keepalive: float) -> asyncssh.SSHClientConnection:
    """Connect and authenticate, mapping every failure to a clear error."""
    client_key = load_client_key(host)
    known = _read_known_hosts(host.known_hosts)
    verifier = _Verifier(known, host.trust_on_first_use)
    options = asyncssh.SSHClientConnectionOptions(
        username=host.username,
        client_keys=[client_key],
        known_hosts=known,
        agent_path=None,
        password_auth=False,
        kbdint_auth=False,
        host_based_auth=False,
        gss_auth=False,
        gss_kex=False,
        x509_trusted_certs=None,
        keepalive_interval=keepalive,
        encryption_algs=_CIPHERS,
        keepalive_count_max=3,
        connect_timeout=host.connect_timeout,
    )
    try:
        conn = await asyncssh.connect(
            host.host,
            host.port,
            config=None,
            options=options,
            client_factory=lambda: verifier,
        )
    except asyncssh.HostKeyNotVerifiable:
        path = str(host.known_hosts)
        if verifier.mismatch:
            raise HostKeyMismatch(
                host.host, host.port, host.username, path, fingerprint(verifier.offered)
            ) from None
        raise HostKeyUnknown(host.host, host.port, host.username, path) from None
    except asyncssh.PermissionDenied:
        raise AuthenticationFailed(host.host, host.port, host.username) from None
    except (OSError, asyncssh.Error, TimeoutError) as exc:
        raise HostUnreachable(host.host, host.port, host.username, _reason(exc)) from None
    if verifier.accepted_new:
        _record_key(host.known_hosts, host, conn.get_server_host_key() or verifier.offered)  # type: ignore[arg-type]
    return conn


#: AES-GCM first: with the CPU's AES instructions it costs both ends less than
#: asyncssh's default first choice, ChaCha20-Poly1305 (which asyncssh sets up
#: anew for every packet). The rest stay as fallbacks for other hosts.
_CIPHERS: Final = (
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes256-ctr",
    "aes192-ctr",
    "aes128-ctr",
)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "connect timed out"
    if isinstance(exc, OSError) and exc.errno:
        return os.strerror(exc.errno)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if isinstance(exc, asyncssh.Error):
        return f"{type(exc).__name__}: {exc.reason}"
    return type(exc).__name__


class SSHPool:
    """Shared SSH connections, one per ``(host, port, user)``.

    Use one pool per event loop (an asyncssh connection belongs to the loop
    that opened it), and ``await pool.close()`` (or ``async with``) at the end.
    """

    def __init__(
        self,
        *,
        sessions_per_host: int = DEFAULT_SESSIONS_PER_HOST,
        keepalive_interval: float = KEEPALIVE_INTERVAL,
    ) -> None:
        if sessions_per_host < 1:
            raise ValueError("sessions_per_host must be at least 1")
        self.sessions_per_host = sessions_per_host
        self._keepalive = keepalive_interval
        self._conns: dict[tuple[str, int, str], asyncssh.SSHClientConnection] = {}
        self._locks: dict[tuple[str, int, str], asyncio.Lock] = {}
        self._limits: dict[tuple[str, int, str], asyncio.Semaphore] = {}
        #: How many connections this pool has opened (reuse shows as 1 per host).
        self.connections_opened = 0
        #: How many channels were opened on them (each costs the host a session).
        self.channels_opened = 0

    async def __aenter__(self) -> SSHPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def limiter(self, host: SSHHost) -> asyncio.Semaphore:
        """The semaphore bounding concurrent channels to this host."""
        return self._limits.setdefault(host.key, asyncio.Semaphore(self.sessions_per_host))

    async def connection(self, host: SSHHost) -> asyncssh.SSHClientConnection:
        """The live connection to ``host``, opened on first use or after a loss."""
        lock = self._locks.setdefault(host.key, asyncio.Lock())
        async with lock:
            conn = self._conns.get(host.key)
            if conn is not None and not conn.is_closed():
                return conn
            if conn is not None:
                await self._drop(host.key, conn)
            conn = await open_connection(host, self._keepalive)
            self._conns[host.key] = conn
            self.connections_opened += 1
            return conn

    async def adopt(self, host: SSHHost, conn: asyncssh.SSHClientConnection) -> None:
        """Take ``conn``, opened and verified by the caller, as ``host``'s
        connection, so the next use does not pay another handshake.

        The caller vouches that ``conn`` presented a key ``host.known_hosts``
        trusts. A live connection already pooled for ``host`` wins and
        ``conn`` is closed: channels may be running on the pooled one.
        """
        lock = self._locks.setdefault(host.key, asyncio.Lock())
        async with lock:
            current = self._conns.get(host.key)
            if current is not None and not current.is_closed():
                conn.close()
                return
            if current is not None:
                await self._drop(host.key, current)
            self._conns[host.key] = conn
            self.connections_opened += 1

    async def discard(self, host: SSHHost, conn: asyncssh.SSHClientConnection) -> None:
        """Forget a connection that failed, so the next use reconnects."""
        if self._conns.get(host.key) is conn:
            await self._drop(host.key, conn)

    async def _drop(self, key: tuple[str, int, str], conn: asyncssh.SSHClientConnection) -> None:
        self._conns.pop(key, None)
        conn.abort()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.wait_closed(), 2.0)

    async def close(self) -> None:
        """Close every connection."""
        conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            conn.close()
        for conn in conns:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.wait_closed(), 5.0)
