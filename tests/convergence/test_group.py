"""Groups on the real engine: ResourceGroup, ResourceChain, AutoScalingGroup
and ScalingPolicy, with real child stacks in memory, SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from .conftest import Env

GROUP = """\
parameters:
  count: {type: number, default: 3}
  value: {type: string, default: v}
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Heat::TestResource
        properties:
          value: {list_join: ['-', [{get_param: value}, '%index%']]}
outputs:
  refs: {value: {get_attr: [group, refs]}}
  values: {value: {get_attr: [group, output]}}
  one: {value: {get_attr: [group, resource.1.output]}}
  one_ref: {value: {get_attr: [group, resource.1]}}
  refs_map: {value: {get_attr: [group, refs_map]}}
"""


def outputs(env: Env, name: str = "s") -> dict[str, Any]:
    shown = env.stacks.show("p", name)
    return {o["output_key"]: o.get("output_value") for o in shown["outputs"]}


def test_group_create_outputs(env: Env) -> None:
    env.create(GROUP)
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    out = outputs(env)
    assert out["values"] == ["v-0", "v-1", "v-2"]
    assert out["one"] == "v-1"
    assert len(out["refs"]) == 3 and out["one_ref"] == out["refs"][1]
    assert out["refs_map"] == {"0": out["refs"][0], "1": out["refs"][1], "2": out["refs"][2]}


def child_rows(env: Env, group: str = "group", name: str = "s") -> dict[str, Any]:
    """The group's members as its child stack stores them: name -> row."""
    rows = {r["resource_name"]: r for r in env.stacks.resources("p", name)}
    child = rows[group]["physical_resource_id"]
    return {r.name: r for r in env.store.list_resources(child, current_only=True)}


def values(env: Env, group: str = "group", name: str = "s") -> dict[str, Any]:
    return {n: r.properties.get("value") for n, r in child_rows(env, group, name).items()}


ROLLING = GROUP.replace(
    "  group:\n    type: OS::Heat::ResourceGroup\n",
    "  group:\n    type: OS::Heat::ResourceGroup\n"
    "    update_policy:\n"
    "      rolling_update: {max_batch_size: 2, min_in_service: 4, pause_time: 0.3}\n",
)


def group_events(env: Env, name: str = "s") -> list[str]:
    events = env.stacks.events("p", name)
    return [e["resource_status_reason"] for e in events if e["resource_name"] == "group"]


def test_rolling_update_runs_batch_by_batch(env: Env) -> None:
    env.create(ROLLING, parameters={"count": 4})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    env.update(ROLLING, parameters={"count": 4, "value": "w"})
    shown = env.wait()
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    assert values(env) == {str(i): f"w-{i}" for i in range(4)}
    batches = [r for r in group_events(env) if r.startswith("Applying batch")]
    assert batches == [f"Applying batch {i} of 4 (6 members)" for i in (1, 2, 3)] + [
        "Applying batch 4 of 4 (4 members)"
    ]
    assert outputs(env)["values"] == [f"w-{i}" for i in range(4)]


def test_scale_down_and_up_with_removal_policies(env: Env) -> None:
    env.create(GROUP, parameters={"count": 3})
    env.wait()
    removal = (
        GROUP.replace(
            "      count: {get_param: count}\n",
            "      count: {get_param: count}\n      removal_policies: [{resource_list: ['1']}]\n",
        )
        + "  removed: {value: {get_attr: [group, removed_rsrc_list]}}\n"
    )
    env.update(removal, parameters={"count": 2})
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert values(env) == {"0": "v-0", "2": "v-2"}
    assert outputs(env)["removed"] == ["1"]
    env.update(removal, parameters={"count": 3})
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert values(env) == {"0": "v-0", "2": "v-2", "3": "v-3"}


FAILING = GROUP.replace(
    "          value: {list_join: ['-', [{get_param: value}, '%index%']]}\n",
    "          value: {list_join: ['-', [{get_param: value}, '%index%']]}\n"
    "          fail: {get_param: fail}\n",
).replace("parameters:\n", "parameters:\n  fail: {type: boolean, default: false}\n", 1)


def test_member_failure_fails_the_group_with_the_member_path(env: Env) -> None:
    env.create(FAILING, parameters={"count": 2, "fail": True})
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_FAILED"
    reason = env.resources()["group"]["resource_status_reason"]
    assert "resources.group.resources" in reason and "Test Resource failed" in reason


ROLLING_FAILING = FAILING.replace(
    "  group:\n    type: OS::Heat::ResourceGroup\n",
    "  group:\n    type: OS::Heat::ResourceGroup\n"
    "    update_policy:\n      rolling_update: {max_batch_size: 1}\n",
)


def test_failed_batch_stops_the_rollout(env: Env) -> None:
    env.create(ROLLING_FAILING, parameters={"count": 3})
    env.wait()
    env.update(ROLLING_FAILING, parameters={"count": 3, "value": "w", "fail": True})
    assert env.wait()["stack_status"] == "UPDATE_FAILED"
    rows = child_rows(env)
    # the highest index went first and failed; the others were never touched
    assert (rows["2"].action, rows["2"].status) == ("UPDATE", "FAILED")
    assert {n: (r.action, r.properties["value"]) for n, r in rows.items() if n != "2"} == {
        "0": ("CREATE", "v-0"),
        "1": ("CREATE", "v-1"),
    }
    batches = [r for r in group_events(env) if r.startswith("Applying batch")]
    assert batches == ["Applying batch 1 of 3 (3 members)"]


def test_rollback_returns_members_to_the_previous_definition(env: Env) -> None:
    env.create(ROLLING_FAILING, parameters={"count": 3}, enable_rollback=True)
    env.wait()
    child = env.resources()["group"]["physical_resource_id"]
    env.update(ROLLING_FAILING, parameters={"count": 3, "value": "w", "fail": True})
    shown = env.wait()
    assert shown["stack_status"] == "ROLLBACK_COMPLETE", shown["stack_status_reason"]
    assert values(env) == {"0": "v-0", "1": "v-1", "2": "v-2"}
    assert all(r.status == "COMPLETE" for r in child_rows(env).values())
    # rolled back in place: the same nested stack, the member that failed
    # replaced inside it, the others never touched again
    assert env.resources()["group"]["physical_resource_id"] == child


def test_a_policy_that_cannot_finish_in_time_is_refused(env: Env) -> None:
    # three batches, two pauses of 30s: all of the one-minute timeout
    slow = ROLLING.replace("pause_time: 0.3", "pause_time: 30").replace(
        "max_batch_size: 2, min_in_service: 4", "max_batch_size: 1"
    )
    env.create(slow, parameters={"count": 3}, timeout_mins=1)
    env.wait()
    env.update(slow, parameters={"count": 3, "value": "w"})
    assert env.wait()["stack_status"] == "UPDATE_FAILED"
    reason = env.resources()["group"]["resource_status_reason"]
    assert reason == (
        "ValueError: resources.group: "
        "The current update policy will result in stack update timeout."
    )
    assert values(env) == {str(i): f"v-{i}" for i in range(3)}


def test_cancel_during_a_rolling_update_rolls_back(env: Env) -> None:
    paused = ROLLING.replace("pause_time: 0.3", "pause_time: 600")
    env.create(paused, parameters={"count": 2})
    env.wait()
    child = env.resources()["group"]["physical_resource_id"]
    env.update(paused, parameters={"count": 2, "value": "w"})

    def pausing() -> bool:
        rows = {r.name: r for r in env.store.list_resources(env.store.get_stack("p", "s").id)}
        rollout = rows["group"].data.get("rollout") or {}
        return rollout.get("phase") == "pause"

    env.run_until(pausing)
    env.stacks.cancel_update("p", "s")
    shown = env.wait()
    assert shown["stack_status"] == "ROLLBACK_COMPLETE", shown["stack_status_reason"]
    assert values(env) == {"0": "v-0", "1": "v-1"}
    assert env.resources()["group"]["physical_resource_id"] == child


def test_delete_while_a_100_member_group_is_creating(env: Env) -> None:
    big = GROUP.replace("default: 3", "default: 100")
    env.create(big)

    def some_members() -> bool:
        stack = env.store.get_stack("p", "s")
        rows = env.store.list_resources(stack.id)
        child = rows[0].physical_id if rows else None
        if child is None:
            return False
        done = [r for r in env.store.list_resources(child) if r.status == "COMPLETE"]
        return len(done) >= 5

    env.run_until(some_members)
    child = env.resources()["group"]["physical_resource_id"]
    env.stacks.delete("p", "s")
    shown = env.wait()
    assert shown["stack_status"] == "DELETE_COMPLETE", shown["stack_status_reason"]
    left = env.store.get_stack_by_id(child)
    assert left is None or (left.action, left.status) == ("DELETE", "COMPLETE")
    rows = env.store.list_resources(child)
    assert all((r.action, r.status) == ("DELETE", "COMPLETE") for r in rows)


CHAIN = """\
resources:
  chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: [OS::Heat::Value, OS::Heat::Value]
      resource_properties: {value: hello}
outputs:
  refs: {value: {get_attr: [chain, refs]}}
  values: {value: {get_attr: [chain, value]}}
"""


def test_chain(env: Env) -> None:
    env.create(CHAIN)
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    out = outputs(env)
    assert out["values"] == ["hello", "hello"] and len(out["refs"]) == 2
    rows = child_rows(env, "chain")
    assert rows["1"].requires == ("0",)


ASG = """\
resources:
  asg:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 3
      resource:
        type: OS::Heat::Value
        properties: {value: member}
  up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: asg}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
      cooldown: 60
outputs:
  size: {value: {get_attr: [asg, current_size]}}
  values: {value: {get_attr: [asg, outputs_list, value]}}
"""


def test_scaling_policy_signal_grows_the_group_and_honours_cooldown(env: Env) -> None:
    env.create(ASG)
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert outputs(env)["size"] == 1
    assert outputs(env)["values"] == ["member"]
    env.stacks.signal("p", "s", "up", {})
    env.stacks.run_engine(timeout=30)
    assert len(child_rows(env, "asg")) == 2
    # the policy's cooldown (60s) is running: a second signal changes nothing
    env.stacks.signal("p", "s", "up", {})
    env.stacks.run_engine(timeout=30)
    assert len(child_rows(env, "asg")) == 2
    reasons = [e["resource_status_reason"] for e in env.stacks.events("p", "s")]
    assert any("Start resizing the group asg from 1 to 2" in r for r in reasons), reasons
    assert any(
        r == "The resource up could not perform scaling action: due to cooldown, cooldown 60"
        for r in reasons
    ), reasons
    assert outputs(env)["size"] == 1  # Heat's stored attributes: the last action's
