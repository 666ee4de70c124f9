"""Deployment groups and structured deployments on real local nodes."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Env

GROUP = """
resources:
  node1: {type: Convection::Local::Node}
  node2: {type: Convection::Local::Node}
  node3: {type: Convection::Local::Node}
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      inputs: [{name: role}]
      config: |
        #!/bin/sh
        echo "$deploy_action $deploy_resource_name $role" >> "LOG"
        echo "$deploy_resource_name is $role"
  all:
    type: OS::Heat::SoftwareDeploymentGroup
    properties:
      config: {get_resource: cfg}
      actions: [CREATE, UPDATE, DELETE]
      input_values: {role: ROLE}
      servers: SERVERS
outputs:
  stdouts: {value: {get_attr: [all, deploy_stdouts]}}
  codes: {value: {get_attr: [all, deploy_status_codes]}}
"""


def group(log: Path, servers: str, role: str = "replica") -> str:
    return GROUP.replace("LOG", str(log)).replace("SERVERS", servers).replace("ROLE", role)


TWO = "{a: {get_resource: node1}, b: {get_resource: node2}}"
SWAP = "{b: {get_resource: node2}, c: {get_resource: node3}}"


def test_group_deploys_every_member_and_maps_attributes(env: Env, tmp_path: Path) -> None:
    log = tmp_path / "log"
    shown = env.create(group(log, TWO))
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert sorted(log.read_text().splitlines()) == ["CREATE a replica", "CREATE b replica"]
    out = env.outputs()
    assert out["stdouts"] == {"a": "a is replica\n", "b": "b is replica\n"}
    assert out["codes"] == {"a": 0, "b": 0}


def test_group_update_creates_updates_and_deletes_members(env: Env, tmp_path: Path) -> None:
    log = tmp_path / "log"
    env.create(group(log, TWO))
    shown = env.update(group(log, SWAP))
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    lines = log.read_text().splitlines()[2:]
    # b's config and inputs did not change: it is not run again
    assert sorted(lines) == ["CREATE c replica", "DELETE a replica"]
    assert set(env.attr("all", "deploy_stdouts")) == {"b", "c"}
    shown = env.update(group(log, SWAP, role="primary"))
    assert sorted(log.read_text().splitlines()[4:]) == ["UPDATE b primary", "UPDATE c primary"]
    assert env.delete()["stack_status"] == "DELETE_COMPLETE"
    assert sorted(log.read_text().splitlines()[6:]) == ["DELETE b primary", "DELETE c primary"]


def test_group_failure_names_the_member(env: Env, tmp_path: Path) -> None:
    text = group(tmp_path / "log", TWO).replace(
        'echo "$deploy_resource_name is $role"',
        '[ "$deploy_resource_name" = b ] && { echo "b broke" >&2; exit 7; }; true',
    )
    reason = env.create_failure(text, "all")
    assert "resources.all.resources.b: Deployment to server failed" in reason
    assert "b broke" in reason
    assert "resources.all.resources.a" not in reason


STRUCTURED = """
resources:
  node: {type: Convection::Local::Node}
  cfg:
    type: OS::Heat::StructuredConfig
    properties:
      group: script
      config:
        STRUCT_CONFIG
  dep:
    type: OS::Heat::StructuredDeployment
    properties:
      config: {get_resource: cfg}
      server: {get_resource: node}
      input_values: {port: 5432, name: db1}
      VALIDATE
"""


def test_structured_deployment_substitutes_get_input(env: Env) -> None:
    text = STRUCTURED.replace(
        "STRUCT_CONFIG",
        "{settings: {port: {get_input: port}, name: {get_input: name}, "
        "who: {get_input: deploy_resource_name}, missing: {get_input: nope}}}",
    ).replace("VALIDATE", "")
    env.create(text)  # the script hook cannot run JSON: only the derived config matters here
    (derived,) = _derived_configs(env)
    assert derived == {"settings": {"port": 5432, "name": "db1", "who": "dep", "missing": None}}


def test_structured_strict_validation_refuses_a_missing_input(env: Env) -> None:
    text = STRUCTURED.replace("STRUCT_CONFIG", "{a: {get_input: nope}}").replace(
        "VALIDATE", "input_values_validate: STRICT"
    )
    assert env.create(text)["stack_status"] == "CREATE_FAILED"
    reason = env.resources()["dep"]["resource_status_reason"]
    assert "resources.dep.properties.input_values" in reason
    assert "The Parameter (nope) was not provided." in reason


def _derived_configs(env: Env) -> list[dict[str, object]]:
    """The derived configs the deployment left on its node (heat-agents' markers)."""
    sandbox = Path(str(env.record("node").data["sandbox"]))
    found = []
    for marker in sandbox.rglob("deployed/*.json"):
        if not marker.name.endswith(".notify.json"):
            found.append(json.loads(marker.read_text())["config"]["config"])
    return found


def test_group_outputs_are_maps_by_member(env: Env, tmp_path: Path) -> None:
    text = (
        group(tmp_path / "log", TWO)
        .replace("inputs: [{name: role}]", "inputs: [{name: role}]\n      outputs: [{name: who}]")
        .replace(
            'echo "$deploy_resource_name is $role"',
            'printf "%s" "$deploy_resource_name-$role" > "$heat_outputs_path.who"',
        )
    )
    text += "  who: {value: {get_attr: [all, who]}}\n"
    shown = env.create(text)
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert env.outputs()["who"] == {"a": "a-replica", "b": "b-replica"}


BATCHED = """
resources:
  node1: {type: Convection::Local::Node}
  node2: {type: Convection::Local::Node}
  node3: {type: Convection::Local::Node}
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      inputs: [{name: v}]
      config: |
        #!/bin/sh
        echo "start $deploy_action $deploy_resource_name $(date +%s.%N)" >> "LOG"
        sleep 0.3
        echo "end $deploy_action $deploy_resource_name" >> "LOG"
  all:
    type: OS::Heat::SoftwareDeploymentGroup
    update_policy:
      batch_create: {max_batch_size: 2, pause_time: 1}
      rolling_update: {max_batch_size: 1}
    properties:
      config: {get_resource: cfg}
      input_values: {v: V}
      servers:
        a: {get_resource: node1}
        b: {get_resource: node2}
        c: {get_resource: node3}
"""


def test_batch_create_and_rolling_update(env: Env, tmp_path: Path) -> None:
    log = tmp_path / "log"
    text = BATCHED.replace("LOG", str(log))
    shown = env.create(text.replace("V", "1"))
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    lines = [line.split() for line in log.read_text().splitlines()]
    # two at once, then (after the pause) the third
    assert sorted(x[2] for x in lines[:2]) == ["a", "b"] and lines[:2][0][0] == "start"
    assert [x[:3] for x in lines[4:]] == [["start", "CREATE", "c"], ["end", "CREATE", "c"]]
    first = max(float(x[3]) for x in lines if x[0] == "start" and x[2] in "ab")
    assert float(lines[4][3]) - first >= 1.0  # pause_time between batches
    shown = env.update(text.replace("V", "2"))
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    updates = [line.split()[:3] for line in log.read_text().splitlines()[6:]]
    # one at a time, the last member first
    assert updates == [
        ["start", "UPDATE", "c"],
        ["end", "UPDATE", "c"],
        ["start", "UPDATE", "b"],
        ["end", "UPDATE", "b"],
        ["start", "UPDATE", "a"],
        ["end", "UPDATE", "a"],
    ]
