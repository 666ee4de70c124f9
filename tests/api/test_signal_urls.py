"""Signals from the outside world, against a live token-authenticated
``convection server``: a WaitConditionHandle's ``curl_cli`` run by a real
``curl``, an AWS handle's pre-signed URL PUT as ``cfn-signal`` does, a
ScalingPolicy's ``alarm_url``; the narrowed token's confinement; and
signals that arrive while the stack is paused at a hook or the server is
killed. The engine's side is ``test_signal_urls_engine.py``."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from convection.store.sql import SQLStore
from convection.tokens._tokens import Tokens

from .conftest import LiveServer, free_port, settled, start_server, wait_for

WAIT_TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {
            "type": "OS::Heat::WaitCondition",
            "properties": {"handle": {"get_resource": "handle"}, "timeout": 120, "count": 1},
        },
    },
    "outputs": {"data": {"value": {"get_attr": ["wait", "data"]}}},
}


class Project:
    """A project's member client on a live server, and its stack helpers."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def create(self, template: dict[str, Any] | str, **extra: Any) -> str:
        body = {"stack_name": f"s{uuid.uuid4().hex[:8]}", "template": template, **extra}
        answer = self.http.post("/stacks", json=body)
        assert answer.status_code == 201, answer.text
        return f"{body['stack_name']}/{answer.json()['stack']['id']}"

    def resource(self, stack: str, name: str) -> dict[str, Any]:
        answer = self.http.get(f"/stacks/{stack}/resources/{name}")
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()["resource"]
        return found

    def attribute_when_complete(self, stack: str, name: str, attribute: str) -> Any:
        def done() -> Any:
            res = self.resource(stack, name)
            return res["resource_status"] == "CREATE_COMPLETE" and res["attributes"][attribute]

        return wait_for(done, f"{name} CREATE_COMPLETE")

    def settle(self, stack: str) -> dict[str, Any]:
        return settled(self.http, f"/stacks/{stack}")

    def output(self, stack: str, key: str) -> Any:
        return self.http.get(f"/stacks/{stack}/outputs/{key}").json()["output"]["output_value"]


@pytest.fixture
def member(auth_server: Any) -> Iterator[Project]:
    project = f"p-{uuid.uuid4().hex[:10]}"
    with auth_server.client(project, auth_server.mint(project)) as http:
        yield Project(http)


def run_curl(curl_cli: str, body: dict[str, Any]) -> str:
    """The attribute as a script runs it: curl_cli plus ``--data-binary``
    (a real ``curl`` when the machine has one, else httpx with the same
    method, headers and URL)."""
    argv = [*shlex.split(curl_cli), "--data-binary", json.dumps(body)]
    if shutil.which("curl") is not None:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        return done.stdout
    headers = dict(argv[i + 1].split(": ", 1) for i, arg in enumerate(argv) if arg == "-H")
    answer = httpx.post(argv[-3], headers=headers, content=argv[-1], timeout=60)
    return f"HTTP/1.1 {answer.status_code}\n{answer.text}"


def test_curl_cli_completes_the_wait_condition(auth_server: Any, member: Project) -> None:
    stack = member.create(WAIT_TEMPLATE)
    curl_cli = member.attribute_when_complete(stack, "handle", "curl_cli")
    handle = member.resource(stack, "handle")["attributes"]
    token, endpoint = handle["token"], handle["endpoint"]
    assert (
        endpoint
        == f"{str(member.http.base_url).rstrip('/')}/stacks/{stack}/resources/handle/signal"
    )
    assert curl_cli.startswith(f"curl -i -X POST -H 'X-Auth-Token: {token}' ")
    reply = run_curl(curl_cli, {"status": "SUCCESS", "reason": "ok", "data": "x", "id": "1"})
    assert reply.splitlines()[0].split()[1] == "200", reply
    assert member.settle(stack)["stack_status"] == "CREATE_COMPLETE"
    assert json.loads(member.output(stack, "data")) == {"1": "x"}
    # The handle's token signals the handle and does nothing else.
    with httpx.Client(
        base_url=member.http.base_url, headers={"X-Auth-Token": token}, timeout=30
    ) as narrowed:
        assert narrowed.get(f"/stacks/{stack}").status_code == 403
        assert narrowed.get("/stacks").status_code == 403
        assert narrowed.get(f"/stacks/{stack}/resources/handle").status_code == 403
        assert narrowed.post(f"/stacks/{stack}/resources/wait/signal", json={}).status_code == 403
    # Shown as an attribute on purpose; never in an event or a log line.
    events = member.http.get(f"/stacks/{stack}/events").text
    assert token.startswith("cvt_") and token not in events
    assert token not in auth_server.live.logs()


AWS_TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "handle": {"type": "AWS::CloudFormation::WaitConditionHandle"},
        "other": {"type": "AWS::CloudFormation::WaitConditionHandle"},
        # The handles' reference ids (their URLs), readable as attributes.
        "url": {"type": "OS::Heat::Value", "properties": {"value": {"get_resource": "handle"}}},
        "other_url": {
            "type": "OS::Heat::Value",
            "properties": {"value": {"get_resource": "other"}},
        },
        "wait": {
            "type": "AWS::CloudFormation::WaitCondition",
            "properties": {"Handle": {"get_resource": "handle"}, "Timeout": 120},
        },
    },
    "outputs": {"data": {"value": {"get_attr": ["wait", "Data"]}}},
}


def test_aws_handle_url_takes_cfn_signals(auth_server: Any, member: Project) -> None:
    stack = member.create(AWS_TEMPLATE)
    url = member.attribute_when_complete(stack, "url", "value")
    other = member.attribute_when_complete(stack, "other_url", "value")
    assert url.startswith(f"{auth_server.live.url}/v1/waitcondition/")
    body = {"Status": "SUCCESS", "Reason": "booted", "UniqueId": "i-1", "Data": "up"}
    # Another handle's token, aimed at this handle: refused; a bad one: 401.
    stolen = url.partition("?")[0] + "?" + other.partition("?")[2]
    assert httpx.put(stolen, json=body, timeout=30).status_code == 403
    bogus = url.partition("?")[0] + "?token=cvt_nope"
    assert httpx.put(bogus, json=body, timeout=30).status_code == 401
    # A malformed CFN body is refused with Heat's message, and not stored.
    bad = httpx.put(url, json={"Status": "MAYBE"}, timeout=30)
    assert bad.status_code == 400 and "Metadata format invalid" in bad.text
    # What cfn-signal does: PUT the CFN body to the handle's URL, no header.
    answer = httpx.put(url, json=body, timeout=30)
    assert answer.status_code == 200, answer.text
    assert member.settle(stack)["stack_status"] == "CREATE_COMPLETE"
    assert json.loads(member.output(stack, "data")) == {"i-1": "up"}
    assert url.partition("token=")[2] not in auth_server.live.logs()


SCALING_TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "group": {
            "type": "OS::Heat::AutoScalingGroup",
            "properties": {"min_size": 1, "max_size": 3, "resource": {"type": "OS::Heat::None"}},
        },
        "up": {
            "type": "OS::Heat::ScalingPolicy",
            "properties": {
                "auto_scaling_group_id": {"get_resource": "group"},
                "adjustment_type": "change_in_capacity",
                "scaling_adjustment": 1,
            },
        },
    },
}


def test_scaling_policy_alarm_url_scales_the_group(member: Project) -> None:
    stack = member.create(SCALING_TEMPLATE)
    assert member.settle(stack)["stack_status"] == "CREATE_COMPLETE"
    policy = member.resource(stack, "up")["attributes"]
    assert policy["signal_url"].endswith(f"/stacks/{stack}/resources/up/signal")
    alarm = {"current": "alarm", "previous": "ok", "reason": "cpu high"}
    answer = httpx.post(policy["alarm_url"], json=alarm, timeout=30)  # as an alarm does
    assert answer.status_code == 200, answer.text

    def members() -> int:
        rows = member.http.get(f"/stacks/{stack}/resources", params={"nested_depth": 1})
        found = rows.json()["resources"]
        inner = [r for r in found if r.get("parent_resource") == "group"]
        complete = all(r["resource_status"] == "CREATE_COMPLETE" for r in inner)
        return len(inner) if complete else 0

    wait_for(lambda: members() == 2, "the group grew to 2")


def test_signal_while_paused_at_a_hook_is_kept(member: Project) -> None:
    hooks = {"resource_registry": {"resources": {"wait": {"hooks": "pre-create"}}}}
    stack = member.create(WAIT_TEMPLATE, environment=hooks)
    curl_cli = member.attribute_when_complete(stack, "handle", "curl_cli")

    def paused() -> bool:
        events = member.http.get(f"/stacks/{stack}/resources/wait/events").json()["events"]
        reasons = [e["resource_status_reason"] for e in events]
        return "CREATE paused until Hook pre-create is cleared" in reasons

    wait_for(paused, "wait paused at its hook")
    reply = run_curl(curl_cli, {"data": "while paused"})
    assert reply.splitlines()[0].split()[1] == "200", reply
    assert member.resource(stack, "wait")["resource_status"] == "INIT_COMPLETE"
    clear = member.http.post(
        f"/stacks/{stack}/resources/wait/signal", json={"unset_hook": "pre-create"}
    )
    assert clear.status_code == 200, clear.text
    assert member.settle(stack)["stack_status"] == "CREATE_COMPLETE"
    assert json.loads(member.output(stack, "data")) == {"1": "while paused"}


# -- a server killed while a wait condition waits ---------------------------------


def serve(db: str, port: int, log: Path) -> LiveServer:
    """``convection server`` with token auth on a fixed port (a restart
    must keep the URLs the handle already handed out)."""
    # The killed server's traversal lease must lapse before the next takes
    # the stack up: keep it short so the test does not wait 30 s for it.
    lease = {"CONVECTION_ENGINE_LEASE_SECONDS": "4"}
    return start_server(db, log, auth=True, port=port, env=lease)


def test_signal_stored_before_a_kill_is_acted_on_after_restart(tmp_path: Path) -> None:
    db, port, log = f"sqlite:///{tmp_path / 'kill.db'}", free_port(), tmp_path / "server.log"
    template = json.loads(json.dumps(WAIT_TEMPLATE))
    template["resources"]["wait"]["properties"]["count"] = 2
    first = serve(db, port, log)
    store = SQLStore(db)
    second: LiveServer | None = None
    try:
        secret = Tokens(store).issue("demo").secret
        base = f"http://127.0.0.1:{port}/v1/demo"
        with httpx.Client(base_url=base, headers={"X-Auth-Token": secret}, timeout=30) as http:
            member = Project(http)
            stack = member.create(template)
            curl_cli = member.attribute_when_complete(stack, "handle", "curl_cli")
            run_curl(curl_cli, {"id": "1", "data": "before the kill"})
            first.process.send_signal(signal.SIGKILL)  # stored; the wait has not ended
            first.process.wait(30)
            second = serve(db, port, log)
            assert member.resource(stack, "wait")["resource_status"] == "CREATE_IN_PROGRESS"
            run_curl(curl_cli, {"id": "2", "data": "after"})  # the same URL and token
            assert member.settle(stack)["stack_status"] == "CREATE_COMPLETE"
            data = json.loads(member.output(stack, "data"))
            assert data == {"1": "before the kill", "2": "after"}
    finally:
        for live in (first, second):
            if live is not None:
                live.stop()
        store.close()


EXAMPLE = Path(__file__).parents[2] / "examples" / "wait-condition"


def test_the_examples_signal_script_runs_curl_cli(member: Project) -> None:
    template = (EXAMPLE / "template.yaml").read_text(encoding="utf-8")
    stack = member.create(template, parameters={"count": 1})
    curl_cli = member.attribute_when_complete(stack, "handle", "curl_cli")
    boot = member.attribute_when_complete(stack, "boot_script", "value")
    assert f'SIGNAL_COMMAND="{curl_cli}"' in boot  # pasteable into a shell as it is
    env = {**os.environ, "SIGNAL_COMMAND": curl_cli}
    script = [str(EXAMPLE / "signal.sh"), "SUCCESS", "web-1 is up", "10.0.0.11", "web-1"]
    done = subprocess.run(script, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and " 200" in done.stdout.splitlines()[0], done
    assert member.settle(stack)["stack_status"] == "CREATE_COMPLETE"
    assert json.loads(member.output(stack, "reports")) == {"web-1": "10.0.0.11"}


MISTRAL_TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "greeter": {
            "type": "OS::Mistral::Workflow",
            "properties": {
                "type": "direct",
                "input": {"who": "world"},
                "output": {"said": "<% $.said %>"},
                "tasks": [
                    {
                        "name": "say",
                        "action": 'std.echo output=<% "hello " + $.who %>',
                        "publish": {"said": "<% task().result %>"},
                    }
                ],
            },
        }
    },
    "outputs": {"workflow": {"value": {"get_resource": "greeter"}}},
}


def test_workflow_alarm_url_starts_an_execution(auth_server: Any, member: Project) -> None:
    """OS::Mistral::Workflow's ``alarm_url``, posted to as an alarm does,
    starts an execution of the stack's project, seen on ``/v2``."""
    stack = member.create(MISTRAL_TEMPLATE)
    assert member.settle(stack)["stack_status"] == "CREATE_COMPLETE"
    url = member.resource(stack, "greeter")["attributes"]["alarm_url"]
    answer = httpx.post(url, json={"input": {"who": "alarm"}}, timeout=30)
    assert answer.status_code == 200, answer.text
    executions = member.resource(stack, "greeter")["attributes"]["executions"]
    assert len(executions) == 1
    v2 = f"{auth_server.live.url}/v2/executions/{executions[0]['id']}"
    headers = {"X-Auth-Token": member.http.headers["X-Auth-Token"]}

    def done() -> Any:
        found = httpx.get(v2, headers=headers, timeout=30).json()
        return found if found["state"] == "SUCCESS" else None

    shown = wait_for(done, "the execution's SUCCESS")
    assert json.loads(shown["output"]) == {"said": "hello alarm"}
    assert shown["workflow_name"] == member.output(stack, "workflow")
    refused = httpx.post(url, json={"input": {"whom": "x"}}, timeout=30)
    assert refused.status_code == 400 and "Unknown input whom" in refused.text
