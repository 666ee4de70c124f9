"""examples/resource-group and examples/canary, step by step as their
READMEs run them, on every store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from convection.model.compiler import StackInputs

from .conftest import Env

EXAMPLES = Path(__file__).parents[2] / "examples"


def inputs(example: str, env_files: tuple[str, ...] = (), **parameters: str) -> StackInputs:
    root = EXAMPLES / example
    return StackInputs.from_text(
        (root / "template.yaml").read_text(),
        environments=[(name, (root / name).read_text()) for name in env_files],
        parameters=parameters,
    )


def output(env: Env, name: str, key: str) -> Any:
    shown = env.stacks.show("p", name)
    return {o["output_key"]: o.get("output_value") for o in shown["outputs"]}[key]


def test_resource_group_example_scales_down_and_up(env: Env) -> None:
    env.stacks.create("p", "group-demo", inputs("resource-group"))
    assert env.wait("group-demo")["stack_status"] == "CREATE_COMPLETE"
    assert output(env, "group-demo", "members") == ["web-0", "web-1", "web-2"]

    env.stacks.update("p", "group-demo", inputs("resource-group", count="2", remove="1"))
    assert env.wait("group-demo")["stack_status"] == "UPDATE_COMPLETE"
    assert output(env, "group-demo", "members") == ["web-0", "web-2"]
    assert output(env, "group-demo", "removed") == ["1"]

    env.stacks.update("p", "group-demo", inputs("resource-group", count="4", remove="1"))
    assert env.wait("group-demo")["stack_status"] == "UPDATE_COMPLETE"
    assert output(env, "group-demo", "members") == ["web-0", "web-2", "web-3", "web-4"]
    refs = output(env, "group-demo", "refs_map")
    assert sorted(refs) == ["0", "2", "3", "4"] and all(refs.values())


def members(env: Env, child: str) -> dict[str, str]:
    rows = env.store.list_resources(child, current_only=True)
    return {r.name: r.attributes.get("value") for r in rows}


def start_canary(env: Env) -> str:
    """Create on v1, start the v2 rollout, run until the canary holds;
    returns the group's nested stack id."""
    env.stacks.create("p", "canary-demo", inputs("canary", ("canary.yaml",)))
    assert env.wait("canary-demo")["stack_status"] == "CREATE_COMPLETE"
    env.stacks.update("p", "canary-demo", inputs("canary", ("canary.yaml",), version="v2"))
    child = str(env.resources("canary-demo")["web"]["physical_resource_id"])
    env.run_until(lambda: bool(env.stacks.hook_poll("p", child)))
    return child


def test_canary_holds_after_the_first_batch_until_cleared(env: Env) -> None:
    child = start_canary(env)
    waiting = env.stacks.hook_poll("p", child)
    assert [(w["resource_name"], w["hook_type"]) for w in waiting] == [("3", "post-update")]
    assert members(env, child) == {
        "0": "web-0 runs v1",
        "1": "web-1 runs v1",
        "2": "web-2 runs v1",
        "3": "web-3 runs v2",
    }
    assert env.status("canary-demo")[0] == "UPDATE_IN_PROGRESS"

    env.stacks.hook_clear("p", child, "3", "post-update")
    assert env.wait("canary-demo")["stack_status"] == "UPDATE_COMPLETE"
    assert members(env, child) == {str(i): f"web-{i} runs v2" for i in range(4)}
    assert output(env, "canary-demo", "members") == [f"web-{i} runs v2" for i in range(4)]


def test_cancelling_at_the_canary_rolls_it_back(env: Env) -> None:
    child = start_canary(env)
    env.stacks.cancel_update("p", "canary-demo")
    # the rollback updates the canary back in place (the group and its
    # nested stack are kept, as Heat keeps them), and the breakpoint, still
    # in the environment, holds that update too until cleared
    env.run_until(
        lambda: env.stacks.show("p", child)["stack_status"] == "UPDATE_IN_PROGRESS"
        and bool(env.stacks.hook_poll("p", child))
        and members(env, child)["3"] == "web-3 runs v1"
    )
    waiting = env.stacks.hook_poll("p", "canary-demo", nested_depth=1)
    assert [w["resource_path"] for w in waiting] == ["web/3"]
    env.stacks.hook_clear("p", "canary-demo", "web/3", "post-update")  # heatclient's path
    shown = env.wait("canary-demo")
    assert shown["stack_status"] == "ROLLBACK_COMPLETE", shown["stack_status_reason"]
    assert members(env, child) == {str(i): f"web-{i} runs v1" for i in range(4)}
    assert env.resources("canary-demo")["web"]["physical_resource_id"] == child
