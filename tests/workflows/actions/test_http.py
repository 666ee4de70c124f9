"""std.http and std.mistral_http against a real HTTP server on loopback,
with Mistral's result shape and status rule (std_actions.HTTPAction)."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from convection.workflows import Failure, Pending, RunContext, Success, default_registry

from .conftest import CTX, run


class Handler(BaseHTTPRequestHandler):
    """/echo answers with what it received; /status/N with N; /text with
    text; /redirect with a 302 to /echo; /big with 6 MiB."""

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()
        self.wfile.write(body)

    def _any(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if url.path.startswith("/status/"):
            status = int(url.path.rsplit("/", 1)[1])
            self._answer(status, b'{"error": "bad"}', "application/json")
        elif url.path == "/text":
            self._answer(200, "caf\xe9".encode("latin-1"), "text/plain", Set_Cookie="sid=42")
        elif url.path == "/redirect":
            self._answer(302, b"", "text/plain", Location="/echo")
        elif url.path == "/big":
            self._answer(200, b"x" * (6 * 1024 * 1024), "application/octet-stream")
        else:
            seen = {
                "method": self.command,
                "query": parse_qs(url.query),
                "headers": dict(self.headers.items()),
                "body": body,
            }
            self._answer(200, json.dumps(seen).encode(), "application/json; charset=utf-8")

    do_GET = do_POST = do_PUT = do_DELETE = _any


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def http(params: dict[str, Any], name: str = "std.http", ctx: Any = CTX) -> Any:
    return run(default_registry().lookup(name)().run(ctx, params))


def test_result_has_mistrals_keys_and_parsed_json(server: str) -> None:
    outcome = http({"url": f"{server}/echo", "params": {"q": "1"}})
    assert isinstance(outcome, Success)
    result = outcome.data
    assert set(result) == {
        "content", "status", "headers", "url", "history",
        "encoding", "reason", "cookies", "elapsed",
    }  # fmt: skip
    assert result["status"] == 200
    assert result["reason"] == "OK"
    assert result["encoding"] == "utf-8"
    assert result["content"]["method"] == "GET"
    assert result["content"]["query"] == {"q": ["1"]}
    assert result["url"] == f"{server}/echo?q=1"
    assert result["headers"]["content-type"] == "application/json; charset=utf-8"
    assert result["history"] == []
    assert isinstance(result["elapsed"], float) and result["elapsed"] >= 0
    json.dumps(result)  # all of it is JSON, for the engine's context


def test_text_content_cookies_and_requests_default_encoding(server: str) -> None:
    result = http({"url": f"{server}/text"}).data
    assert result["content"] == "caf\xe9"
    assert result["encoding"] == "ISO-8859-1"
    assert result["cookies"] == {"sid": "42"}


def test_a_bad_status_is_an_error_with_the_same_dict(server: str) -> None:
    outcome = http({"url": f"{server}/status/404"})
    assert isinstance(outcome, Failure)
    assert outcome.error["status"] == 404
    assert outcome.error["content"] == {"error": "bad"}
    assert isinstance(http({"url": f"{server}/status/500"}), Failure)
    assert isinstance(http({"url": f"{server}/status/204"}), Success)


def test_body_json_headers_and_auth_as_mistral_sends_them(server: str) -> None:
    sent = http({
        "url": f"{server}/echo",
        "method": "post",
        "body": {"a": 1},
        "headers": {"X-Count": 3, "X-Ratio": 0.5},
        "auth": "admin:s3cret",
    }).data["content"]  # fmt: skip
    assert sent["method"] == "POST"
    assert json.loads(sent["body"]) == {"a": 1}
    assert sent["headers"]["X-Count"] == "3" and sent["headers"]["X-Ratio"] == "0.5"
    assert sent["headers"]["Authorization"] == "Basic " + base64.b64encode(b"admin:s3cret").decode()
    as_json = http({"url": f"{server}/echo", "method": "PUT", "json": [1, "b"]}).data
    assert json.loads(as_json["content"]["body"]) == [1, "b"]
    assert as_json["content"]["headers"]["Content-Type"] == "application/json"


def test_body_and_json_together_are_refused(server: str) -> None:
    outcome = http({"url": f"{server}/echo", "body": "x", "json": {"a": 1}})
    assert outcome == Failure("Only one of the parameters 'json' and 'body' can be passed")


def test_a_malformed_auth_never_shows_its_value(server: str) -> None:
    outcome = http({"url": f"{server}/echo", "auth": "no-colon-s3cret"})
    assert isinstance(outcome, Failure) and "s3cret" not in outcome.error


def test_redirects_are_followed_only_when_allowed(server: str) -> None:
    stay = http({"url": f"{server}/redirect"})
    assert isinstance(stay, Success) and stay.data["status"] == 302  # 302 < 307: success
    follow = http({"url": f"{server}/redirect", "allow_redirects": True}).data
    assert follow["status"] == 200 and follow["content"]["method"] == "GET"
    assert follow["history"] == [{"status": 302, "url": f"{server}/redirect"}]


def test_transport_failure_and_oversized_response(server: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the with ends: nothing listens
    refused = http({"url": f"http://127.0.0.1:{port}/", "timeout": 5})
    assert isinstance(refused, Failure)
    assert refused.error.startswith("Failed to send HTTP request: ")
    big = http({"url": f"{server}/big"})
    assert big == Failure("Failed to send HTTP request: the response is larger than 5242880 bytes")


def test_mistral_http_headers_reach_the_receiver(server: str) -> None:
    seen: list[dict[str, str]] = []

    class Recording(Handler):
        def do_POST(self) -> None:
            seen.append(dict(self.headers.items()))
            self._answer(202, b"{}", "application/json")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/hook"
        assert http({"url": url, "method": "POST"}, "std.mistral_http") == Pending(  # waits
            {"status": 202}
        )
        no_callback = RunContext(
            execution_id="e2", action_execution_id="a2", project="p", limits=CTX.limits
        )
        http({"url": url, "method": "POST"}, "std.mistral_http", no_callback)
    finally:
        httpd.shutdown()
        httpd.server_close()
    first, second = seen
    assert first["Mistral-Workflow-Name"] == "wf"
    assert first["Mistral-Workflow-Execution-Id"] == "wf-ex-1"
    assert first["Mistral-Task-Id"] == "task-ex-1"
    assert first["Mistral-Action-Execution-Id"] == "action-ex-1"
    assert first["Mistral-Callback-URL"] == "/v2/action_executions/action-ex-1"
    assert "Mistral-Callback-URL" not in second and "Mistral-Task-Id" not in second
    assert second["Mistral-Action-Execution-Id"] == "a2"


def test_mistral_http_errors_at_once(server: str) -> None:
    outcome = http({"url": f"{server}/status/503"}, "std.mistral_http")
    assert isinstance(outcome, Failure) and outcome.error["status"] == 503
