"""software_configs and software_deployments through python-heatclient,
and the rows a stack's config and deployment resources show there."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from heatclient import exc
from heatclient.client import Client


def test_configs_crud_with_heatclient(heat: Client, http: httpx.Client) -> None:
    made = heat.software_configs.create(
        name="hello",
        group="script",
        config="#!/bin/sh\necho hi\n",
        inputs=[{"name": "who", "default": "you"}],
        outputs=[{"name": "result"}],
        options={"rerun_safe": True},
    )
    shown = heat.software_configs.get(made.id)
    assert (shown.name, shown.group, shown.config) == ("hello", "script", "#!/bin/sh\necho hi\n")
    assert shown.inputs[0]["name"] == "who" and shown.options == {"rerun_safe": True}
    second = heat.software_configs.create(name="two", group="script", config="")
    listed = [c.id for c in heat.software_configs.list()]
    assert listed == [made.id, second.id]
    page = http.get("/software_configs", params={"limit": 1, "marker": made.id}).json()
    assert [c["id"] for c in page["software_configs"]] == [second.id]
    assert set(page["software_configs"][0]) == {"id", "name", "group", "creation_time"}
    heat.software_configs.delete(made.id)
    with pytest.raises(exc.HTTPNotFound):
        heat.software_configs.get(made.id)
    missing = http.get(f"/software_configs/{made.id}")
    assert missing.json()["error"]["type"] == "NotFound"
    assert missing.json()["error"]["message"] == f"Software config with id {made.id} not found"
    bad = http.post("/software_configs", json={"inputs": [{"type": "String"}]})
    assert bad.status_code == 400 and "inputs" in bad.json()["error"]["message"]


def test_deployments_crud_and_metadata(heat: Client, http: httpx.Client) -> None:
    b = heat.software_configs.create(name="b", group="script", config="b", inputs=[{"name": "x"}])
    a = heat.software_configs.create(name="a", group="script", config="a")
    one = heat.software_deployments.create(
        config_id=b.id,
        server_id="srv",
        input_values={"x": 1},
        action="CREATE",
        status="IN_PROGRESS",
        status_reason="Deploy data available",
    )
    heat.software_deployments.create(config_id=a.id, server_id="srv")
    heat.software_deployments.create(config_id=a.id, server_id="other")
    assert one.status == "IN_PROGRESS" and one.input_values == {"x": 1}
    # Heat orders a server's metadata by config name.
    metadata = heat.software_deployments.metadata(server_id="srv")
    assert [m["name"] for m in metadata] == ["a", "b"]
    assert len(heat.software_deployments.list(server_id="srv")) == 2
    heat.software_deployments.update(
        one.id, status="COMPLETE", output_values={"deploy_stdout": "ok"}
    )
    shown = heat.software_deployments.get(one.id)
    assert (shown.status, shown.output_values, shown.action) == (
        "COMPLETE",
        {"deploy_stdout": "ok"},
        "CREATE",
    )
    heat.software_deployments.delete(one.id)
    with pytest.raises(exc.HTTPNotFound):
        heat.software_deployments.get(one.id)
    absent = http.post("/software_deployments", json={"config_id": "nope", "server_id": "s"})
    assert absent.status_code == 404


TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  node:
    type: Convection::Local::Node
  config:
    type: OS::Heat::SoftwareConfig
    properties: {group: script, config: "#!/bin/sh\\necho pushed\\n"}
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: config}, server: {get_resource: node}}
"""


def _settled(heat: Client, stack_id: str) -> Any:
    deadline = time.monotonic() + 60
    while True:
        stack = heat.stacks.get(stack_id)
        if not stack.stack_status.endswith("IN_PROGRESS") or time.monotonic() > deadline:
            return stack
        time.sleep(0.2)


def test_a_stack_shows_its_configs_and_deployments(
    heat: Client, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack_id = heat.stacks.create(stack_name="soft", template=TEMPLATE)["stack"]["id"]
    stack = _settled(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    config_id = heat.resources.get(stack_id, "config").physical_resource_id
    assert [c.id for c in heat.software_configs.list()] == [config_id]
    [deployment] = heat.software_deployments.list()
    assert deployment.config_id == config_id
    assert deployment.status == "COMPLETE"
    assert deployment.output_values["deploy_stdout"] == "pushed\n"
    heat.stacks.delete(stack_id)
    _settled(heat, stack_id)
    assert heat.software_configs.list() == []
    assert heat.software_deployments.list() == []


SECRET_TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  password: {type: string, hidden: true}
resources:
  server: {type: OS::Heat::DeployedServer}
  config:
    type: OS::Heat::SoftwareConfig
    properties: {group: script, config: "#!/bin/sh\\n", inputs: [{name: pw}, {name: user}]}
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      input_values: {pw: {get_param: password}, user: admin}
"""


def test_a_hidden_input_is_masked_except_in_the_servers_metadata(
    heat: Client, http: httpx.Client, server: Any
) -> None:
    secret = "s3cr3t-value-4242"
    made = heat.stacks.create(
        stack_name="hush", template=SECRET_TEMPLATE, parameters={"password": secret}
    )
    stack_id = made["stack"]["id"]
    deadline = time.monotonic() + 30
    while not heat.software_deployments.list() and time.monotonic() < deadline:
        time.sleep(0.2)
    [deployment] = heat.software_deployments.list()
    assert deployment.status == "IN_PROGRESS"
    assert deployment.status_reason == "Deploy data available"
    shown = http.get(f"/software_configs/{deployment.config_id}").json()["software_config"]
    values = {i["name"]: i["value"] for i in shown["inputs"]}
    assert values["pw"] == "******" and values["user"] == "admin"
    assert values["deploy_action"] == "CREATE"
    [meta] = heat.software_deployments.metadata(server_id=deployment.server_id)
    assert {i["name"]: i["value"] for i in meta["inputs"]}["pw"] == secret
    heat.stacks.delete(stack_id)
    assert _settled(heat, stack_id).stack_status == "DELETE_COMPLETE"
    assert heat.software_deployments.list() == []
    assert secret not in server.logs()
