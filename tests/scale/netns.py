"""Hosts as Linux network namespaces, and a private PostgreSQL cluster they can reach.

Multi-host behaviour (a node losing the network, a database restarting under
its clients) can only be tested for real when each "host" has its own network
stack. A network namespace joined to the root namespace by a veth pair gives
exactly that, cheaply, on one machine: the host's loopback is its own, and
setting the root-side end of its veth down cuts it off without touching the
others. The cluster runs in the root namespace and listens on the root-side
addresses, so every host reaches it through its own link.

Naming: every name starts with ``cvt<pid % 10000>`` (the creating process) so
that tests running at the same time do not collide, the names stay within the
kernel's 15-character limit, and leftovers of a crashed run can be recognised
(their pid part matches no live process) and removed.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PSQL = Path("/usr/bin/psql")
NET = "10.231"
"""The /16 every host link is carved from (one /30 per host, by third octet)."""
PG_USER = "postgres"
DATABASE = "convection"

_NAME = re.compile(r"^cvt(\d{1,4})[hrnp]\d{1,3}$")
"""Every namespace and link this module makes (h: namespace, r/n: veth ends, p: probe)."""

_made: set[str] = set()
"""Names this process created and has not removed yet: never "stale" to it."""

StdSpec = int | IO[Any] | None


def _prefix(pid: int | None = None) -> str:
    return f"cvt{(os.getpid() if pid is None else pid) % 10000}"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``ip``; with check, a failure raises with ip's own message (the useful part)."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {done.stderr.strip()}")
    return done


def _netns_names() -> list[str]:
    out = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _link_names() -> list[str]:
    """Link names in the root namespace, without the ``@peer`` suffix ip adds."""
    out = _ip("-o", "link", "show", check=False).stdout
    names = []
    for line in out.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.append(parts[1].strip().split("@")[0])
    return names


def _used_subnets() -> set[int]:
    """Third octets of 10.231.x.y addresses already assigned (by any process)."""
    out = _ip("-4", "-o", "addr", "show", check=False).stdout
    return {int(m.group(1)) for m in re.finditer(rf"inet {re.escape(NET)}\.(\d+)\.", out)}


def _other_pid_residues() -> set[int]:
    """pid % 10000 of every live process but this one: the prefixes someone may own."""
    me = os.getpid()
    return {int(e) % 10000 for e in os.listdir("/proc") if e.isdigit() and int(e) != me}


def _is_stale(name: str, others: set[int]) -> bool:
    """A name is stale only when no other live process could own it.

    Another live process whose pid has the same residue might own it, so it
    is left alone; with our own residue and no other process sharing it, it is
    a dead run's leftover unless this process made it.
    """
    m = _NAME.match(name)
    if m is None or int(m.group(1)) in others:
        return False
    return name not in _made


def remove_stale() -> list[str]:
    """Remove namespaces and links left by crashed runs; returns the names removed."""
    others = _other_pid_residues()
    removed = []
    for ns in _netns_names():
        if _is_stale(ns, others):
            _kill_netns_pids(ns)
            _ip("netns", "del", ns, check=False)
            removed.append(ns)
    for link in _link_names():
        if _is_stale(link, others):
            _ip("link", "del", link, check=False)
            removed.append(link)
    return removed


def _kill_netns_pids(ns: str) -> None:
    """Kill what still runs in a namespace: while it runs the namespace (and veth) survive."""
    out = _ip("netns", "pids", ns, check=False).stdout
    for pid in out.split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


class Host:
    """One "machine": a network namespace with a veth link to the root namespace.

    Index ``i`` picks both the names and the subnet 10.231.<i>.0/30: the root
    side is .1 (the host's gateway, where the cluster listens), the namespace
    side .2 (the host's own address).
    """

    def __init__(self, index: int) -> None:
        if not 1 <= index <= 254:
            raise ValueError(f"host index {index} outside 1..254")
        self.index = index
        prefix = _prefix()
        self.name = f"{prefix}h{index}"
        self.root_link = f"{prefix}r{index}"
        self.ns_link = f"{prefix}n{index}"
        self.address = f"{NET}.{index}.2"
        self.gateway = f"{NET}.{index}.1"
        self._children: list[subprocess.Popen[bytes]] = []
        self._closed = False
        for made in (self.name, self.root_link, self.ns_link):
            _made.add(made)
        try:
            self._create()
        except BaseException:
            self.close()
            raise

    def _create(self) -> None:
        _ip("netns", "add", self.name)
        _ip("link", "add", self.root_link, "type", "veth", "peer", "name", self.ns_link)
        _ip("link", "set", self.ns_link, "netns", self.name)
        _ip("addr", "add", f"{self.gateway}/30", "dev", self.root_link)
        _ip("link", "set", self.root_link, "up")
        inside = ("-n", self.name)
        _ip(*inside, "link", "set", "lo", "up")
        _ip(*inside, "addr", "add", f"{self.address}/30", "dev", self.ns_link)
        _ip(*inside, "link", "set", self.ns_link, "up")
        _ip(*inside, "route", "add", "default", "via", self.gateway)

    def __repr__(self) -> str:
        return f"Host({self.name!r}, address={self.address!r}, gateway={self.gateway!r})"

    def command(self, argv: Sequence[str]) -> list[str]:
        """The argv that runs ``argv`` inside this host's namespace."""
        return ["ip", "netns", "exec", self.name, *argv]

    def spawn(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        stdout: StdSpec = subprocess.DEVNULL,
        stderr: StdSpec = subprocess.DEVNULL,
    ) -> subprocess.Popen[bytes]:
        """Start a process on this host; it is killed and reaped by ``close()``."""
        proc = subprocess.Popen(
            self.command(argv),
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )
        self._children.append(proc)
        return proc

    def run(self, argv: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        """Run to completion on this host; output captured as text, no check, 30 s timeout."""
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        kw.setdefault("timeout", 30)
        kw.setdefault("check", False)
        result: subprocess.CompletedProcess[str] = subprocess.run(self.command(argv), **kw)
        return result

    def link_down(self) -> None:
        """Cut the host off: its peer loses carrier, packets it sends go nowhere."""
        _ip("link", "set", self.root_link, "down")

    def link_up(self) -> None:
        """Restore the host's link (the root side keeps its address while down)."""
        _ip("link", "set", self.root_link, "up")

    def close(self) -> None:
        """Kill the host's processes, delete its link and namespace; safe to repeat."""
        if self._closed:
            return
        self._closed = True
        for proc in self._children:
            if proc.poll() is None:
                proc.kill()
        if self.name in _netns_names():
            _kill_netns_pids(self.name)
        for proc in self._children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        # Deleting either end of a veth deletes the pair, wherever the other end is.
        links = _link_names()
        for link in (self.root_link, self.ns_link):
            if link in links:
                _ip("link", "del", link, check=False)
        if self.name in _netns_names():
            _ip("netns", "del", self.name, check=False)
        for made in (self.name, self.root_link, self.ns_link):
            _made.discard(made)


class Hosts:
    """N hosts for one test; on exit every namespace and link made is gone, even on failure.

    Entering first removes stale leftovers of crashed runs, then picks subnets
    no other process is using at that moment.
    """

    def __init__(self, count: int) -> None:
        if count < 1:
            raise ValueError("count must be at least 1")
        self.count = count
        self.hosts: list[Host] = []

    def __enter__(self) -> list[Host]:
        remove_stale()
        used = _used_subnets()
        taken_names = set(_netns_names())
        free = [i for i in range(1, 255) if i not in used and f"{_prefix()}h{i}" not in taken_names]
        if len(free) < self.count:
            raise RuntimeError(f"only {len(free)} free host subnets in {NET}.0.0/16")
        try:
            for index in free[: self.count]:
                self.hosts.append(Host(index))
        except BaseException:
            self.close()
            raise
        return list(self.hosts)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def names(self) -> set[str]:
        """Every namespace and link name these hosts use (for checking they are gone)."""
        return {n for h in self.hosts for n in (h.name, h.root_link, h.ns_link)}

    def close(self) -> None:
        """Close every host, trying all of them even if one fails."""
        errors: list[BaseException] = []
        for host in self.hosts:
            try:
                host.close()
            except Exception as err:  # pragma: no cover - reported below
                errors.append(err)
        if errors:
            raise errors[0]


def _as_pg(argv: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL tool as the postgres user: initdb and the server refuse root."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 60)
    kw.setdefault("cwd", "/")
    result: subprocess.CompletedProcess[str] = subprocess.run(
        ["runuser", "-u", PG_USER, "--", *argv], **kw
    )
    return result


def free_port() -> int:
    """A TCP port free on every IPv4 address now (never 5432, a real server's)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("", 0))
            port: int = sock.getsockname()[1]
        if port != 5432:
            return port


class PrivatePostgres:
    """A throwaway PostgreSQL 15 cluster for one test, trusted from the hosts' subnets.

    With ``hosts`` it listens on 127.0.0.1 and their gateways; without, on
    every address, so hosts made after it can reach it too. Durability is off:
    a test's data is worth nothing after the test.
    """

    def __init__(self, hosts: Sequence[Host] | None = None, start_timeout: float = 60) -> None:
        if hosts is None:
            self.listen = "*"
        else:
            self.listen = ",".join(["127.0.0.1", *(h.gateway for h in hosts)])
        self.start_timeout = start_timeout
        self.port = 0
        self.base: Path | None = None
        self._running = False

    @property
    def data_dir(self) -> Path:
        assert self.base is not None, "cluster not created"
        return self.base / "data"

    @property
    def socket_dir(self) -> Path:
        assert self.base is not None, "cluster not created"
        return self.base

    @property
    def log_file(self) -> Path:
        return self.socket_dir / "server.log"

    def __enter__(self) -> Self:
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _create(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="cvt-pg-"))
        pw = pwd.getpwnam(PG_USER)
        os.chown(self.base, pw.pw_uid, pw.pw_gid)
        done = _as_pg(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                PG_USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]
        )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip()}")
        (self.data_dir / "pg_hba.conf").write_text(
            "local all all trust\n"
            "host all all 127.0.0.1/32 trust\n"
            f"host all all {NET}.0.0/16 trust\n"
        )
        # The server is started a few times with a fresh port in case another
        # process took the chosen one between the check and the bind.
        for attempt in range(3):
            self.port = free_port()
            self._write_conf()
            try:
                self._pg_ctl("start", "-l", str(self.log_file))
                break
            except RuntimeError:
                if attempt == 2:
                    raise
        self._running = True
        self.psql_admin(f"CREATE DATABASE {DATABASE}")

    def _write_conf(self) -> None:
        (self.data_dir / "postgresql.auto.conf").write_text(
            f"listen_addresses = '{self.listen}'\n"
            f"port = {self.port}\n"
            f"unix_socket_directories = '{self.socket_dir}'\n"
            "max_connections = 300\n"
            "fsync = off\n"
            "synchronous_commit = off\n"
            "full_page_writes = off\n"
        )

    def _pg_ctl(self, *args: str) -> None:
        done = _as_pg(
            [str(PG_BIN / "pg_ctl"), "-D", str(self.data_dir), "-w", "-t", "60", *args],
            timeout=self.start_timeout + 30,
        )
        if done.returncode != 0:
            log = self.log_file.read_text() if self.log_file.exists() else ""
            raise RuntimeError(f"pg_ctl {args[0]} failed: {done.stderr.strip()}\n{log[-2000:]}")

    def address(self, host: Host | None = None) -> str:
        """Where a client reaches the server: the host's gateway, or loopback from the root."""
        return "127.0.0.1" if host is None else host.gateway

    def url(self, host: Host | None = None) -> str:
        """A SQLAlchemy URL for the convection database, as seen from ``host``."""
        return f"postgresql+psycopg://{PG_USER}@{self.address(host)}:{self.port}/{DATABASE}"

    def dsn(self, host: Host | None = None, **params: str | int) -> str:
        """The same place as ``url`` as a libpq conninfo string (for psql), plus ``params``."""
        fields: dict[str, str | int] = {
            "host": self.address(host),
            "port": self.port,
            "user": PG_USER,
            "dbname": DATABASE,
            **params,
        }
        return " ".join(f"{k}={v}" for k, v in fields.items())

    def psql_admin(self, sql: str, dbname: str = "postgres") -> str:
        """Run SQL over the Unix socket (not the network being tested); returns its output."""
        done = subprocess.run(
            [
                str(PSQL),
                "-X",
                "-qAt",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                str(self.socket_dir),
                "-p",
                str(self.port),
                "-U",
                PG_USER,
                "-d",
                dbname,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def wait_accepting(self, timeout: float = 30) -> None:
        """Block until the server answers a query (pg_ctl -w is not always enough)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.psql_admin("SELECT 1")
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def restart(self) -> None:
        """Restart fast (every client is disconnected) and wait until it accepts again."""
        self._pg_ctl("restart", "-m", "fast", "-l", str(self.log_file))
        self._running = True
        self.wait_accepting()

    def stop(self) -> None:
        """Stop the server fast; safe to repeat."""
        if not self._running:
            return
        try:
            self._pg_ctl("stop", "-m", "fast")
        except RuntimeError:
            self._pg_ctl("stop", "-m", "immediate")
        self._running = False

    def terminate_backends(self) -> int:
        """Kill every other session on the convection database; returns how many."""
        out = self.psql_admin(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            f"WHERE datname = '{DATABASE}' AND pid <> pg_backend_pid()"
        )
        return int(out)

    def close(self) -> None:
        """Stop the server and remove its directory; safe to repeat."""
        try:
            if self._running:
                self.stop()
        finally:
            if self.base is not None:
                shutil.rmtree(self.base, ignore_errors=True)
                self.base = None


_availability: list[str | None] = []


def netns_available() -> str | None:
    """Why these tests cannot run here (None when they can); the probe runs once."""
    if _availability:
        return _availability[0]
    reason = _check_available()
    _availability.append(reason)
    return reason


def _check_available() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "no `ip` (iproute2)"
    if shutil.which("runuser") is None:
        return "no `runuser` to run PostgreSQL as its own user"
    for tool in (PG_BIN / "initdb", PG_BIN / "pg_ctl", PG_BIN / "postgres", PSQL):
        if not os.access(tool, os.X_OK):
            return f"no PostgreSQL binary {tool}"
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        return f"no {PG_USER} system user"
    probe = f"{_prefix()}p0"
    _made.add(probe)
    try:
        done = _ip("netns", "add", probe, check=False)
        if done.returncode != 0:
            return f"cannot create a network namespace: {done.stderr.strip()}"
    finally:
        _ip("netns", "del", probe, check=False)
        _made.discard(probe)
    return None


@contextlib.contextmanager
def hosts_and_cluster(count: int) -> Iterator[tuple[list[Host], PrivatePostgres]]:
    """Hosts first, then a cluster listening on exactly their gateways."""
    with Hosts(count) as hosts, PrivatePostgres(hosts) as pg:
        yield hosts, pg
