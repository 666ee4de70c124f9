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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from heatclient.client import Client

from convection.store.sql import SQLStore
from convection.tokens._tokens import Role, Tokens

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
        """SIGTERM, then its exit code; killed if it outlasts ``timeout``
        (so no test leaves a server behind)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    db: str,
    log: Path,
    *extra: str,
    auth: bool = False,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
) -> LiveServer:
    """``convection server`` on a loopback port, once it answers /healthz;
    with ``--no-auth`` unless ``auth`` (then requests need tokens). The
    one place every test (``tests/cli`` too) starts a real server: a fixed
    ``port`` lets a restarted server keep URLs already handed out, and
    ``env`` adds settings over a clean environment."""
    port = free_port() if port is None else port
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")},
        "CONVECTION_CONFIG": str(log.parent / "absent.toml"),
        # Tests' std.http targets are loopback servers: allowed as a user would.
        "CONVECTION_EGRESS_ALLOW_LOOPBACK": "1",
        **(env or {}),
    }
    argv = [str(Path(sys.executable).parent / "convection"), "server"]
    argv += ["--bind", f"127.0.0.1:{port}", "--db", db, *([] if auth else ["--no-auth"]), *extra]
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


@dataclass
class AuthServer:
    """A live server with token authentication, and a way to mint tokens
    for it: straight into its store, as ``convection token create`` does."""

    live: LiveServer
    tokens: Tokens

    def mint(self, project: str, role: Role = Role.MEMBER) -> str:
        return self.tokens.issue(project, role).secret

    def client(self, project: str, secret: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.live.endpoint(project), headers={"X-Auth-Token": secret}, timeout=30
        )


@contextmanager
def token_server(base: Path, env: Mapping[str, str] | None = None) -> Iterator[AuthServer]:
    """A token-authenticated server on a SQLite store of its own under
    ``base``, with the store open to mint its tokens; stopped after."""
    db = f"sqlite:///{base / 'stacks.db'}"
    live = start_server(db, base / "server.log", auth=True, env=env)
    store = SQLStore(db)
    try:
        yield AuthServer(live, Tokens(store))
    finally:
        live.stop()
        store.close()


@pytest.fixture(scope="session")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """One token-authenticated server for the session (tests keep to
    projects of their own)."""
    with token_server(tmp_path_factory.mktemp("api-auth")) as server:
        yield server


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


def wait_for(check: Callable[[], Any], what: str, timeout: float = SETTLE_SECONDS) -> Any:
    """``check()``'s first truthy answer, polled; a failure naming ``what``
    once ``timeout`` passes (the one polling loop the API tests share)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not in {timeout} s")
        time.sleep(0.1)


def _settle(heat: Client, stack_id: str, timeout: float = SETTLE_SECONDS) -> Any:
    """The stack once its operation has ended."""

    def ended() -> Any:
        stack = heat.stacks.get(stack_id)
        return None if stack.stack_status.endswith("IN_PROGRESS") else stack

    return wait_for(ended, f"stack {stack_id} settled", timeout)


def settled(http: httpx.Client, path: str, timeout: float = SETTLE_SECONDS) -> dict[str, Any]:
    """The show body at ``path`` (``/stacks/...``, redirects followed) once
    the stack's operation has ended: heatclient's wait, over plain HTTP."""

    def ended() -> dict[str, Any] | None:
        response = http.get(path, follow_redirects=True)
        assert response.status_code == 200, response.text
        stack: dict[str, Any] = response.json()["stack"]
        return None if stack["stack_status"].endswith("IN_PROGRESS") else stack

    found: dict[str, Any] = wait_for(ended, f"stack {path} settled", timeout)
    return found


def heat_fault(response: httpx.Response, code: int, kind: str | None = None) -> dict[str, Any]:
    """Heat's error body, checked for status, shape and (if given) class."""
    assert response.status_code == code, (response.request.url, response.text)
    body: dict[str, Any] = response.json()
    assert set(body) == {"code", "title", "explanation", "error"} and body["code"] == code, body
    assert set(body["error"]) == {"message", "type", "traceback"}, body
    assert body["error"]["traceback"] is None
    if kind is not None:
        assert body["error"]["type"] == kind, body
    return body


@pytest.fixture
def settle() -> Settle:
    """Waits for a stack's operation to end (polling through heatclient)."""
    return _settle


@pytest.fixture
def until() -> Callable[[Callable[[], bool]], None]:
    """Waits for a condition (polling)."""

    def wait(check: Callable[[], bool]) -> None:
        wait_for(check, "condition")

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
