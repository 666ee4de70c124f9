"""The pull agent against a live, token-authenticated server.

A stack with an OS::Heat::DeployedServer, a script SoftwareConfig and a
SoftwareDeployment waits (holding no worker) until ``convection agent``,
a separate process started with what the server's ``os_collect_config``
says, runs the script and reports; restarting the agent never runs it
again. The agent's token reaches its own server's deployments only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import settled, wait_for

TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  server:
    type: OS::Heat::DeployedServer
    properties: {software_config_transport: POLL_SERVER_HEAT}
  config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      inputs: [{name: who}]
      outputs: [{name: result}]
      config: |
        #!/bin/sh
        echo "ran $who" >> COUNT
        echo "hello $who"
        printf done > "$heat_outputs_path.result"
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      input_values: {who: world}
  group:
    type: OS::Heat::SoftwareDeploymentGroup
    properties:
      config: {get_resource: config}
      servers: {one: {get_resource: server}}
      input_values: {who: group}
outputs:
  stdout: {value: {get_attr: [deployment, deploy_stdout]}}
  result: {value: {get_attr: [deployment, result]}}
  group: {value: {get_attr: [group, deploy_stdouts]}}
"""


def _agent(occ: dict[str, Any], state: Path, *extra: str) -> subprocess.Popen[bytes]:
    agent = occ["convection"]
    argv = [str(Path(sys.executable).parent / "convection"), "agent"]
    argv += ["--url", agent["url"], "--server-id", agent["server_id"]]
    argv += ["--state-dir", str(state), "--interval", "0.3", *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
    env["CONVECTION_AGENT_TOKEN"] = agent["token"]
    log = (state.parent / "agent.log").open("ab")
    return subprocess.Popen(argv, stdout=log, stderr=log, env=env)


@pytest.fixture
def deployed(
    auth_server: Any, project: str, tmp_path: Path
) -> Iterator[tuple[httpx.Client, str, dict[str, Any]]]:
    """A created stack waiting for its agent, and the server's os_collect_config."""
    template = TEMPLATE.replace("COUNT", str(tmp_path / "count.txt"))
    with auth_server.client(project, auth_server.mint(project)) as http:
        made = http.post("/stacks", json={"stack_name": "pull", "template": template})
        assert made.status_code == 201, made.text
        stack_id = made.json()["stack"]["id"]

        def server() -> Any:
            found = http.get(f"/stacks/pull/{stack_id}/resources/server").json()["resource"]
            return found if found["resource_status"] == "CREATE_COMPLETE" else None

        occ = wait_for(server, "server CREATE_COMPLETE")["attributes"]["os_collect_config"]
        yield http, stack_id, occ


def _stack(http: httpx.Client, stack_id: str) -> dict[str, Any]:
    stack: dict[str, Any] = http.get(f"/stacks/pull/{stack_id}").json()["stack"]
    return stack


def test_the_agent_deploys_once_across_restarts(
    deployed: tuple[httpx.Client, str, dict[str, Any]], tmp_path: Path, auth_server: Any
) -> None:
    http, stack_id, occ = deployed
    assert occ["heat"]["password"] == occ["convection"]["token"]
    time.sleep(0.5)
    assert _stack(http, stack_id)["stack_status"] == "CREATE_IN_PROGRESS"  # waits for the agent
    state = tmp_path / "agent"
    agent = _agent(occ, state)
    try:
        settled(http, f"/stacks/pull/{stack_id}")
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait(10)
    stack = _stack(http, stack_id)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    outputs = {o["output_key"]: o["output_value"] for o in stack["outputs"]}
    assert outputs == {
        "stdout": "hello world\n",
        "result": "done",
        "group": {"one": "hello group\n"},
    }
    count = tmp_path / "count.txt"
    assert sorted(count.read_text().splitlines()) == ["ran group", "ran world"]
    # A restarted agent finds the deployment reported; one that lost its
    # reports replays the run's record: the script never runs again.
    for wipe in (False, True):
        if wipe:
            for f in (state / "reported").iterdir():
                f.unlink()
        again = _agent(occ, state, "--once")
        assert again.wait(60) == 0
        assert sorted(count.read_text().splitlines()) == ["ran group", "ran world"]
    token = occ["convection"]["token"]
    assert token not in (tmp_path / "agent.log").read_text()  # the agent never logs it
    assert token not in auth_server.live.logs()
    deployments = http.get("/software_deployments").json()["software_deployments"]
    assert [d["status"] for d in deployments] == ["COMPLETE", "COMPLETE"]
    stdouts = sorted(d["output_values"]["deploy_stdout"] for d in deployments)
    assert stdouts == ["hello group\n", "hello world\n"]
    # Deleting the stack deletes its configs and deployments (and the token).
    assert http.delete(f"/stacks/pull/{stack_id}").status_code == 204
    wait_for(lambda: _stack(http, stack_id)["stack_status"] == "DELETE_COMPLETE", "deleted")
    assert http.get("/software_deployments").json()["software_deployments"] == []
    assert http.get("/software_configs").json()["software_configs"] == []


def test_the_agent_token_reaches_only_its_server(
    deployed: tuple[httpx.Client, str, dict[str, Any]], auth_server: Any, project: str
) -> None:
    http, stack_id, occ = deployed
    agent = occ["convection"]
    with auth_server.client(project, agent["token"]) as as_agent:
        mine = as_agent.get(f"/software_deployments/metadata/{agent['server_id']}")
        assert mine.status_code == 200
        configs = mine.json()["metadata"]
        values = sorted({i["name"]: i["value"] for i in c["inputs"]}["who"] for c in configs)
        assert values == ["group", "world"]
        assert as_agent.get("/software_deployments/metadata/another").status_code == 403
        assert as_agent.get(f"/stacks/pull/{stack_id}").status_code == 403
        assert as_agent.get("/stacks").status_code == 403
        assert as_agent.get("/software_configs").status_code == 403
        assert as_agent.get("/software_deployments").status_code == 403
        assert as_agent.get("/software_deployments?server_id=another").status_code == 403
        listed = as_agent.get(f"/software_deployments?server_id={agent['server_id']}")
        deployment = listed.json()["software_deployments"][0]
        assert as_agent.delete(f"/software_deployments/{deployment['id']}").status_code == 403
    other = http.post(
        "/software_deployments",
        json={"config_id": deployment["config_id"], "server_id": "another"},
    ).json()["software_deployment"]
    with auth_server.client(project, agent["token"]) as as_agent:
        assert as_agent.get(f"/software_deployments/{other['id']}").status_code == 403
        put = as_agent.put(f"/software_deployments/{other['id']}", json={"status": "FAILED"})
        assert put.status_code == 403


TIMEOUT_TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  server: {type: OS::Heat::DeployedServer}
  config:
    type: OS::Heat::SoftwareConfig
    properties: {group: script, config: "#!/bin/sh\\n", options: {timeout: 1}}
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: config}, server: {get_resource: server}}
"""


def test_no_agent_report_fails_the_deployment_at_its_timeout(
    auth_server: Any, project: str
) -> None:
    with auth_server.client(project, auth_server.mint(project)) as http:
        made = http.post("/stacks", json={"stack_name": "late", "template": TIMEOUT_TEMPLATE})
        stack_id = made.json()["stack"]["id"]
        stack = settled(http, f"/stacks/late/{stack_id}", timeout=30)
        assert stack["stack_status"] == "CREATE_FAILED"
        assert "no result from server" in stack["stack_status_reason"]
        [row] = http.get("/software_deployments").json()["software_deployments"]
        assert row["status"] == "FAILED"


def test_a_waiting_deployment_survives_a_killed_server(
    launch: Callable[..., Any], tmp_path: Path, project: str
) -> None:
    """kill -9 the server while the deployment waits; the agent reports to
    the next server on the same store, and the stack completes."""
    db = f"sqlite:///{tmp_path / 'stacks.db'}"
    template = TEMPLATE.replace("COUNT", str(tmp_path / "count.txt"))
    # The servers read this file (the fixture's CONVECTION_CONFIG): a short
    # lease, so the second takes the dead one's operation up soon.
    (tmp_path / "absent.toml").write_text("engine_lease_seconds = 2\n")
    first = launch(db)
    with httpx.Client(base_url=first.endpoint(project), timeout=30) as http:
        made = http.post("/stacks", json={"stack_name": "pull", "template": template})
        stack_id = made.json()["stack"]["id"]
        resource = f"/stacks/pull/{stack_id}/resources/server"
        occ = wait_for(
            lambda: http.get(resource).json()["resource"]["attributes"].get("os_collect_config"),
            "os_collect_config",
        )
        deployments = "/software_deployments"
        wait_for(lambda: http.get(deployments).json()["software_deployments"], "deployments")
    first.process.kill()
    first.process.wait(30)
    second = launch(db)
    occ["convection"]["url"] = second.endpoint(project)
    agent = _agent(occ, tmp_path / "agent")
    try:
        with httpx.Client(base_url=second.endpoint(project), timeout=30) as http:
            stack = settled(http, f"/stacks/pull/{stack_id}")
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait(10)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert sorted((tmp_path / "count.txt").read_text().splitlines()) == ["ran group", "ran world"]
