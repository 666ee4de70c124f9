"""Mistral's REST API v2 under ``/v2`` on a live ``convection server``:
python-mistralclient, unchanged, and plain HTTP for what it hides (error
bodies, the ``next`` link, project isolation with tokens)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from mistralclient.api.base import APIException
from mistralclient.api.v2.client import Client as Mistral

from .conftest import AuthServer, LiveServer, wait_for

HELLO = """\
version: '2.0'
hello:
  input:
    - name
  output:
    greeting: <% $.greeting %>
  tasks:
    greet:
      action: std.echo output="Hello, <% $.name %>"
      publish:
        greeting: <% task().result %>
"""

SLOW = """\
version: '2.0'
slow:
  tasks:
    nap:
      action: std.sleep seconds=2
      on-success: [done]
    done:
      action: std.noop
"""

FLAKY = """\
version: '2.0'
flaky:
  tasks:
    needs_env:
      action: std.echo output=<% env().word %>
"""


def _client(server: LiveServer, project: str, token: str = "any") -> Mistral:
    return Mistral(mistral_url=f"{server.url}/v2", auth_token=token, project_id=project)


def _ended(mistral: Mistral, execution_id: str, *states: str) -> Any:
    wanted = states or ("SUCCESS", "ERROR", "CANCELLED")

    def check() -> Any:
        found = mistral.executions.get(execution_id)
        return found if found.state in wanted else None

    return wait_for(check, f"execution {execution_id} in {wanted}")


@pytest.fixture
def mistral(server: LiveServer, project: str) -> Mistral:
    return _client(server, project)


@pytest.fixture
def v2(server: LiveServer, project: str) -> Callable[..., httpx.Response]:
    def call(method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {"X-Project-Id": project, **kw.pop("headers", {})}
        return httpx.request(method, f"{server.url}/v2{path}", headers=headers, timeout=30, **kw)

    return call


def _fault(response: httpx.Response, code: int) -> str:
    assert response.status_code == code, response.text
    body = response.json()
    assert body["debuginfo"] is None and body["faultcode"] in ("Client", "Server"), body
    message: str = body["faultstring"]
    return message


def test_workflow_execution_tasks_and_action_executions(mistral: Mistral) -> None:
    [wf] = mistral.workflows.create(HELLO)
    assert wf.name == "hello" and json.loads(wf.interface)["input"] == ["name"]
    assert [w.name for w in mistral.workflows.list()] == ["hello"]
    assert mistral.workflows.get("hello").id == wf.id
    assert mistral.workflows.validate(HELLO) == {"valid": True}
    assert mistral.workflows.validate("version: '2.0'\nx: {tasks: 3}")["valid"] is False

    started = mistral.executions.create("hello", workflow_input={"name": "you"})
    assert started.workflow_name == "hello" and json.loads(started.input) == {"name": "you"}
    done = _ended(mistral, started.id)
    assert done.state == "SUCCESS", done.state_info
    assert json.loads(done.output) == {"greeting": "Hello, you"}
    by_id = mistral.executions.create(wf.id, workflow_input=json.dumps({"name": "id"}))
    assert by_id.workflow_id == wf.id

    [task] = mistral.tasks.list(started.id)
    assert task.name == "greet" and task.state == "SUCCESS"
    assert json.loads(task.result) == "Hello, you"
    assert json.loads(task.published) == {"greeting": "Hello, you"}
    assert mistral.tasks.get(task.id).workflow_execution_id == started.id
    [action] = mistral.action_executions.list(task.id)
    assert action.name == "std.echo" and action.state == "SUCCESS"
    assert json.loads(mistral.action_executions.get(action.id).output) == {"result": "Hello, you"}

    _ended(mistral, by_id.id)
    assert {e.id for e in mistral.executions.list()} == {started.id, by_id.id}
    mistral.executions.delete(started.id)
    with pytest.raises(APIException) as gone:
        mistral.executions.get(started.id)
    assert gone.value.error_code == 404
    mistral.executions.delete(by_id.id)
    mistral.workflows.delete("hello")
    assert mistral.workflows.list() == []


def test_pause_resume_and_force_delete(mistral: Mistral) -> None:
    mistral.workflows.create(SLOW)
    started = mistral.executions.create("slow")
    paused = mistral.executions.update(started.id, "PAUSED")
    assert paused.state == "PAUSED"
    resumed = mistral.executions.update(started.id, "RUNNING")
    assert resumed.state == "RUNNING"
    done = _ended(mistral, started.id)
    assert done.state == "SUCCESS", (
        done.state_info,
        [t.to_dict() for t in mistral.tasks.list(started.id)],
    )
    assert {t.name for t in mistral.tasks.list(started.id)} == {"nap", "done"}

    other = mistral.executions.create("slow")
    with pytest.raises(APIException) as refused:
        mistral.executions.delete(other.id)
    assert refused.value.error_code == 403
    mistral.executions.delete(other.id, force=True)


def test_rerun_a_failed_task(mistral: Mistral) -> None:
    mistral.workflows.create(FLAKY)
    started = mistral.executions.create("flaky")
    assert _ended(mistral, started.id).state == "ERROR"
    [task] = mistral.tasks.list(started.id)
    assert task.state == "ERROR"
    again = mistral.tasks.rerun(task.id, env={"word": "fixed"})
    assert again.state == "RUNNING"
    done = _ended(mistral, started.id)
    assert done.state == "SUCCESS", done.state_info
    assert json.loads(mistral.tasks.get(task.id).result) == "fixed"


def test_workbooks_and_actions(mistral: Mistral) -> None:
    book = mistral.workbooks.create(
        "version: '2.0'\nname: book\nworkflows:\n  wf:\n    tasks:\n      t:\n"
        "        action: std.noop\n"
    )
    assert book.name == "book"
    assert "book.wf" in {w.name for w in mistral.workflows.list()}
    [made] = mistral.actions.create(
        "version: '2.0'\ngreet:\n  base: std.echo\n  base-input:\n    output: hi\n"
    )
    assert made.name == "greet" and made.is_system is False
    names = {a.name for a in mistral.actions.list()}
    assert {"greet", "std.echo"} <= names
    assert mistral.actions.get("std.echo").is_system is True
    mistral.actions.delete("greet")
    mistral.workbooks.delete("book")


def test_error_bodies(v2: Callable[..., httpx.Response]) -> None:
    message = _fault(v2("GET", "/workflows/nope"), 404)
    assert message == "Workflow not found [workflow_identifier=nope, namespace=]"
    headers = {"content-type": "text/plain"}
    assert v2("POST", "/workflows", content=HELLO, headers=headers).status_code == 201
    assert "Duplicate entry" in _fault(
        v2("POST", "/workflows", content=HELLO, headers=headers), 409
    )
    _fault(v2("POST", "/workflows", content="version: '2.0'\nx: 1", headers=headers), 400)
    _fault(v2("POST", "/executions", json={}), 400)
    _fault(v2("POST", "/executions", json={"workflow_name": "absent"}), 404)
    _fault(v2("GET", "/executions/no-such"), 404)
    _fault(v2("GET", "/executions", params={"limit": "0"}), 400)
    _fault(v2("GET", "/executions", params={"sort_dirs": "sideways"}), 400)
    _fault(v2("GET", "/no-such-collection"), 404)


def test_pagination_and_fields(mistral: Mistral, v2: Callable[..., httpx.Response]) -> None:
    for n in range(3):
        mistral.workflows.create(HELLO.replace("hello:", f"hello{n}:"))
    first = v2("GET", "/workflows", params={"limit": 2, "sort_keys": "name"}).json()
    assert [w["name"] for w in first["workflows"]] == ["hello0", "hello1"]
    nxt = first["next"]
    assert "/v2/workflows?" in nxt and "marker=" in nxt and "limit=2" in nxt
    second = httpx.get(nxt, headers={"X-Project-Id": mistral.workflows.http_client.project_id})
    assert [w["name"] for w in second.json()["workflows"]] == ["hello2"]
    assert "next" not in second.json()
    slim = v2("GET", "/workflows", params={"fields": "name"}).json()["workflows"]
    assert all(set(w) == {"id", "name"} for w in slim)
    newest = mistral.workflows.list(sort_keys="name", sort_dirs="desc")
    assert newest[0].name == "hello2"


def test_versions_list_both_apis(server: LiveServer) -> None:
    response = httpx.get(f"{server.url}/", timeout=30)
    assert response.status_code == 300
    ids = [v["id"] for v in response.json()["versions"]]
    assert ids == ["v1.0", "v2.0"]
    assert httpx.get(f"{server.url}/v2", timeout=30).json() == {"uri": f"{server.url}/v2"}


def test_projects_never_see_each_other(auth_server: AuthServer) -> None:
    live = auth_server.live
    a = _client(live, "p-mistral-a", auth_server.mint("p-mistral-a"))
    b = _client(live, "p-mistral-b", auth_server.mint("p-mistral-b"))
    [wf] = a.workflows.create(HELLO)
    started = a.executions.create("hello", workflow_input={"name": "a"})
    assert b.workflows.list() == [] and b.executions.list() == []
    for call in (
        lambda: b.workflows.get(wf.id),
        lambda: b.executions.get(started.id),
        lambda: b.executions.create("hello", workflow_input={"name": "b"}),
    ):
        with pytest.raises(APIException) as hidden:
            call()
        assert hidden.value.error_code == 404
    _ended(a, started.id)
    [task] = a.tasks.list(started.id)
    with pytest.raises(APIException) as hidden:
        b.tasks.get(task.id)
    assert hidden.value.error_code == 404
    # A token is good for its own project only, and a bad one for none.
    wrong = httpx.get(
        f"{live.url}/v2/workflows",
        headers={"X-Auth-Token": auth_server.mint("p-mistral-b"), "X-Project-Id": "p-mistral-a"},
    )
    assert wrong.status_code == 403 and "faultstring" in wrong.json()
    bad = httpx.get(f"{live.url}/v2/workflows", headers={"X-Auth-Token": "cvt_wrong"})
    assert bad.status_code == 401 and "faultstring" in bad.json()
