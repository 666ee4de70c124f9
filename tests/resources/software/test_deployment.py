"""SoftwareDeployment on real local nodes, through real stacks."""

from __future__ import annotations

from pathlib import Path

from .conftest import Env

NODES = """
  node1: {type: Convection::Local::Node}
  node2: {type: Convection::Local::Node}
"""

CHAIN = (
    """
resources:
"""
    + NODES
    + """
  make_master:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      inputs: [{name: who}]
      outputs: [{name: master}]
      config: |
        #!/bin/sh
        echo "choosing $who"
        printf '%s' "$who-chosen" > "$heat_outputs_path.master"
  use_master:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      inputs: [{name: master}, {name: settings, type: Json}]
      outputs: [{name: seen}]
      config: |
        #!/bin/sh
        printf '%s %s' "$master" "$settings" > "$heat_outputs_path.seen"
  step1:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: make_master}
      server: {get_resource: node1}
      input_values: {who: node1}
      signal_transport: NO_SIGNAL_PLACEHOLDER
  step2:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: use_master}
      server: {get_resource: node2}
      input_values:
        master: {get_attr: [step1, master]}
        settings: {port: 5432}
outputs:
  master: {value: {get_attr: [step1, master]}}
  seen: {value: {get_attr: [step2, seen]}}
  stdout: {value: {get_attr: [step1, deploy_stdout]}}
  code: {value: {get_attr: [step2, deploy_status_code]}}
"""
)


def chain(transport: str = "CFN_SIGNAL") -> str:
    return CHAIN.replace("NO_SIGNAL_PLACEHOLDER", transport)


def test_outputs_feed_later_deployments_across_two_nodes(env: Env) -> None:
    shown = env.create(chain())
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    out = env.outputs()
    assert out["master"] == "node1-chosen"
    assert out["seen"] == 'node1-chosen {"port": 5432}'
    assert out["stdout"] == "choosing node1\n"
    assert out["code"] == 0


def test_derived_config_carries_deploy_inputs(env: Env) -> None:
    shown = env.create(
        """
resources:
  node: {type: Convection::Local::Node}
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      config: |
        #!/bin/sh
        env | grep '^deploy_' | sort
  dep:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: cfg}
      server: {get_resource: node}
      signal_transport: CFN_SIGNAL
"""
    )
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    lines = dict(line.split("=", 1) for line in env.attr("dep", "deploy_stdout").splitlines())
    stack = env.store.get_stack("p", "s")
    assert stack is not None
    assert lines["deploy_action"] == "CREATE"
    assert lines["deploy_resource_name"] == "dep"
    assert lines["deploy_stack_id"] == f"s/{stack.id}"
    assert lines["deploy_server_id"] == env.record("node").physical_id
    assert lines["deploy_signal_transport"] == "CFN_SIGNAL"
    assert lines["deploy_signal_verb"] == "POST"


def test_failure_carries_status_and_stderr_tail(env: Env) -> None:
    reason = env.create_failure(
        """
resources:
  node: {type: Convection::Local::Node}
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      config: |
        #!/bin/sh
        echo "lots of noise" >&2
        echo "database refused the connection" >&2
        exit 3
  dep:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: cfg}, server: {get_resource: node}}
""",
        "dep",
    )
    assert "Deployment to server failed" in reason
    assert "non-zero status code: 3" in reason
    assert "database refused the connection" in reason


def test_error_output_fails_the_deployment(env: Env) -> None:
    assert "problem : disk full" in env.create_failure(
        """
resources:
  node: {type: Convection::Local::Node}
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      outputs: [{name: problem, error_output: true}]
      config: |
        #!/bin/sh
        printf 'disk full' > "$heat_outputs_path.problem"
  dep:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: cfg}, server: {get_resource: node}}
""",
        "dep",
    )


def test_no_signal_completes_without_outputs(env: Env) -> None:
    shown = env.create(chain("NO_SIGNAL").replace('echo "choosing $who"', "exit 1"))
    # step1 fails on the node, but NO_SIGNAL does not wait for (or judge) the result
    assert env.resources()["step1"]["resource_status"] == "CREATE_COMPLETE"
    assert env.attr("step1", "master") is None
    assert any("Not waiting for outputs signal" in e for e in env.events())
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]


COUNTING = """
resources:
  node: {type: Convection::Local::Node}
  cfg:
    type: OS::Heat::SoftwareConfig
    properties:
      inputs: [{name: value}]
      outputs: [{name: runs}]
      config: |
        #!/bin/sh
        echo "$deploy_action $value" >> "COUNTER_FILE"
        wc -l < "COUNTER_FILE" | tr -d ' \\n'
        wc -l < "COUNTER_FILE" | tr -d ' \\n' > "$heat_outputs_path.runs"
  dep:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: cfg}
      server: {get_resource: node}
      input_values: {value: VALUE}
      name: NAME
      actions: ACTIONS
"""


def counting(counter: Path, value: str, name: str = "n1", actions: str = "[CREATE, UPDATE]") -> str:
    return (
        COUNTING.replace("COUNTER_FILE", str(counter))
        .replace("VALUE", value)
        .replace("NAME", name)
        .replace("ACTIONS", actions)
    )


def test_update_runs_again_only_when_config_or_inputs_change(env: Env, tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    assert env.create(counting(counter, "a"))["stack_status"] == "CREATE_COMPLETE"
    assert counter.read_text().splitlines() == ["CREATE a"]
    # only the derived config's name changes: an update with nothing to run
    assert env.update(counting(counter, "a", name="n2"))["stack_status"] == "UPDATE_COMPLETE"
    assert counter.read_text().splitlines() == ["CREATE a"]
    assert any("not run again" in e for e in env.events())
    # an input changes: UPDATE runs
    assert env.update(counting(counter, "b", name="n2"))["stack_status"] == "UPDATE_COMPLETE"
    assert counter.read_text().splitlines() == ["CREATE a", "UPDATE b"]
    assert env.attr("dep", "deploy_stdout") == "2"


def test_delete_action_runs_on_delete(env: Env, tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    text = counting(counter, "a", actions="[CREATE, DELETE]")
    assert env.create(text)["stack_status"] == "CREATE_COMPLETE"
    assert env.delete()["stack_status"] == "DELETE_COMPLETE"
    assert counter.read_text().splitlines() == ["CREATE a", "DELETE a"]


def test_default_actions_do_not_run_on_delete(env: Env, tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    assert env.create(counting(counter, "a"))["stack_status"] == "CREATE_COMPLETE"
    assert env.delete()["stack_status"] == "DELETE_COMPLETE"
    assert counter.read_text().splitlines() == ["CREATE a"]


def test_a_changed_config_runs_update(env: Env, tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    env.create(counting(counter, "a"))
    changed = counting(counter, "a").replace('echo "$deploy_action', 'echo "v2 $deploy_action')
    assert env.update(changed)["stack_status"] == "UPDATE_COMPLETE"
    assert counter.read_text().splitlines() == ["CREATE a", "v2 UPDATE a"]


def test_replace_on_change_input_deploys_as_new(env: Env, tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    text = counting(counter, "a").replace(
        "inputs: [{name: value}]", "inputs: [{name: value, replace_on_change: true}]"
    )
    env.create(text)
    first_id = env.record("dep").physical_id
    assert env.update(text.replace("value: a", "value: b"))["stack_status"] == "UPDATE_COMPLETE"
    assert counter.read_text().splitlines() == ["CREATE a", "CREATE b"]
    assert env.record("dep").physical_id != first_id


def test_suspend_and_resume_actions(env: Env, tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    env.create(counting(counter, "a", actions="[CREATE, SUSPEND, RESUME]"))
    env.stacks.suspend("p", "s")
    assert env.wait()["stack_status"] == "SUSPEND_COMPLETE"
    env.stacks.resume("p", "s")
    assert env.wait()["stack_status"] == "RESUME_COMPLETE"
    assert counter.read_text().splitlines() == ["CREATE a", "SUSPEND a", "RESUME a"]
