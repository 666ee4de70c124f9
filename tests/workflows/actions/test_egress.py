"""The egress policy of std.http and std.mistral_http (issue 18's security
review): refused addresses fail the action cleanly, naming the address and
the setting that would allow it, and no connection is made; every hop of a
redirect is checked; the policy comes from the settings a user writes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from convection.cli.config import load_settings
from convection.common import InvalidInput, Limits
from convection.common.egress import EgressPolicy
from convection.workflows import Failure, RunContext, Success, default_registry
from convection.workflows.actions.egress import PolicedBackend, policed

from .conftest import run

LOOPBACK_OK = EgressPolicy(allow_loopback=True)


class Counting(BaseHTTPRequestHandler):
    """Counts the requests it gets; ``/hop?to=URL`` redirects to URL."""

    hits: list[str]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.hits.append(self.path)
        if self.path.startswith("/hop?to="):
            self.send_response(302)
            self.send_header("Location", self.path.removeprefix("/hop?to="))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def serve(host: str) -> tuple[ThreadingHTTPServer, list[str]]:
    hits: list[str] = []
    handler = type("Handler", (Counting,), {"hits": hits})
    httpd = ThreadingHTTPServer((host, 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, hits


@pytest.fixture
def first() -> Iterator[tuple[str, list[str]]]:
    httpd, hits = serve("127.0.0.1")
    yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def second() -> Iterator[tuple[str, list[str]]]:
    """A server on another loopback address (Linux answers all of 127/8)."""
    httpd, hits = serve("127.0.0.2")
    yield f"http://127.0.0.2:{httpd.server_address[1]}", hits
    httpd.shutdown()
    httpd.server_close()


def ctx(policy: EgressPolicy) -> RunContext:
    return RunContext(execution_id="e", action_execution_id="a", project="p",
                      limits=Limits(egress=policy))  # fmt: skip


def http(url: str, policy: EgressPolicy, name: str = "std.http", **extra: Any) -> Any:
    action = default_registry().lookup(name)()
    return run(action.run(ctx(policy), {"url": url, **extra}))


@pytest.mark.parametrize(
    ("address", "setting"),
    [
        ("169.254.169.254", "a cloud metadata address; add it to egress_allow"),
        ("fd00:ec2::254", "a cloud metadata address; add it to egress_allow"),
        ("169.254.10.1", "link-local; add it to egress_allow"),
        ("fe80::1", "link-local; add it to egress_allow"),
        ("127.0.0.1", "loopback; set egress_allow_loopback"),
        ("::1", "loopback; set egress_allow_loopback"),
        ("::ffff:127.0.0.1", "loopback; set egress_allow_loopback"),
        ("0.0.0.0", "loopback; set egress_allow_loopback"),
    ],
)
def test_default_refuses_metadata_link_local_and_loopback(address: str, setting: str) -> None:
    refusal = EgressPolicy().refusal(address)
    assert refusal is not None and setting in refusal
    assert EgressPolicy().refusal("203.0.113.7") is None


def test_deny_wins_and_allow_is_an_allow_list() -> None:
    policy = EgressPolicy(allow_loopback=True, deny=("127.0.0.2/32",), allow=("10.0.0.0/8",))
    assert policy.refusal("127.0.0.1") is None
    assert "egress_deny" in (policy.refusal("127.0.0.2") or "")
    assert policy.refusal("10.1.2.3") is None
    assert "not in egress_allow" in (policy.refusal("203.0.113.7") or "")
    assert EgressPolicy(allow=("169.254.169.254/32",)).refusal("169.254.169.254") is None


def test_a_refused_loopback_url_fails_cleanly_and_sends_nothing(
    first: tuple[str, list[str]],
) -> None:
    url, hits = first
    for name in ("std.http", "std.mistral_http"):
        outcome = http(f"{url}/x", EgressPolicy(), name)
        assert isinstance(outcome, Failure), outcome
        assert "127.0.0.1" in outcome.error and "egress_allow_loopback" in outcome.error
    assert hits == []
    assert isinstance(http(f"{url}/x", LOOPBACK_OK), Success)
    assert hits == ["/x"]


def test_a_name_is_resolved_and_every_address_checked(first: tuple[str, list[str]]) -> None:
    """``localhost`` is checked by what it resolves to, not by its name."""
    url, hits = first
    outcome = http(url.replace("127.0.0.1", "localhost"), EgressPolicy())
    assert isinstance(outcome, Failure) and "(localhost)" in outcome.error, outcome
    assert "egress_allow_loopback" in outcome.error
    assert hits == []


def test_metadata_names_are_refused_before_resolving() -> None:
    outcome = http("http://metadata.google.internal/computeMetadata/v1/", EgressPolicy())
    assert isinstance(outcome, Failure) and "metadata.google.internal" in outcome.error
    assert "egress_allow" in outcome.error


def test_each_redirect_hop_is_checked(
    first: tuple[str, list[str]], second: tuple[str, list[str]]
) -> None:
    """An allowed server redirecting to a refused address gets no further."""
    url, hits = first
    target, target_hits = second
    policy = EgressPolicy(allow_loopback=True, deny=("127.0.0.2/32",))
    outcome = http(f"{url}/hop?to={target}/secret", policy, allow_redirects=True)
    assert isinstance(outcome, Failure), outcome
    assert "127.0.0.2" in outcome.error and "egress_deny" in outcome.error
    assert hits == [f"/hop?to={target}/secret"] and target_hits == []
    followed = http(f"{url}/hop?to={target}/ok", LOOPBACK_OK, allow_redirects=True)
    assert isinstance(followed, Success) and target_hits == ["/ok"]


def test_a_proxy_is_checked_too(first: tuple[str, list[str]]) -> None:
    url, hits = first
    policy = EgressPolicy(allow_loopback=True, deny=("127.0.0.1/32",))
    outcome = http("http://203.0.113.9/", policy, proxies={"http": url})
    assert isinstance(outcome, Failure) and "egress_deny" in outcome.error, outcome
    assert hits == []


def test_the_transport_really_uses_the_policed_backend() -> None:
    """The seam in httpx this relies on (a new httpx would fail here)."""
    transport = policed(httpx.AsyncHTTPTransport(), EgressPolicy())
    assert isinstance(transport._pool._network_backend, PolicedBackend)
    proxied = policed(httpx.AsyncHTTPTransport(proxy="http://203.0.113.9:3128"), EgressPolicy())
    assert isinstance(proxied._pool._network_backend, PolicedBackend)


def test_settings_build_the_policy(tmp_path: Any) -> None:
    absent = str(tmp_path / "absent.toml")
    base = {"CONVECTION_CONFIG": absent}
    assert load_settings(environ=base).settings.limits().egress == EgressPolicy()
    environ = {**base, "CONVECTION_EGRESS_ALLOW_LOOPBACK": "1",
               "CONVECTION_EGRESS_DENY": "10.0.0.0/8, 127.0.0.2",
               "CONVECTION_EGRESS_ALLOW": "192.0.2.0/24"}  # fmt: skip
    egress = load_settings(environ=environ).settings.limits().egress
    assert egress == EgressPolicy(True, ("10.0.0.0/8", "127.0.0.2/32"), ("192.0.2.0/24",))
    with pytest.raises(InvalidInput, match="egress_deny"):
        load_settings(environ={**base, "CONVECTION_EGRESS_DENY": "10.0.0.0/33"})
    with pytest.raises(InvalidInput, match="egress_allow_loopback"):
        load_settings(environ={**base, "CONVECTION_EGRESS_ALLOW_LOOPBACK": "maybe"})
