"""A live token-authenticated ``convection server`` (its own process, a
real SQLite store), tokens minted into its store as ``convection token
create`` does, the CLI pointed at it, and Debian's chromium driven by
Playwright.

Playwright never downloads a browser here: it launches /usr/bin/chromium
(``scripts/ensure-test-deps.sh`` installs it), with ``--no-sandbox`` when
the tests run as root, as CI does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from convection.tokens import Role, Tokens

from ..api.conftest import LiveServer, token_server

CHROMIUM = "/usr/bin/chromium"
#: Chromium's flags for a closed network: no background connections.
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--font-render-hinting=none",
]
#: The fixed viewport of every page (screenshots compare pixel by pixel).
VIEWPORT = {"width": 1280, "height": 800}
FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Dashboard:
    """The server, a way to mint tokens for it, and the CLI against it."""

    live: LiveServer
    tokens: Tokens
    base: Path

    @property
    def url(self) -> str:
        return self.live.url

    def mint(self, project: str, role: Role = Role.MEMBER) -> str:
        return self.tokens.issue(project, role).secret

    def cli(self, project: str, token: str, *args: str, timeout: float = 120) -> str:
        """``convection --url ... <args>`` as a user runs it; its output."""
        argv = [str(Path(sys.executable).parent / "convection"), "--url", self.url]
        argv += ["--project", project, *args]
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
        env.update(CONVECTION_TOKEN=token, CONVECTION_CONFIG=str(self.base / "absent.toml"))
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def create(
        self, project: str, token: str, name: str, *extra: str, wait: int = 0, done: bool = False
    ) -> None:
        """``stack create`` of app.yaml (each resource taking ``wait`` s);
        with ``done``, the CLI waits for the create to end."""
        template = str(FIXTURES / "app.yaml")
        waiting = ["--wait"] if done else []
        self.cli(project, token, "stack", "create", "-t", template,
                 "--parameter", f"wait={wait}", *extra, name, *waiting)  # fmt: skip

    def start_deploy(self, project: str, token: str, health_url: str) -> str:
        """Upload deploy.yaml and start it; the execution's id."""
        self.cli(project, token, "workflow", "create", str(FIXTURES / "deploy.yaml"))
        given = json.dumps({"health_url": health_url})
        out = self.cli(project, token, "execution", "create", "deploy_cluster",
                       "--input", given, "--format", "json")  # fmt: skip
        return str(json.loads(out)["id"])

    @contextmanager
    def signed_in(self, token: str) -> Iterator[httpx.Client]:
        """An HTTP client holding a dashboard session (as a browser would)."""
        with httpx.Client(base_url=self.url, timeout=30) as client:
            response = sign_in(client, token)
            assert response.status_code == 303, response.text
            yield client


def sign_in(client: httpx.Client, token: str, project: str = "") -> httpx.Response:
    form = client.get("/login")
    found = re.search(r'name="login_csrf" value="([^"]+)"', form.text)
    assert found is not None, form.text
    return client.post(
        "/login", data={"token": token, "project": project, "login_csrf": found.group(1)}
    )


def csrf_of(html: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)"', html)
    assert found is not None, html
    return found.group(1)


@pytest.fixture(scope="session")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    base = tmp_path_factory.mktemp("dashboard")
    with token_server(base) as server:
        yield Dashboard(server.live, server.tokens, base)


@pytest.fixture
def project() -> str:
    return f"p-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One chromium per test module. Not per session: Playwright's sync API
    keeps an event loop running in this thread while it is open, and the
    rest of the suite calls ``asyncio.run``."""
    from playwright.sync_api import sync_playwright

    args = [*CHROMIUM_ARGS, *(["--no-sandbox"] if os.geteuid() == 0 else [])]
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context (no cookies) at the fixed viewport."""
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def member(dashboard: Dashboard, project: str) -> str:
    """A member's token in the test's own project."""
    return dashboard.mint(project, Role.MEMBER)


class _Flaky(BaseHTTPRequestHandler):
    """A health endpoint that answers 503 twice, then 200."""

    calls = 0

    def do_GET(self) -> None:
        type(self).calls += 1
        self.send_response(503 if type(self).calls <= 2 else 200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[str]:
    _Flaky.calls = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/health"
    server.shutdown()
