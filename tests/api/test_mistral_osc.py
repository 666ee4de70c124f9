"""``openstack workflow ...`` (python-openstackclient with python-mistralclient's
plugin), unchanged, as a subprocess against a live server with token auth.

As for ``openstack stack`` (``test_openstackclient.py``) there is no
Keystone: keystoneauth's ``admin_token`` auth type sends the token as it is
and ``--os-endpoint`` replaces the catalog lookup, so the endpoint is the
server's ``/v2``; the project is the token's (mistralclient sends no
``X-Project-Id``). Slow by nature: every ``openstack`` run starts a large
client, so each test runs a whole story with as few runs as it can.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import AuthServer
from .test_openstackclient import Osc

WORKFLOWS = """\
---
version: '2.0'

greet:
  description: Greet someone.
  input:
    - who
  output:
    greeting: <% $.greeting %>
  tasks:
    hello:
      action: std.echo output="Hello, <% $.who %>"
      publish:
        greeting: <% task().result %>

needs_env:
  output:
    said: <% $.said %>
  tasks:
    say:
      action: std.echo output="<% env().greeting %>"
      publish:
        said: <% task().result %>

slow:
  tasks:
    nap:
      action: std.sleep seconds=60
"""

SETTLE_SECONDS = 60


@pytest.fixture
def osc(auth_server: AuthServer, tmp_path: Path, project: str) -> Osc:
    return Osc(auth_server.live.url + "/v2", auth_server.mint(project), tmp_path)


@pytest.fixture
def workflows(tmp_path: Path) -> Path:
    path = tmp_path / "workflows.yaml"
    path.write_text(WORKFLOWS, encoding="utf-8")
    return path


def settled(osc: Osc, execution_id: str, until: Callable[[str], bool]) -> dict[str, Any]:
    """``execution show`` once its state passes ``until``."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        shown: dict[str, Any] = osc.json("workflow", "execution", "show", execution_id)
        if until(shown["State"]):
            return shown
        assert time.monotonic() < deadline, f"execution {execution_id}: still {shown['State']}"
        time.sleep(0.3)


def _ended(state: str) -> bool:
    return state not in ("RUNNING", "IDLE")


def test_workflow_create_list_show_definition_delete(
    osc: Osc, workflows: Path, project: str
) -> None:
    created = osc.json("workflow", "create", str(workflows))
    assert sorted(w["Name"] for w in created) == ["greet", "needs_env", "slow"]
    assert {w["Project ID"] for w in created} == {project}
    listed = osc.json("workflow", "list")
    assert sorted(w["Name"] for w in listed) == ["greet", "needs_env", "slow"]
    shown = osc.json("workflow", "show", "greet")
    assert shown["Name"] == "greet" and shown["Input"] == "who" and shown["Scope"] == "private"
    text = osc.run("workflow", "definition", "show", "greet").stdout
    assert "greet:" in text and 'std.echo output="Hello, <% $.who %>"' in text
    deleted = osc.run("workflow", "delete", "slow", "needs_env")
    assert deleted.returncode == 0
    assert [w["Name"] for w in osc.json("workflow", "list")] == ["greet"]
    missing = osc.run("workflow", "show", "slow", check=False)
    assert missing.returncode != 0
    assert "Workflow not found [workflow_identifier=slow" in missing.stderr


def test_execution_tasks_and_action_executions(osc: Osc, workflows: Path) -> None:
    osc.json("workflow", "create", str(workflows))
    started = osc.json("workflow", "execution", "create", "greet", '{"who": "Ann"}')
    assert started["Workflow name"] == "greet" and started["State"] == "RUNNING"
    execution_id = started["ID"]
    done = settled(osc, execution_id, _ended)
    assert done["State"] == "SUCCESS" and done["Workflow name"] == "greet"
    listed = osc.json("workflow", "execution", "list")
    assert [(e["ID"], e["State"]) for e in listed] == [(execution_id, "SUCCESS")]
    output = osc.run("workflow", "execution", "output", "show", execution_id).stdout
    assert json.loads(output) == {"greeting": "Hello, Ann"}
    given = osc.run("workflow", "execution", "input", "show", execution_id).stdout
    assert json.loads(given) == {"who": "Ann"}

    [task] = osc.json("task", "execution", "list", execution_id)
    assert (task["Name"], task["State"]) == ("hello", "SUCCESS")
    assert task["Workflow Execution ID"] == execution_id
    shown = osc.json("task", "execution", "show", task["ID"])
    assert shown["Name"] == "hello" and shown["Workflow name"] == "greet"
    result = osc.run("task", "execution", "result", "show", task["ID"]).stdout
    assert json.loads(result) == "Hello, Ann"

    [action] = osc.json("action", "execution", "list", task["ID"])
    assert action["Name"] == "std.echo" and action["State"] == "SUCCESS"
    assert action["Task ID"] == task["ID"] and action["Task name"] == "hello"
    one = osc.json("action", "execution", "show", action["ID"])
    assert one["Name"] == "std.echo" and one["Workflow name"] == "greet"
    assert one["Accepted"] is True

    osc.run("workflow", "execution", "delete", execution_id)
    # mistralclient shows an empty list as one row of empty cells
    assert [e["ID"] for e in osc.json("workflow", "execution", "list") if e["ID"]] == []


def test_execution_pause_resume_and_delete(osc: Osc, workflows: Path) -> None:
    osc.json("workflow", "create", str(workflows))
    execution_id = osc.json("workflow", "execution", "create", "slow")["ID"]
    paused = osc.json("workflow", "execution", "update", "-s", "PAUSED", execution_id)
    assert paused["ID"] == execution_id and paused["State"] == "PAUSED"
    assert settled(osc, execution_id, lambda s: s == "PAUSED")["State"] == "PAUSED"
    resumed = osc.json("workflow", "execution", "update", "-s", "RUNNING", execution_id)
    assert resumed["State"] == "RUNNING"
    refused = osc.run("workflow", "execution", "delete", execution_id, check=False)
    assert refused.returncode != 0  # mistralclient prints each failure on stdout
    assert "Only completed executions can be deleted" in refused.stdout
    osc.run("workflow", "execution", "delete", "--force", execution_id)
    gone = osc.run("workflow", "execution", "show", execution_id, check=False)
    assert gone.returncode != 0 and "could not be found" in gone.stderr


def test_task_rerun_with_an_environment(osc: Osc, workflows: Path) -> None:
    osc.json("workflow", "create", str(workflows))
    execution_id = osc.json("workflow", "execution", "create", "needs_env")["ID"]
    failed = settled(osc, execution_id, _ended)
    assert failed["State"] == "ERROR" and "greeting" in failed["State info"]
    [task] = osc.json("task", "execution", "list", execution_id)
    assert task["State"] == "ERROR"
    rerun = osc.json("task", "execution", "rerun", task["ID"], "--env", '{"greeting": "hi"}')
    assert rerun["ID"] == task["ID"] and rerun["State"] == "RUNNING"
    done = settled(osc, execution_id, _ended)
    assert done["State"] == "SUCCESS"
    output = osc.run("workflow", "execution", "output", "show", execution_id).stdout
    assert json.loads(output) == {"said": "hi"}
    result = osc.run("task", "execution", "result", "show", task["ID"]).stdout
    assert json.loads(result) == "hi"


def test_a_bad_token_fails_cleanly(auth_server: AuthServer, tmp_path: Path) -> None:
    osc = Osc(auth_server.live.url + "/v2", "cvt_wrong", tmp_path)
    done = osc.run("workflow", "list", check=False)
    assert done.returncode != 0
    assert "Authentication required" in done.stderr and "Traceback" not in done.stderr
