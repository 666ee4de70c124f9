"""Software deployments driven through real stacks: an SQLite store, the
real engine, real local nodes (sandboxes under the test's temp dir) and, for
SSH hosts, the real sshd fixtures of ``tests/software``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .._stack_env import Env
from .._stack_env import software as _software

ssh_keys = _software.ssh_keys
sshd_hosts = _software.sshd_hosts
SshdHost = _software.SshdHost

__all__ = ["Env", "SshdHost"]


@pytest.fixture
def node_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "nodes"
    root.mkdir()
    monkeypatch.setenv("CONVECTION_NODE_ROOT", str(root))
    return root


@pytest.fixture
def env(tmp_path: Path, node_root: Path) -> Iterator[Env]:
    e = Env(tmp_path / "store.db")
    yield e
    e.close()
