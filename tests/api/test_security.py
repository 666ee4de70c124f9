"""Token authentication against a live server on loopback.

The routes are read from the server's own OpenAPI document, so a route
added later is covered by the project, reader and signal-token checks
without editing this file. Tokens are minted into the server's store, as
``convection token create`` does.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from convection.tokens._tokens import Role

from .conftest import SETTLE_SECONDS, AuthServer, settled
from .conftest import heat_fault as fault

SIMPLE = """\
heat_template_version: 2018-08-31
resources:
  r: {type: OS::Heat::None}
outputs:
  o: {value: plain}
"""

WAITER = """\
heat_template_version: 2018-08-31
resources:
  handle: {type: OS::Heat::WaitConditionHandle}
  other: {type: OS::Heat::WaitConditionHandle}
  wait:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, count: 1, timeout: 120}
outputs:
  got: {value: {get_attr: [wait, data]}}
"""

#: Values for a route's path parameters (stack names and ids come per test).
PATH_VALUES = {
    "resource_name": "r",
    "output_key": "o",
    "event_id": "no-event",
    "type_name": "OS::Heat::None",
    "version": "heat_template_version.2018-08-31",
}
#: POST/PUT/PATCH routes that only read (Heat's preview and validate).
READ_ONLY = re.compile(r"/(preview|validate)$")

Route = tuple[str, str]  # (method, path template)


@pytest.fixture(scope="module")
def routes(auth_server: AuthServer) -> list[Route]:
    """Every ``/v1/{tenant_id}`` route and method the server serves."""
    schema = httpx.get(f"{auth_server.live.url}/openapi.json", timeout=30).json()
    found = [
        (method.upper(), path.removeprefix("/v1/{tenant_id}"))
        for path, ops in schema["paths"].items()
        if path.startswith("/v1/{tenant_id}")
        for method in ops
    ]
    assert len(found) > 20, found  # the schema really lists the API
    return found


def fill(path: str, stack_name: str, stack_id: str) -> str:
    values = {**PATH_VALUES, "stack_name": stack_name, "stack_id": stack_id}
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), "x"), path)


def call(client: httpx.Client, method: str, url: str) -> httpx.Response:
    body: dict[str, Any] | None = None if method in ("GET", "DELETE") else {}
    return client.request(method, url, json=body)


def settle(client: httpx.Client, name: str) -> dict[str, Any]:
    """The stack once its operation ended (its show body)."""
    return settled(client, f"/stacks/{name}")


def gone(client: httpx.Client, stack_id: str) -> None:
    """Waits until a stack's delete completed (Heat still shows a deleted
    stack by id, as DELETE_COMPLETE)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        response = client.get(f"/stacks/{stack_id}", follow_redirects=True)
        assert response.status_code in (200, 404), response.text
        if response.status_code == 404:
            return
        if response.json()["stack"]["stack_status"] == "DELETE_COMPLETE":
            return
        assert time.monotonic() < deadline, f"{stack_id} not deleted in time"
        time.sleep(0.2)


def handle_created(client: httpx.Client, path: str) -> None:
    """Wait until the resource at ``path`` exists: a signal sent before
    that is refused (Heat's "has not been created yet")."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while client.get(path).json()["resource"]["resource_status"] != "CREATE_COMPLETE":
        assert time.monotonic() < deadline, f"{path} not created in time"
        time.sleep(0.05)


def create(client: httpx.Client, name: str, template: str = SIMPLE, **extra: Any) -> str:
    response = client.post("/stacks", json={"stack_name": name, "template": template, **extra})
    assert response.status_code == 201, response.text
    return str(response.json()["stack"]["id"])


@pytest.fixture
def member(auth_server: AuthServer) -> Iterator[tuple[str, httpx.Client]]:
    """A project of this test's own and a member's client in it."""
    project = f"p-{uuid.uuid4().hex[:10]}"
    with auth_server.client(project, auth_server.mint(project)) as client:
        yield project, client


def test_no_bad_or_unknown_token_is_401(auth_server: AuthServer) -> None:
    url = auth_server.live.endpoint("anyone") + "/stacks"
    fault(httpx.get(url), 401, "HTTPUnauthorized")
    for token in ("", "nonsense", "cvt_" + "A" * 43):
        fault(httpx.get(url, headers={"X-Auth-Token": token}), 401, "HTTPUnauthorized")
    create_body = {"stack_name": "s", "template": SIMPLE}
    fault(httpx.post(url, json=create_body), 401, "HTTPUnauthorized")


def test_revoked_and_expired_tokens_are_401(auth_server: AuthServer) -> None:
    issued = auth_server.tokens.issue("p-revoke")
    with auth_server.client("p-revoke", issued.secret) as client:
        assert client.get("/stacks").status_code == 200
        auth_server.tokens.revoke(issued.record.id)
        fault(client.get("/stacks"), 401, "HTTPUnauthorized")
    past = datetime.now(UTC) - timedelta(seconds=1)
    expired = auth_server.tokens.issue("p-revoke", expires_at=past)
    with auth_server.client("p-revoke", expired.secret) as client:
        fault(client.get("/stacks"), 401, "HTTPUnauthorized")


def test_another_projects_token_gets_one_403_everywhere(
    auth_server: AuthServer, routes: list[Route], member: tuple[str, httpx.Client]
) -> None:
    """Every route refuses a token of another project, with the same answer
    for an existing stack and a missing one: nothing leaks about project B."""
    victim_project, victim = member
    stack_id = create(victim, "victim")
    assert settle(victim, "victim")["stack_status"] == "CREATE_COMPLETE"
    intruder = auth_server.mint("p-intruder", Role.ADMIN)
    with auth_server.client(victim_project, intruder) as client:
        for method, path in routes:
            real = call(client, method, fill(path, "victim", stack_id))
            ghost = call(client, method, fill(path, "ghost", str(uuid.uuid4())))
            assert fault(real, 403, "Forbidden") == fault(ghost, 403, "Forbidden"), path
    stacks = victim.get("/stacks").json()["stacks"]
    assert [(s["stack_name"], s["stack_status"]) for s in stacks] == [("victim", "CREATE_COMPLETE")]


def test_reader_reads_but_every_write_is_403(
    auth_server: AuthServer, routes: list[Route], member: tuple[str, httpx.Client]
) -> None:
    project, owner = member
    stack_id = create(owner, "kept")
    before = settle(owner, "kept")
    with auth_server.client(project, auth_server.mint(project, Role.READER)) as reader:
        assert [s["id"] for s in reader.get("/stacks").json()["stacks"]] == [stack_id]
        assert reader.get(f"/stacks/kept/{stack_id}").status_code == 200
        assert reader.get(f"/stacks/kept/{stack_id}/outputs/o").status_code == 200
        writes = [(m, p) for m, p in routes if m != "GET" and not READ_ONLY.search(p)]
        assert {m for m, _ in writes} >= {"POST", "PUT", "PATCH", "DELETE"}
        for method, path in writes:
            fault(call(reader, method, fill(path, "kept", stack_id)), 403, "Forbidden")
        for method, path in routes:
            if method == "GET":
                got = reader.get(fill(path, "kept", stack_id))
                assert got.status_code not in (401, 403), (path, got.text)
    after = settle(owner, "kept")
    assert after["stack_status"] == "CREATE_COMPLETE"
    assert after["updated_time"] == before["updated_time"]


def test_signal_token_signals_its_resource_and_nothing_else(
    auth_server: AuthServer, routes: list[Route], member: tuple[str, httpx.Client]
) -> None:
    project, owner = member
    stack_id = create(owner, "waits", WAITER)
    twin_id = create(owner, "twin", WAITER)
    secret = auth_server.tokens.issue_signal(project, stack_id, "handle").secret
    data = {"status": "SUCCESS", "reason": "done", "data": "payload", "id": "1"}
    with auth_server.client(project, secret) as signaller:
        other = f"/stacks/waits/{stack_id}/resources/other/signal"
        fault(signaller.post(other, json=data), 403, "Forbidden")
        fault(signaller.post(f"/stacks/twin/{twin_id}/resources/handle/signal", json=data), 403)
        for method, path in routes:
            if not path.endswith("/signal"):
                fault(call(signaller, method, fill(path, "waits", stack_id)), 403, "Forbidden")
        handle_created(owner, f"/stacks/waits/{stack_id}/resources/handle")
        signalled = signaller.post(f"/stacks/waits/{stack_id}/resources/handle/signal", json=data)
        assert signalled.status_code == 200, signalled.text
        stack = settle(owner, "waits")
        assert stack["stack_status"] == "CREATE_COMPLETE", stack
        assert owner.get(f"/stacks/waits/{stack_id}/outputs/got").json()["output"][
            "output_value"
        ] == json.dumps({"1": "payload"})

        assert owner.delete(f"/stacks/waits/{stack_id}").status_code == 204
        gone(owner, stack_id)
        again = signaller.post(f"/stacks/waits/{stack_id}/resources/handle/signal", json=data)
        fault(again, 401, "HTTPUnauthorized")  # revoked with its stack


HIDDEN_TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  pw: {type: string, hidden: true}
  pw2: {type: string, hidden: true, default: unset}
resources:
  salted:
    type: OS::Heat::RandomString
    properties: {salt: {get_param: pw}}
  holder:
    type: OS::Heat::None
    properties: {a: {get_param: pw}, b: {get_param: pw2}}
outputs:
  o: {value: {get_attr: [salted, value]}}
"""


def test_hidden_parameters_never_appear_in_answers_or_logs(
    auth_server: AuthServer, member: tuple[str, httpx.Client]
) -> None:
    _, client = member
    first, second, third = (f"hidden-{uuid.uuid4().hex}" for _ in range(3))
    env = {"parameter_defaults": {"pw2": second}}
    stack_id = create(
        client, "secretive", HIDDEN_TEMPLATE, parameters={"pw": first}, environment=env
    )
    seen = [settle(client, "secretive")]
    base = f"/stacks/secretive/{stack_id}"
    reads = ["", "/events", "/resources", "/resources/holder", "/resources/holder/events"]
    reads += ["/resources/holder/metadata", "/outputs", "/outputs/o", "/template"]
    reads += ["/environment", "/files"]
    answers = [client.get(base + r) for r in reads] + [client.get("/stacks")]
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    assert answers[0].json()["stack"]["parameters"]["pw"] == "******"  # it is there, masked
    patch = {"parameters": {"pw": third}}
    answers.append(client.put(base + "/preview", json={"template": HIDDEN_TEMPLATE, **patch}))
    answers.append(client.patch(base, json=patch))
    seen.append(settle(client, "secretive"))
    answers.append(client.get(base + "/events"))
    bad = {
        "parameters": {
            "pw": {"type": "string", "hidden": True, "constraints": [{"length": {"max": 3}}]}
        }
    }
    refused = client.post(
        "/stacks",
        json={
            "stack_name": "refused",
            "template": {"heat_template_version": "2018-08-31", **bad},
            "parameters": {"pw": first},
        },
    )
    fault(refused, 400)
    text = "\n".join([a.text for a in [*answers, refused]] + [json.dumps(s) for s in seen])
    logs = auth_server.live.logs()
    assert "secretive" in logs  # the log is really captured
    for value in (first, second, third):
        assert value not in text
        assert value not in logs


def test_oversized_and_malformed_bodies_are_heat_faults(
    auth_server: AuthServer, member: tuple[str, httpx.Client]
) -> None:
    _, client = member
    big = {"stack_name": "big", "template": SIMPLE, "files": {"x": "y" * (1024 * 1024)}}
    fault(client.post("/stacks", json=big), 400, "RequestLimitExceeded")
    huge = SIMPLE + "description: " + "d" * (512 * 1024) + "\n"
    response = client.post("/stacks", json={"stack_name": "huge", "template": huge})
    assert "Template size" in fault(response, 400, "RequestLimitExceeded")["error"]["message"]
    raw = b'{"stack_name": "x", "template": '
    headers = {"content-type": "application/json"}
    fault(client.post("/stacks", content=raw, headers=headers), 400, "HTTPBadRequest")
    fault(client.post("/stacks", content=b"\xff\xfe", headers=headers), 400, "HTTPBadRequest")
    fault(client.post("/stacks", json=["a", "list"]), 400, "HTTPBadRequest")
    fault(client.post("/stacks", json={"stack_name": 5, "template": SIMPLE}), 400)
    anonymous = httpx.post(str(client.base_url).rstrip("/") + "/stacks", json=big)
    fault(anonymous, 401, "HTTPUnauthorized")  # refused before the body is read
    assert client.get("/stacks").json()["stacks"] == []


def test_parallel_clients_lose_nothing(
    auth_server: AuthServer, member: tuple[str, httpx.Client]
) -> None:
    """Eight clients create, update and delete stacks in one project at
    once: no 5xx, and the final list is exactly what they left."""
    project, _ = member
    secret = auth_server.mint(project)
    statuses: list[int] = []
    lock = threading.Lock()
    updated = SIMPLE.replace("outputs:", "  r2: {type: OS::Heat::None}\noutputs:")

    def record(response: httpx.Response) -> httpx.Response:
        with lock:
            statuses.append(response.status_code)
        return response

    def worker(i: int) -> None:
        with auth_server.client(project, secret) as client:
            ids = {n: create(client, f"c{i}-{n}") for n in ("keep", "drop")}
            for name in ids:
                assert settle(client, f"c{i}-{name}")["stack_status"] == "CREATE_COMPLETE"
            body = {"template": updated}
            assert (
                record(client.put(f"/stacks/c{i}-keep/{ids['keep']}", json=body)).status_code == 202
            )
            assert record(client.delete(f"/stacks/c{i}-drop/{ids['drop']}")).status_code == 204
            assert settle(client, f"c{i}-keep")["stack_status"] == "UPDATE_COMPLETE"
            gone(client, ids["drop"])

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(worker, range(8)))
    assert statuses and all(s < 500 for s in statuses), statuses
    with auth_server.client(project, secret) as client:
        final = client.get("/stacks").json()["stacks"]
    assert sorted((s["stack_name"], s["stack_status"]) for s in final) == [
        (f"c{i}-keep", "UPDATE_COMPLETE") for i in range(8)
    ]
