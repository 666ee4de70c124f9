"""Real nodes for the software tests: local sandboxes and two real sshd hosts.

The SSH tests talk to real OpenSSH servers, not fakes: two ``sshd``
processes on loopback (127.0.0.2 and 127.0.0.3, each on a free port), each
with its own host key and a private ``sshd_config`` (no PAM, public keys
only, ``StrictModes no``, pid file in the temp dir, the machine's sftp
server). They log in the current user with a client key generated for the
session. ``scripts/ensure-test-deps.sh`` installs openssh-server when absent.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from convection.software import (
    DeployContext,
    DerivedConfig,
    SourceConfig,
    SSHHost,
    build_derived_config,
)
from convection.software.transports._ssh_host import known_hosts_entry_name

T = TypeVar("T")
#: The ``make_host`` fixture: ``make_host(index, **overrides) -> SSHHost``.
MakeHost = Callable[..., SSHHost]

SSHD = "/usr/sbin/sshd"
SFTP_SERVERS = (
    "/usr/lib/openssh/sftp-server",
    "/usr/libexec/openssh/sftp-server",
    "/usr/libexec/sftp-server",
)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run one test's coroutine on a fresh event loop."""
    return asyncio.run(coro)


def derived(script: str, *, outputs: tuple[str, ...] = (), **values: Any) -> DerivedConfig:
    """A script config for server-1's CREATE; ``values`` are its inputs
    (undeclared: each still reaches the script as an environment variable)."""
    source = SourceConfig.from_json(
        {"group": "script", "config": script, "outputs": [{"name": n} for n in outputs]}
    )
    context = DeployContext("server-1", "CREATE", "stack/1", "deployment")
    return build_derived_config(source, context, config_id=uuid.uuid4().hex, input_values=values)


@dataclass
class SshdHost:
    """One running sshd: where it listens and the public host key it presents."""

    address: str
    port: int
    host_key_pub: str
    process: subprocess.Popen[bytes]
    directory: Path

    def known_hosts_line(self) -> str:
        algorithm, blob = self.host_key_pub.split()[:2]
        return f"{known_hosts_entry_name(self.address, self.port)} {algorithm} {blob}\n"

    def session_pids(self) -> list[int]:
        """The per-connection sshd processes (children of the listener)."""
        out = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(self.process.pid)],
            capture_output=True,
            text=True,
            check=False,
        )
        return [int(p) for p in out.stdout.split()]


def _keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "convection-test", "-f", str(path)],
        check=True,
    )
    return path.with_suffix(".pub").read_text()


def _free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def _wait_listening(address: str, port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited: {log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex((address, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on {address}:{port}")


def _start_sshd(directory: Path, address: str, authorized: Path) -> SshdHost:
    directory.mkdir(parents=True)
    host_key = directory / "ssh_host_ed25519_key"
    pub = _keygen(host_key)
    port = _free_port(address)
    sftp = next((p for p in SFTP_SERVERS if os.path.exists(p)), "internal-sftp")
    config = directory / "sshd_config"
    config.write_text(
        f"ListenAddress {address}:{port}\n"
        f"HostKey {host_key}\n"
        f"PidFile {directory / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {authorized}\n"
        "UsePAM no\nStrictModes no\nPubkeyAuthentication yes\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nMaxSessions 20\nMaxStartups 50\n"
        f"Subsystem sftp {sftp}\nLogLevel ERROR\n"
        # bash reads ~/.bashrc when sshd starts it, and a developer's .bashrc
        # (pyenv init) can cost 100 ms per channel; SHLVL=1 makes bash skip it.
        "SetEnv SHLVL=1\n"
    )
    log = directory / "sshd.log"
    with open(log, "wb") as err:
        process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=err)
    _wait_listening(address, port, process, log)
    return SshdHost(address, port, pub, process, directory)


@pytest.fixture(scope="session")
def ssh_keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's client key pair (``client_key`` and ``client_key.pub``)."""
    if not os.path.exists(SSHD) or shutil.which("ssh-keygen") is None:
        pytest.fail("OpenSSH server missing: run scripts/ensure-test-deps.sh as root")
    directory = tmp_path_factory.mktemp("ssh-client")
    _keygen(directory / "client_key")
    return directory


@pytest.fixture(scope="session")
def sshd_hosts(
    tmp_path_factory: pytest.TempPathFactory, ssh_keys: Path
) -> Iterator[list[SshdHost]]:
    """Two real sshd hosts on 127.0.0.2 and 127.0.0.3."""
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privsep dir
    base = tmp_path_factory.mktemp("sshd")
    authorized = base / "authorized_keys"
    authorized.write_text((ssh_keys / "client_key.pub").read_text())
    hosts: list[SshdHost] = []
    try:
        for n, address in enumerate(("127.0.0.2", "127.0.0.3")):
            hosts.append(_start_sshd(base / f"host{n}", address, authorized))
        yield hosts
    finally:
        for host in hosts:
            host.process.terminate()
            try:
                host.process.wait(5)
            except subprocess.TimeoutExpired:
                host.process.kill()
                host.process.wait()


@pytest.fixture
def known_hosts(tmp_path: Path, sshd_hosts: list[SshdHost]) -> Path:
    """A known_hosts file that trusts both hosts."""
    path = tmp_path / "known_hosts"
    path.write_text("".join(h.known_hosts_line() for h in sshd_hosts))
    return path


@pytest.fixture
def make_host(tmp_path: Path, ssh_keys: Path, known_hosts: Path, sshd_hosts: list[SshdHost]) -> Any:
    """``make_host(index, **overrides) -> SSHHost`` for one of the two hosts."""

    def make(index: int = 0, **overrides: Any) -> SSHHost:
        sshd = sshd_hosts[index]
        fields: dict[str, Any] = {
            "host": sshd.address,
            "port": sshd.port,
            "username": getpass.getuser(),
            "known_hosts": known_hosts,
            "private_key_path": ssh_keys / "client_key",
            "workdir": str(tmp_path / f"remote{index}" / "convection"),
            "connect_timeout": 5.0,
        }
        fields.update(overrides)
        return SSHHost(**fields)

    return make
