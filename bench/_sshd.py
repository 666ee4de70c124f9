"""Real OpenSSH servers on loopback for the benchmarks, one address each.

The SSH tests already start real sshd processes (``tests/software/conftest.py``:
own host key, a private ``sshd_config`` with public keys only, the current
user). The bench reuses that code rather than keeping a second copy: it loads
the conftest module from its file (it is not importable as a package, since
pytest runs with ``--import-mode=importlib``) and calls its helpers with more
hosts. ``scripts/ensure-test-deps.sh`` installs openssh-server when absent.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

CONFTEST = Path(__file__).resolve().parent.parent / "tests" / "software" / "conftest.py"


def _fixtures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("convection_bench_sshd_fixtures", CONFTEST)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load the sshd helpers from {CONFTEST}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


_FIXTURES = _fixtures()


@dataclass(frozen=True)
class Farm:
    """Running sshd hosts, the client key they accept, and a known_hosts that trusts them."""

    hosts: list[Any]  # the conftest's SshdHost: address, port, host_key_pub, process
    client_key: Path
    known_hosts: Path

    def wait_idle(self, seconds: float = 5.0) -> bool:
        """Wait until no connection is open on any host (their sessions have
        exited and been reaped, so their CPU shows in :meth:`cpu_seconds`)."""
        deadline = time.monotonic() + seconds
        while any(host.session_pids() for host in self.hosts):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def cpu_seconds(self) -> float:
        """CPU the hosts have used: the listeners and every ended connection
        (sshd reaps its sessions, and they their shells, so all of it is
        counted in the listeners' children's time)."""
        return sum(cpu_seconds(host.process.pid, children=True) for host in self.hosts)


def cpu_seconds(pid: int, *, children: bool) -> float:
    """User + system CPU of ``pid`` (plus its reaped children's), 0 if gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2 :].split()  # fields[0] is the state (field 3)
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def addresses(count: int) -> list[str]:
    """One loopback address per host: 127.0.2.1, 127.0.2.2, ..."""
    if not 1 <= count <= 250:
        raise ValueError("between 1 and 250 hosts")
    return [f"127.0.2.{n}" for n in range(1, count + 1)]


@contextmanager
def sshd_farm(count: int, directory: Path) -> Iterator[Farm]:
    """Start ``count`` sshd hosts under ``directory``; stop them on exit."""
    if not os.path.exists(_FIXTURES.SSHD) or shutil.which("ssh-keygen") is None:
        raise RuntimeError("OpenSSH server missing: run scripts/ensure-test-deps.sh as root")
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privsep dir
    directory.mkdir(parents=True, exist_ok=True)
    client_key = directory / "client_key"
    pub = _FIXTURES._keygen(client_key)
    authorized = directory / "authorized_keys"
    authorized.write_text(pub)
    hosts: list[Any] = []
    try:
        for n, address in enumerate(addresses(count)):
            hosts.append(_FIXTURES._start_sshd(directory / f"host{n}", address, authorized))
        known_hosts = directory / "known_hosts"
        known_hosts.write_text("".join(h.known_hosts_line() for h in hosts))
        yield Farm(hosts, client_key, known_hosts)
    finally:
        for host in hosts:
            _stop(host.process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
