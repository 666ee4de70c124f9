"""``/v2`` routes over an execution's tree and outside workflows, on a live
server with python-mistralclient unchanged: the execution report,
sub-executions, ad-hoc action executions, and listings with Mistral's
filter operators and mixed sort directions."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from mistralclient.api.base import APIException
from mistralclient.api.v2.client import Client as Mistral

from .conftest import LiveServer, wait_for
from .test_mistral_v2 import _ended, _fault

TREE = """\
version: '2.0'
leaf:
  tasks:
    boom:
      action: std.fail
parent:
  tasks:
    fine:
      action: std.noop
    sub:
      workflow: leaf
"""


@pytest.fixture
def mistral(server: LiveServer, project: str) -> Mistral:
    return Mistral(mistral_url=f"{server.url}/v2", auth_token="any", project_id=project)


@pytest.fixture
def v2(server: LiveServer, project: str) -> Callable[..., httpx.Response]:
    def call(method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {"X-Project-Id": project, **kw.pop("headers", {})}
        return httpx.request(method, f"{server.url}/v2{path}", headers=headers, timeout=30, **kw)

    return call


@pytest.fixture
def tree(mistral: Mistral) -> dict[str, Any]:
    """An ended parent execution whose sub-workflow failed, and its rows."""
    mistral.workflows.create(TREE)
    parent = mistral.executions.create("parent")
    assert _ended(mistral, parent.id).state == "ERROR"
    tasks = {t.name: t for t in mistral.tasks.list(parent.id)}
    [leaf] = mistral.executions.list(task=tasks["sub"].id)
    return {"parent": parent.id, "leaf": leaf.id, "fine": tasks["fine"].id, "sub": tasks["sub"].id}


def test_report_walks_the_tree_as_mistral_does(mistral: Mistral, tree: dict[str, Any]) -> None:
    full = mistral.executions.get_report(tree["parent"], errors_only=False)
    assert full["statistics"] == {
        "total_tasks_count": 3, "success_tasks_count": 1, "error_tasks_count": 2,
        "running_tasks_count": 0, "idle_tasks_count": 0, "paused_tasks_count": 0,
    }  # fmt: skip
    root = full["root_workflow_execution"]
    assert (root["id"], root["name"], root["state"]) == (tree["parent"], "parent", "ERROR")
    by_name = {t["name"]: t for t in root["task_executions"]}
    assert set(by_name) == {"fine", "sub"}
    assert [a["name"] for a in by_name["fine"]["action_executions"]] == ["std.noop"]
    [leaf] = by_name["sub"]["workflow_executions"]
    assert leaf["id"] == tree["leaf"] and leaf["state"] == "ERROR"
    [boom] = leaf["task_executions"]
    assert boom["state"] == "ERROR" and boom["action_executions"][0]["accepted"] is True

    errors = mistral.executions.get_report(tree["parent"])  # the client's default: errors only
    assert errors["statistics"]["total_tasks_count"] == 2
    assert [t["name"] for t in errors["root_workflow_execution"]["task_executions"]] == ["sub"]

    shallow = mistral.executions.get_report(tree["parent"], errors_only=False, max_depth=0)
    [sub] = [t for t in shallow["root_workflow_execution"]["task_executions"] if t["name"] == "sub"]
    assert "task_executions" not in sub["workflow_executions"][0]
    assert shallow["statistics"]["total_tasks_count"] == 2

    stats = mistral.executions.get_report(tree["parent"], statistics_only=True)
    assert set(stats) == {"statistics"}


def test_sub_executions_of_an_execution_and_of_a_task(
    mistral: Mistral, tree: dict[str, Any], v2: Callable[..., httpx.Response]
) -> None:
    below = mistral.executions.get_ex_sub_executions(tree["parent"])
    assert [e.id for e in below] == [tree["parent"], tree["leaf"]]
    assert not hasattr(below[0], "output") or below[0].output is None
    assert [
        e.id for e in mistral.executions.get_ex_sub_executions(tree["parent"], max_depth=0)
    ] == [tree["parent"]]
    assert [e.id for e in mistral.tasks.get_task_sub_executions(tree["sub"])] == [tree["leaf"]]
    assert mistral.tasks.get_task_sub_executions(tree["fine"]) == []
    assert mistral.tasks.get_task_sub_executions(tree["fine"], errors_only=True) == []
    with_output = v2("GET", f"/executions/{tree['parent']}/executions?include_output=true")
    assert all("output" in e for e in with_output.json()["executions"])
    _fault(v2("GET", f"/executions/{tree['parent']}/executions?max_depth=deep"), 400)
    _fault(v2("GET", "/tasks/no-such/executions"), 404)
    _fault(v2("GET", "/executions/no-such/report"), 404)


def test_actions_run_outside_workflows(mistral: Mistral, v2: Callable[..., httpx.Response]) -> None:
    inline = mistral.action_executions.create("std.echo", {"output": "hi"})
    assert inline.id is None and inline.state == "SUCCESS"
    assert json.loads(inline.output) == {"result": "hi"}

    kept = mistral.action_executions.create(
        "std.echo", {"output": "kept"}, run_sync=True, save_result=True
    )
    assert kept.state == "SUCCESS" and kept.task_execution_id is None
    assert json.loads(mistral.action_executions.get(kept.id).output) == {"result": "kept"}

    later = mistral.action_executions.create("std.echo", {"output": "bg", "delay": 0.3},
                                             save_result=True)  # fmt: skip
    assert later.state == "RUNNING"
    done = wait_for(
        lambda: (a := mistral.action_executions.get(later.id)).state == "SUCCESS" and a,
        "background action",
    )
    assert json.loads(done.output) == {"result": "bg"}

    waiting = mistral.action_executions.create("std.async_noop")
    assert waiting.state == "RUNNING" and waiting.id
    completed = mistral.action_executions.update(waiting.id, "SUCCESS", json.dumps({"x": 1}))
    assert completed.state == "SUCCESS" and json.loads(completed.output) == {"result": {"x": 1}}

    failed = mistral.action_executions.create("std.fail", run_sync=True)
    assert failed.state == "ERROR"
    with pytest.raises(APIException) as refused:
        mistral.action_executions.create("std.async_noop", run_sync=True)
    assert refused.value.error_code == 400
    assert "Action does not support synchronous execution." in refused.value.error_message
    slow = mistral.action_executions.create("std.sleep", {"seconds": 5}, run_sync=True,
                                            timeout=0.2)  # fmt: skip
    assert slow.state == "ERROR" and "Timeout" in json.loads(slow.output)["result"]
    assert "action name" in _fault(v2("POST", "/action_executions", json={}), 400)
    assert "std.nope" in _fault(v2("POST", "/action_executions", json={"name": "std.nope"}), 400)
    _fault(v2("POST", "/action_executions", json={"name": "std.echo", "input": "[1]"}), 400)
    bad_timeout = {"name": "std.noop", "params": {"timeout": -1}}
    assert "timeout" in _fault(v2("POST", "/action_executions", json=bad_timeout), 400)

    # Mistral's default: deletion is off ([api] allow_action_execution_deletion).
    gone = v2("DELETE", f"/action_executions/{kept.id}")
    assert _fault(gone, 403) == "Action execution deletion is not allowed."
    _fault(v2("DELETE", "/action_executions/no-such"), 404)


def test_filters_with_operators_and_mixed_directions(
    mistral: Mistral, tree: dict[str, Any], v2: Callable[..., httpx.Response]
) -> None:
    names = {e.id: e.workflow_name for e in mistral.executions.list()}
    assert set(names) == {tree["parent"], tree["leaf"]}
    assert [e.id for e in mistral.executions.list(workflow_name="neq:leaf")] == [tree["parent"]]
    assert [e.id for e in mistral.executions.list(workflow_name="has:ea")] == [tree["leaf"]]
    assert mistral.executions.list(state="nin:ERROR") == []
    assert len(mistral.executions.list(created_at="gte:2000-01-01 00:00:00")) == 2
    assert mistral.executions.list(created_at="lt:2000-01-01 00:00:00") == []
    tasks = mistral.tasks.list(state="neq:SUCCESS")
    assert {t.name for t in tasks} == {"sub", "boom"}
    _fault(v2("GET", "/executions?created_at=gt:someday"), 400)
    _fault(v2("GET", "/tasks?processed=gt:true"), 400)

    mixed = mistral.tasks.list(sort_keys="state,name", sort_dirs="desc,asc")
    assert [(t.state, t.name) for t in mixed] == [
        ("SUCCESS", "fine"), ("ERROR", "boom"), ("ERROR", "sub")
    ]  # fmt: skip
    first = v2("GET", "/tasks?sort_keys=state,name&sort_dirs=desc,asc&limit=2").json()
    assert [t["name"] for t in first["tasks"]] == ["fine", "boom"]
    rest = httpx.get(first["next"], headers={"X-Project-Id": mistral.tasks.http_client.project_id})
    assert [t["name"] for t in rest.json()["tasks"]] == ["sub"]
