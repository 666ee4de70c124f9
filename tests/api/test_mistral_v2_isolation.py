"""Proofs over every ``/v2`` route, read from the server's own OpenAPI
document (as ``test_security.py`` does for ``/v1``):

* one project's rows are not found (404, Mistral's fault body) for
  another project at every route with a path parameter, and its listings
  never show them; a ``/v2`` route added later and missing from
  :data:`ROUTES` fails the test until it is covered. The project is the
  ``X-Project-Id`` header (the server runs ``--no-auth``);
* a secret action parameter (``std.http``'s ``auth``) never appears in an
  action execution, task, report or sub-execution body, nor in the
  server's log. What the caller gave (an execution's ``input``) is shown
  as given, as Mistral shows it: the workflow language has no hidden
  inputs (docs/workflows.md, "Secrets").
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx
import pytest

from .conftest import LiveServer, wait_for

WORKFLOW = """\
version: '2.0'
owned:
  tasks:
    one:
      action: std.noop
"""
BOOK = """\
version: '2.0'
name: book
workflows:
  inner:
    tasks:
      t:
        action: std.noop
"""
ADHOC = "version: '2.0'\nmine:\n  base: std.echo\n  base-input:\n    output: hi\n"

#: Every /v2 route with a path parameter, and the body that gets a request
#: past its validation (so the row's lookup answers): None for none.
ROUTES: dict[tuple[str, str], Any] = {
    ("GET", "/v2/workflows/{identifier}"): None,
    ("PUT", "/v2/workflows/{identifier}"): WORKFLOW,
    ("DELETE", "/v2/workflows/{identifier}"): None,
    ("GET", "/v2/workbooks/{name}"): None,
    ("DELETE", "/v2/workbooks/{name}"): None,
    ("PUT", "/v2/actions/{identifier}"): ADHOC,
    ("GET", "/v2/actions/{identifier}"): None,
    ("GET", "/v2/actions/{identifier}/"): None,
    ("GET", "/v2/actions/{identifier}/{namespace}"): None,
    ("DELETE", "/v2/actions/{identifier}"): None,
    ("DELETE", "/v2/actions/{identifier}/"): None,
    ("DELETE", "/v2/actions/{identifier}/{namespace}"): None,
    ("GET", "/v2/executions/{execution_id}"): None,
    ("PUT", "/v2/executions/{execution_id}"): {"state": "PAUSED"},
    ("DELETE", "/v2/executions/{execution_id}"): None,
    ("GET", "/v2/executions/{execution_id}/tasks"): None,
    ("GET", "/v2/executions/{execution_id}/report"): None,
    ("GET", "/v2/executions/{execution_id}/executions"): None,
    ("GET", "/v2/tasks/{task_id}"): None,
    ("PUT", "/v2/tasks/{task_id}"): {"state": "SKIPPED"},
    ("GET", "/v2/tasks/{task_id}/executions"): None,
    ("GET", "/v2/tasks/{task_id}/action_executions"): None,
    ("GET", "/v2/action_executions/{action_execution_id}"): None,
    ("PUT", "/v2/action_executions/{action_execution_id}"): {"state": "SUCCESS", "output": "1"},
    ("DELETE", "/v2/action_executions/{action_execution_id}"): None,
    ("GET", "/v2/cron_triggers/{identifier}"): None,
    ("DELETE", "/v2/cron_triggers/{identifier}"): None,
    ("GET", "/v2/environments/{name}"): None,
    ("DELETE", "/v2/environments/{name}"): None,
}
#: Routes kept out of the OpenAPI document (aliases of listed ones),
#: checked all the same.
ALIASES = {
    ("GET", "/v2/actions/{identifier}/"),
    ("DELETE", "/v2/actions/{identifier}/"),
    ("DELETE", "/v2/actions/{identifier}/{namespace}"),
}
#: Listings of the rows (the project's own only).
LISTS = ("workflows", "workbooks", "actions", "executions", "tasks", "action_executions",
         "cron_triggers", "environments")  # fmt: skip


def _call(server: LiveServer, project: str, method: str, path: str, body: Any = None) -> Any:
    headers = {"X-Project-Id": project}
    kw: dict[str, Any] = {}
    if isinstance(body, str):
        kw["content"], headers["content-type"] = body, "text/plain"
    elif body is not None:
        kw["json"] = body
    return httpx.request(method, f"{server.url}{path}", headers=headers, timeout=30, **kw)


def _made(response: httpx.Response) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()


@pytest.fixture
def owner(server: LiveServer) -> tuple[str, dict[str, str]]:
    """Project A with one row of every kind; the values of each path parameter."""
    a = f"p-a-{uuid.uuid4().hex[:8]}"
    [wf] = _made(_call(server, a, "POST", "/v2/workflows", WORKFLOW))["workflows"]
    _made(_call(server, a, "POST", "/v2/workbooks", BOOK))
    _made(_call(server, a, "POST", "/v2/actions", ADHOC))
    execution = _made(_call(server, a, "POST", "/v2/executions", {"workflow_name": "owned"}))

    def ended() -> Any:
        found = _made(_call(server, a, "GET", f"/v2/executions/{execution['id']}"))
        return found["state"] == "SUCCESS"

    wait_for(ended, "owned execution")
    [task] = _made(_call(server, a, "GET", f"/v2/executions/{execution['id']}/tasks"))["tasks"]
    action = _made(_call(server, a, "POST", "/v2/action_executions", {"name": "std.async_noop"}))
    trigger = {"name": "nightly", "workflow_name": "owned", "pattern": "0 3 * * *"}
    _made(_call(server, a, "POST", "/v2/cron_triggers", trigger))
    _made(_call(server, a, "POST", "/v2/environments", {"name": "env", "variables": {"k": 1}}))
    values = {
        "/v2/workflows/": wf["id"], "/v2/workbooks/": "book", "/v2/actions/": "mine",
        "/v2/executions/": execution["id"], "/v2/tasks/": task["id"],
        "/v2/action_executions/": action["id"], "/v2/cron_triggers/": "nightly",
        "/v2/environments/": "env",
    }  # fmt: skip
    return a, values


def _fill(path: str, values: dict[str, str]) -> str:
    prefix = next(p for p in values if path.startswith(p))
    filled = re.sub(r"^(/v2/\w+/)\{\w+\}", lambda m: m.group(1) + values[prefix], path)
    return filled.replace("{namespace}", "")


def test_every_v2_route_hides_another_projects_rows(
    server: LiveServer, owner: tuple[str, dict[str, str]]
) -> None:
    schema = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    served = {
        (method.upper(), path)
        for path, ops in schema["paths"].items()
        if path.startswith("/v2/") and "{" in path and not path.startswith("/v2/{")
        for method in ops
    }
    wanted = set(ROUTES) - ALIASES
    assert served == wanted, f"cover these /v2 routes: {served ^ wanted}"
    a, values = owner
    b = f"p-b-{uuid.uuid4().hex[:8]}"
    for (method, path), body in sorted(ROUTES.items()):
        url = _fill(path, values)
        answer = _call(server, b, method, url, body)
        assert answer.status_code == 404, (method, url, answer.text)
        fault = answer.json()
        assert fault["faultcode"] == "Client" and fault["faultstring"], (method, url, fault)
        assert values[next(p for p in values if path.startswith(p))] in fault["faultstring"]
    for collection in LISTS:
        listed = _made(_call(server, b, "GET", f"/v2/{collection}"))[collection]
        own = [row for row in listed if row.get("project_id") == a]
        assert own == [], (collection, own)
    # Still there for A: B's calls changed nothing.
    for prefix, value in values.items():
        if prefix in ("/v2/workflows/", "/v2/executions/", "/v2/action_executions/"):
            assert _call(server, a, "GET", prefix + value).status_code == 200


SECRETIVE = """\
version: '2.0'
secretive:
  input: [url, auth]
  tasks:
    call:
      action: std.http url=<% $.url %> auth=<% $.auth %>
"""


def test_secret_action_parameters_never_shown_or_logged(server: LiveServer) -> None:
    project = f"p-s-{uuid.uuid4().hex[:8]}"
    first, second = (f"user:hidden-{uuid.uuid4().hex}" for _ in range(2))
    url = f"{server.url}/v2"
    _made(_call(server, project, "POST", "/v2/workflows", SECRETIVE))
    started = _made(
        _call(server, project, "POST", "/v2/executions",
              {"workflow_name": "secretive", "input": {"url": url, "auth": first}})
    )  # fmt: skip
    eid = started["id"]

    def ended() -> Any:
        found = _made(_call(server, project, "GET", f"/v2/executions/{eid}"))
        return found if found["state"] in ("SUCCESS", "ERROR") else None

    assert wait_for(ended, "secretive execution")["state"] == "SUCCESS"
    adhoc = {"name": "std.http", "input": {"url": url, "auth": second},
             "params": {"run_sync": True, "save_result": True}}  # fmt: skip
    ran = _made(_call(server, project, "POST", "/v2/action_executions", adhoc))
    assert json.loads(ran["input"])["auth"] == "******"  # there, masked
    [task] = _made(_call(server, project, "GET", f"/v2/executions/{eid}/tasks"))["tasks"]
    reads = [
        f"/v2/tasks/{task['id']}", "/v2/tasks", f"/v2/tasks/{task['id']}/action_executions",
        "/v2/action_executions", f"/v2/action_executions/{ran['id']}",
        f"/v2/executions/{eid}/report?errors_only=false", f"/v2/tasks/{task['id']}/executions",
        "/v2/action_executions?include_output=true",
    ]  # fmt: skip
    bodies = [ran] + [_made(_call(server, project, "GET", r)) for r in reads]
    text = json.dumps(bodies)
    assert "******" in text
    logs = server.logs()
    assert eid in logs or "/v2/executions" in logs  # the log is really captured
    for value in (first, second):
        assert value not in text
        assert value not in logs
    # What the caller gave is its input, shown as given (Mistral's too).
    shown = _made(_call(server, project, "GET", f"/v2/executions/{eid}"))
    assert json.loads(shown["input"])["auth"] == first
