"""``convection server`` itself: refusals at start, health, docs, the
structured access log, secrets kept out of answers and logs, and a
graceful stop that leaves work for the next server to take up."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from heatclient.client import Client

from convection.cli.server_cmd import is_loopback, parse_bind
from convection.common.errors import InvalidInput

CONVECTION = str(Path(sys.executable).parent / "convection")

HIDDEN = """\
heat_template_version: 2018-08-31
parameters:
  password:
    type: string
    hidden: true
resources:
  r:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: password}
"""

SLOW = """\
heat_template_version: 2018-08-31
resources:
  pause:
    type: OS::Heat::Delay
    properties:
      min_wait: 4
      max_jitter: 0
  after:
    type: OS::Heat::None
    depends_on: pause
"""


def _server_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    db = f"sqlite:///{tmp_path / 'refused.db'}"
    return subprocess.run(
        [CONVECTION, "server", "--db", db, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"CONVECTION_CONFIG": str(tmp_path / "absent.toml"), "PATH": "/usr/bin:/bin"},
    )


def test_no_auth_is_refused_off_loopback(tmp_path: Path) -> None:
    done = _server_cli(tmp_path, "--bind", "0.0.0.0:18004", "--no-auth")
    assert done.returncode == 1
    assert "--no-auth is refused on 0.0.0.0" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_bind_and_loopback_rules() -> None:
    assert parse_bind("127.0.0.1:8004") == ("127.0.0.1", 8004)
    assert parse_bind("[::1]:9000") == ("::1", 9000)
    for bad in ("8004", "localhost:", "host:99999", ":80"):
        with pytest.raises(InvalidInput):
            parse_bind(bad)
    assert is_loopback("127.0.0.1") and is_loopback("127.8.9.10")
    assert is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.1")
    assert not is_loopback("example.com")


def test_health_and_openapi_docs(server: Any) -> None:
    health = httpx.get(f"{server.url}/healthz", timeout=30)
    assert health.json() == {"status": "ok", "checks": {"engine": "ok", "store": "ok"}}
    docs = httpx.get(f"{server.url}/docs", timeout=30)
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    spec = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    assert "/v1/{tenant_id}/stacks" in spec["paths"]
    versions = httpx.get(f"{server.url}/", timeout=30)
    assert versions.status_code == 300
    assert versions.json()["versions"][0]["id"] == "v1.0"


def test_access_log_is_one_json_object_per_request(server: Any, http: httpx.Client) -> None:
    response = http.get("/stacks", params={"name": "x"})
    request_id = response.headers["x-openstack-request-id"]
    lines = [json.loads(line) for line in server.logs().splitlines() if request_id in line]
    assert len(lines) == 1
    line = lines[0]
    assert line["kind"] == "access" and line["method"] == "GET" and line["status"] == 200
    assert line["path"].endswith("/stacks")
    assert isinstance(line["duration_ms"], float)
    for raw in server.logs().splitlines():  # every line is JSON
        assert raw.startswith("{"), raw
        json.loads(raw)


def test_hidden_parameters_never_leave_the_server(
    server: Any, heat: Client, http: httpx.Client, settle: Any
) -> None:
    secret = "s3cr3t-value-7731"
    preview = http.post(
        "/stacks/preview",
        json={"stack_name": "pv", "template": HIDDEN, "parameters": {"password": secret}},
    )
    assert preview.status_code == 200 and secret not in preview.text
    stack_id = heat.stacks.create(
        stack_name="hidden", template=HIDDEN, parameters={"password": secret}
    )["stack"]["id"]
    settle(heat, stack_id)
    answers = [
        http.get(f"/stacks/hidden/{stack_id}"),
        http.get(f"/stacks/hidden/{stack_id}/environment"),
        http.get(f"/stacks/hidden/{stack_id}/events"),
        http.get(f"/stacks/hidden/{stack_id}/resources"),
        http.get("/stacks"),
    ]
    for answer in answers:
        assert answer.status_code == 200
        assert secret not in answer.text
    assert http.get(f"/stacks/hidden/{stack_id}").json()["stack"]["parameters"]["password"] == (
        "******"
    )
    assert secret not in server.logs()


def test_graceful_stop_leaves_work_for_the_next_server(
    tmp_path: Path, launch: Any, settle: Any
) -> None:
    db = f"sqlite:///{tmp_path / 'resume.db'}"
    first = launch(db)
    heat = Client("1", endpoint=first.endpoint("demo"), token="t")
    stack_id = heat.stacks.create(stack_name="slow", template=SLOW)["stack"]["id"]
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    # SIGTERM: uvicorn shuts down gracefully, then re-raises the signal.
    assert first.stop() in (0, -15)
    assert "engine stopped" in first.logs()
    assert "Application shutdown complete" in first.logs()

    second = launch(db)
    heat = Client("1", endpoint=second.endpoint("demo"), token="t")
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE"
    states = [(e.resource_name, e.resource_status) for e in heat.events.list(stack_id)]
    assert states.count(("pause", "CREATE_IN_PROGRESS")) == 1  # taken up, not restarted
    assert ("after", "CREATE_COMPLETE") in states


def test_no_engine_serves_while_a_separate_engine_does_the_work(
    tmp_path: Path, launch: Any, settle: Any
) -> None:
    """``server --no-engine`` answers and records; the work waits for a
    ``convection engine`` process on the same store, which takes it up."""
    db = f"sqlite:///{tmp_path / 'apart.db'}"
    api = launch(db, "--no-engine")
    assert "No engine here (--no-engine)" in api.logs()
    heat = Client("1", endpoint=api.endpoint("demo"), token="t")
    stack_id = heat.stacks.create(stack_name="apart", template=SLOW)["stack"]["id"]
    time.sleep(1.5)  # several scans of an engine, were there one
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    env = {"CONVECTION_CONFIG": str(tmp_path / "absent.toml"), "PATH": "/usr/bin:/bin"}
    engine = subprocess.Popen(
        [CONVECTION, "--db", db, "engine", "--until-idle"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    try:
        assert settle(heat, stack_id).stack_status == "CREATE_COMPLETE"
        assert engine.wait(120) == 0
    finally:
        if engine.poll() is None:
            engine.kill()
