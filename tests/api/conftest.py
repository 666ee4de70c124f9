"""A live ``convection server`` on a loopback port, in a subprocess of its
own with a real SQLite store, and Heat's own client pointed at it.

The server's stderr (its JSON logs) goes to a file that tests read; every
test works in a project of its own, so tests share one server without
seeing each other's stacks.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from heatclient.client import Client

#: The box may be busy: starting (migrations included) can take a while.
START_SECONDS = 90
SETTLE_SECONDS = 60


@dataclass
class LiveServer:
    url: str
    db: str
    log: Path
    process: subprocess.Popen[bytes]

    def endpoint(self, project: str) -> str:
        return f"{self.url}/v1/{project}"

    def logs(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def stop(self, timeout: float = 60) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(db: str, log: Path, *extra: str) -> LiveServer:
    """``convection server`` on a free loopback port, once it answers /healthz."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
    env["CONVECTION_CONFIG"] = str(log.parent / "absent.toml")
    argv = [str(Path(sys.executable).parent / "convection"), "server"]
    argv += ["--bind", f"127.0.0.1:{port}", "--db", db, "--no-auth", *extra]
    with log.open("ab") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=sink, env=env)
    server = LiveServer(f"http://127.0.0.1:{port}", db, log, process)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited {process.returncode}:\n{server.logs()}")
        try:
            if httpx.get(f"{server.url}/healthz", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"server did not start in {START_SECONDS} s:\n{server.logs()}")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    base = tmp_path_factory.mktemp("api")
    live = start_server(f"sqlite:///{base / 'stacks.db'}", base / "server.log")
    yield live
    live.stop()


@pytest.fixture
def project() -> str:
    return f"p-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def heat(server: LiveServer, project: str) -> Client:
    """python-heatclient, unchanged, with an endpoint and a token."""
    return Client("1", endpoint=server.endpoint(project), token="any-token")


@pytest.fixture
def http(server: LiveServer, project: str) -> Iterator[httpx.Client]:
    """Plain HTTP for what heatclient hides (status codes, headers, bodies)."""
    with httpx.Client(
        base_url=server.endpoint(project), headers={"X-Auth-Token": "t"}, timeout=30
    ) as client:
        yield client


Settle = Callable[[Client, str], Any]


def _settle(heat: Client, stack_id: str, timeout: float = SETTLE_SECONDS) -> Any:
    """The stack once its operation has ended."""
    deadline = time.monotonic() + timeout
    while True:
        stack = heat.stacks.get(stack_id)
        if not stack.stack_status.endswith("IN_PROGRESS"):
            return stack
        if time.monotonic() > deadline:
            raise AssertionError(f"stack still {stack.stack_status} after {timeout} s")
        time.sleep(0.2)


@pytest.fixture
def settle() -> Settle:
    """Waits for a stack's operation to end (polling through heatclient)."""
    return _settle


@pytest.fixture
def until() -> Callable[[Callable[[], bool]], None]:
    """Waits for a condition (polling)."""

    def wait(check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + SETTLE_SECONDS
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError("condition not met in time")
            time.sleep(0.2)

    return wait


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """Servers of a test's own (stopped at the end), for restarts and flags."""
    started: list[LiveServer] = []

    def run(db: str, *extra: str) -> LiveServer:
        live = start_server(db, tmp_path / "server.log", *extra)
        started.append(live)
        return live

    yield run
    for live in started:
        live.stop()
