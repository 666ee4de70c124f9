"""Issue 18's security review, a test for each finding: tokens compared in
constant time; a revocation refused at once by every server on the store;
a signal URL's token good for its one signal alone (``/v1``, ``/v2`` and
the dashboard's sign-in); requests per token limited (429, Retry-After,
each API's own fault body); egress refused by a server's own settings.

Real ``convection server`` processes on real SQLite stores throughout.
"""

from __future__ import annotations

import ast
import hmac
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from convection.api.ratelimit import Buckets
from convection.store.sql import SQLStore
from convection.tokens import Tokens, _tokens

from .conftest import AuthServer, LiveServer, start_server, token_server
from .conftest import heat_fault as fault
from .test_security import WAITER, create, handle_created

SRC = Path(__file__).parents[2] / "src" / "convection"
#: Where presented credentials are checked.
CHECKERS = ("tokens/_tokens.py", "api/auth.py", "api/routers/signal_urls.py", "api/ratelimit.py")
SECRET_NAME = re.compile(r"secret|hash|digest|token(?!_id)", re.IGNORECASE)


# -- constant-time comparison ------------------------------------------------------------


def test_no_secret_is_compared_with_equality() -> None:
    """No ``==``/``!=`` in the credential checkers has a secret or a hash
    on either side (they go through ``hmac.compare_digest``)."""
    for rel in CHECKERS:
        tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Eq | ast.NotEq) for op in node.ops
            ):
                text = ast.unparse(node)
                operands = re.sub(r"\bprincipal\.|\bfound\.(project|role)\b", "", text)
                assert not SECRET_NAME.search(operands), f"{rel}: {text}"


def test_verification_compares_the_hash_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLStore(f"sqlite:///{tmp_path / 'tokens.db'}")
    try:
        tokens = Tokens(store)
        issued = tokens.issue("p")
        seen: list[tuple[str, str]] = []
        real = hmac.compare_digest

        def recording(a: Any, b: Any) -> bool:
            seen.append((a, b))
            return real(a, b)

        monkeypatch.setattr(_tokens.hmac, "compare_digest", recording)
        assert tokens.verify(issued.secret) == issued.record
        assert seen == [(issued.record.secret_hash, _tokens.hash_secret(issued.secret))]
        assert tokens.verify(issued.secret + "x") is None
    finally:
        store.close()


# -- revocation on every server ----------------------------------------------------------


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[tuple[LiveServer, LiveServer, Tokens]]:
    """Two token-authenticated servers on one SQLite store."""
    db = f"sqlite:///{tmp_path / 'shared.db'}"
    first = start_server(db, tmp_path / "first.log", auth=True)
    try:
        second = start_server(db, tmp_path / "second.log", auth=True)
    except BaseException:
        first.stop()
        raise
    store = SQLStore(db)
    try:
        yield first, second, Tokens(store)
    finally:
        second.stop()
        first.stop()
        store.close()


def test_a_revoked_token_is_refused_at_once_on_every_server(
    two_servers: tuple[LiveServer, LiveServer, Tokens],
) -> None:
    first, second, tokens = two_servers
    issued = tokens.issue("p-both")
    headers = {"X-Auth-Token": issued.secret}
    urls = [f"{s.endpoint('p-both')}/stacks" for s in (first, second)]
    for url in urls:
        assert httpx.get(url, headers=headers, timeout=30).status_code == 200
    tokens.revoke(issued.record.id)
    for url in urls:  # no wait: the very next request on each is refused
        fault(httpx.get(url, headers=headers, timeout=30), 401, "HTTPUnauthorized")
    v2 = f"{second.url}/v2/workflows"
    assert httpx.get(v2, headers=headers, timeout=30).status_code == 401


# -- a signal URL's token ----------------------------------------------------------------


def _sign_in(base: str, token: str) -> httpx.Response:
    """The dashboard's sign-in form, submitted as a browser does."""
    with httpx.Client(base_url=base, timeout=30) as browser:
        form = browser.get("/login")
        csrf = re.search(r'name="login_csrf" value="([^"]+)"', form.text)
        assert form.status_code == 200 and csrf is not None
        return browser.post(
            "/login", data={"token": token, "login_csrf": csrf.group(1), "next": "/stacks"}
        )


def test_a_signal_token_signals_its_one_resource_and_nothing_else(
    auth_server: AuthServer,
) -> None:
    project = f"p-{uuid.uuid4().hex[:10]}"
    member = auth_server.mint(project)
    with auth_server.client(project, member) as owner:
        stack_id = create(owner, "waits", WAITER)
        twin_id = create(owner, "twin", WAITER)
        handle_created(owner, f"/stacks/waits/{stack_id}/resources/handle")
    secret = auth_server.tokens.issue_signal(project, stack_id, "handle").secret
    base = auth_server.live.url
    signal = {"status": "SUCCESS", "reason": "done", "data": "x", "id": "1"}
    with auth_server.client(project, secret) as token:
        for read in ("/stacks", f"/stacks/waits/{stack_id}",
                     f"/stacks/waits/{stack_id}/resources/handle",
                     f"/stacks/waits/{stack_id}/events", "/resource_types"):  # fmt: skip
            fault(token.get(read), 403, "Forbidden")
        for other in (f"/stacks/waits/{stack_id}/resources/other/signal",
                      f"/stacks/twin/{twin_id}/resources/handle/signal"):  # fmt: skip
            fault(token.post(other, json=signal), 403, "Forbidden")
        presigned = f"{base}/v1/signal/{project}/stacks/twin/{twin_id}/resources/handle"
        refused = httpx.post(presigned, params={"token": secret}, json=signal, timeout=30)
        fault(refused, 403, "Forbidden")
        headers = {"X-Auth-Token": secret}
        for method, path, body in [
            ("GET", "/v2/workflows", None), ("GET", "/v2/executions", None),
            ("GET", "/v2/action_executions", None), ("GET", "/v2/actions/std.noop", None),
            ("POST", "/v2/executions", {"workflow_name": "wf"}),
            ("POST", "/v2/action_executions", {"name": "std.noop"}),
        ]:  # fmt: skip
            got = httpx.request(method, base + path, headers=headers, json=body, timeout=30)
            assert got.status_code == 403, (path, got.text)
            assert "faultstring" in got.json(), got.text
        signed_in = _sign_in(base, secret)
        assert signed_in.status_code == 401 and "convection_session" not in signed_in.cookies
        assert _sign_in(base, member).status_code == 303  # the form itself works
        ok = token.post(f"/stacks/waits/{stack_id}/resources/handle/signal", json=signal)
        assert ok.status_code == 200, ok.text


# -- requests per token, and egress, on a strictly configured server ---------------------


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """A server a user configured strictly: 1 request a second per token
    (a burst of 3), and loopback egress refused (the default)."""
    env = {"CONVECTION_API_RATE_LIMIT": "1", "CONVECTION_API_RATE_BURST": "3",
           "CONVECTION_EGRESS_ALLOW_LOOPBACK": "0"}  # fmt: skip
    with token_server(tmp_path_factory.mktemp("strict"), env) as server:
        yield server


def test_requests_over_a_tokens_rate_get_429(strict: AuthServer) -> None:
    busy, calm = strict.mint("p-rate"), strict.mint("p-rate")
    url = strict.live.endpoint("p-rate") + "/stacks"
    answers = [httpx.get(url, headers={"X-Auth-Token": busy}, timeout=30) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    limited = httpx.get(url, headers={"X-Auth-Token": busy}, timeout=30)
    body = fault(limited, 429, "HTTPTooManyRequests")
    assert body["title"] == "Too Many Requests" and "token" in body["error"]["message"]
    wait = int(limited.headers["Retry-After"])
    assert 1 <= wait <= 2
    v2 = httpx.get(f"{strict.live.url}/v2/workflows", headers={"X-Auth-Token": busy}, timeout=30)
    assert v2.status_code == 429 and v2.json()["faultcode"] == "Client", v2.text
    assert "Retry-After" in v2.headers
    assert httpx.get(url, headers={"X-Auth-Token": calm}, timeout=30).status_code == 200
    assert httpx.get(f"{strict.live.url}/healthz", timeout=30).status_code == 200
    time.sleep(wait)
    assert httpx.get(url, headers={"X-Auth-Token": busy}, timeout=30).status_code == 200


def test_the_buckets_refill_at_the_rate() -> None:
    buckets = Buckets(rate=2.0, burst=2)
    assert [buckets.take("k", 0.0) for _ in range(2)] == [0.0, 0.0]
    assert buckets.take("k", 0.0) == pytest.approx(0.5)
    assert buckets.take("k", 0.5) == 0.0
    assert buckets.take("other", 0.5) == 0.0


def test_a_server_refuses_loopback_egress_by_default(strict: AuthServer) -> None:
    """The server's own settings govern std.http: here its own /healthz,
    on loopback, is refused, naming the setting that would allow it."""
    token = strict.mint("p-egress")
    adhoc = {"name": "std.http", "input": {"url": f"{strict.live.url}/healthz"},
             "params": {"run_sync": True}}  # fmt: skip
    ran = httpx.post(f"{strict.live.url}/v2/action_executions", json=adhoc,
                     headers={"X-Auth-Token": token}, timeout=60)  # fmt: skip
    assert ran.status_code == 201, ran.text
    body = ran.json()
    assert body["state"] == "ERROR", body
    assert "127.0.0.1" in body["output"] and "egress_allow_loopback" in body["output"]
