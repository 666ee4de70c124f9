"""Servers driven through real stacks: an SQLite store, the real engine,
real sandboxes on this machine and the real sshd hosts of ``tests/software``.

The node root is a fresh directory under ``/tmp`` opened to everyone (0755):
a node that runs as another OS user must be able to reach its sandbox, and
pytest's own temp dirs are closed to other users.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from convection.resources.api import Peer
from convection.store.api import ResourceRecord

from .._stack_env import Env as StackEnv
from .._stack_env import software as _software

ssh_keys = _software.ssh_keys
sshd_hosts = _software.sshd_hosts
SshdHost = _software.SshdHost
start_sshd = _software._start_sshd
keygen = _software._keygen

__all__ = ["Env", "SshdHost", "keygen", "start_sshd"]

TEST_USER = "convection-test"


class Env(StackEnv):
    """The shared stack helpers, plus a server's view and teardown of what
    a failed test left running."""

    def peer(self, resource: str, name: str = "s") -> Peer:
        """The server as a deployment sees it through ``ctx.peer``."""
        return peer_of(self.record(resource, name))

    def delete_leftovers(self) -> None:
        """Delete what a failed test left running (services, sandboxes)."""
        for stack in self.stacks.list("p"):
            try:
                self.stacks.delete("p", stack["id"])
                self.stacks.wait(stack["id"], timeout=60)
            except Exception:  # best effort at teardown
                pass


@pytest.fixture
def node_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="convection-nodes-", dir="/tmp"))
    root.chmod(0o755)
    monkeypatch.setenv("CONVECTION_NODE_ROOT", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def env(tmp_path: Path, node_root: Path) -> Iterator[Env]:
    e = Env(tmp_path / "store.db")
    yield e
    e.delete_leftovers()
    e.close()


@pytest.fixture(scope="session")
def test_user() -> pwd.struct_passwd:
    """An unprivileged OS user (created when the tests run as root and it is missing)."""
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        if os.geteuid() != 0:
            pytest.fail(f"user {TEST_USER} is missing: run scripts/ensure-test-deps.sh as root")
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER],
            check=True,
        )
        return pwd.getpwnam(TEST_USER)


def peer_of(row: ResourceRecord) -> Peer:
    """The server as a deployment sees it through ``ctx.peer``."""
    return Peer(
        name=row.name,
        type=row.type,
        action=row.action,
        status=row.status,
        physical_id=row.physical_id,
        reference_id=row.physical_id,
        properties=row.properties,
        attributes=row.attributes,
        data=row.data,
    )
