"""Heat's OS::Mistral::* types in stacks, on the real engine with the
workflow layer attached and a real SQLite store: the definition a
Workflow resource writes, its signal starting executions, an
ExternalResource whose lifecycle is workflows (create, update in place,
replacement, failure, delete), and re-runs after a crash."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from convection.common import InvalidInput
from convection.convergence import EngineConfig
from convection.model.compiler import StackInputs
from convection.resources import InMemoryContext
from convection.resources.mistral.external_resource import MistralExternalResource
from convection.resources.mistral.workflow import MistralWorkflow, definition
from convection.resources.registry import TypeRegistry, builtin_plugins
from convection.service.stacks import Stacks, StacksConfig
from convection.store.sql import SQLStore
from convection.workflows import engine_for, get_execution, get_workflow, list_executions
from convection.workflows.engine.stack_port import StackWorkflows

PROJECT = "p"
HEADER = "heat_template_version: 2018-08-31\n"

GREETER = """
resources:
  greeter:
    type: OS::Mistral::Workflow
    properties:
      name: greet
      type: direct
      description: Say hello
      input: {who: world, punctuation: "!"}
      output: {said: <% $.said %>}
      tasks:
        - name: say
          action: std.echo output=<% "hello " + $.who + $.punctuation %>
          publish: {said: <% task().result %>}
          retry: {count: 2, delay: 1}
outputs:
  name: {value: {get_resource: greeter}}
  data: {value: {get_attr: [greeter, data]}}
"""


class Env:
    def __init__(self, store: SQLStore) -> None:
        self.store = store
        config = StacksConfig(engine=EngineConfig(scan_seconds=0.05))
        self.stacks = Stacks(store, TypeRegistry(builtin_plugins()), config=config)
        engine_for(self.stacks)

    def create(self, text: str, name: str = "s", **parameters: Any) -> dict[str, Any]:
        inputs = StackInputs.from_text(HEADER + textwrap.dedent(text), parameters=parameters)
        made = self.stacks.create(PROJECT, name, inputs)
        return self.stacks.wait(made["id"], timeout=60)

    def update(self, text: str, name: str = "s", **parameters: Any) -> dict[str, Any]:
        inputs = StackInputs.from_text(HEADER + textwrap.dedent(text), parameters=parameters)
        self.stacks.update(PROJECT, name, inputs)
        stack = self.store.get_stack(PROJECT, name)
        assert stack is not None
        return self.stacks.wait(stack.id, timeout=60)

    def delete(self, name: str = "s") -> None:
        stack = self.store.get_stack(PROJECT, name)
        assert stack is not None
        self.stacks.delete(PROJECT, name)
        self.stacks.wait(stack.id, timeout=60)

    def resource(self, resource: str, name: str = "s") -> dict[str, Any]:
        return self.stacks.resource(PROJECT, name, resource)

    def outputs(self, name: str = "s") -> dict[str, Any]:
        shown = self.stacks.show(PROJECT, name)
        return {o["output_key"]: o["output_value"] for o in shown["outputs"]}

    def settle(self, execution_id: str) -> dict[str, Any]:
        def done() -> bool:
            return get_execution(self.store, PROJECT, execution_id)["state"] != "RUNNING"

        self.stacks.run_engine(until=done, timeout=60)
        return get_execution(self.store, PROJECT, execution_id)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    store = SQLStore(f"sqlite:///{tmp_path / 'stacks.db'}")
    yield Env(store)
    store.close()


# -- OS::Mistral::Workflow ---------------------------------------------------------


def test_definition_is_heats_document() -> None:
    props = {
        "type": "direct",
        "description": None,
        "tags": ["ops"],
        "input": {"who": "world"},
        "output": None,
        "task_defaults": {"retry": {"count": 1}, "timeout": None, "pause_before": False},
        "tasks": [
            {"name": "a", "action": "std.noop", "on_success": ["b"], "wait_after": 2},
            {"name": "b", "workflow": "other", "join": "2", "policies": {"timeout": 30}},
        ],
    }
    assert yaml.safe_load(definition("wf", props)) == {
        "version": "2.0",
        "wf": {
            "type": "direct",
            "tags": ["ops"],
            "input": ["who"],  # names only: the values are execution defaults
            "tasks": {
                "a": {"action": "std.noop", "on-success": ["b"], "wait-after": 2},
                "b": {"workflow": "other", "join": 2, "timeout": 30},
            },
            "task-defaults": {"retry": {"count": 1}},
        },
    }


@pytest.mark.parametrize(
    ("props", "message", "where"),
    [
        (
            {"type": "reverse", "tasks": [{"name": "a", "action": "std.noop"}]},
            "'task_name' is not assigned in 'params' in case of reverse type workflow.",
            ("params",),
        ),
        (
            {"type": "direct", "tasks": [{"name": "a", "action": "x", "workflow": "y"}]},
            "Cannot define the following properties at the same time: workflow, action.",
            ("tasks", 0),
        ),
        (
            {"type": "direct", "tasks": [{"name": "a"}]},
            "At least one of the following properties must be specified: workflow, action.",
            ("tasks", 0),
        ),
        (
            {"type": "direct", "tasks": [{"name": "a", "action": "x", "requires": ["b"]}]},
            "task a contains property 'requires' in case of direct workflow.",
            ("tasks", 0, "requires"),
        ),
        (
            {
                "type": "direct",
                "tasks": [{"name": "a", "action": "x", "timeout": 3, "policies": {"timeout": 4}}],
            },
            "Property policies and timeout cannot be used both at one time.",
            ("tasks", 0, "policies", "timeout"),
        ),
        (
            {"type": "direct", "tasks": [{"name": "a", "action": "x", "concurrency": 2}]},
            "concurrency cannot be specified without with_items.",
            ("tasks", 0, "concurrency"),
        ),
    ],
)
def test_workflow_rules(props: dict[str, Any], message: str, where: tuple[Any, ...]) -> None:
    path = ("resources", "wf", "properties")
    _, diags = MistralWorkflow.validate(props, path)
    assert [d.path for d in diags] == [(*path, *where)]
    assert message in diags[0].message


def test_workflow_in_a_stack_is_started_by_signals(env: Env) -> None:
    assert env.create(GREETER)["stack_status"] == "CREATE_COMPLETE"
    stored = get_workflow(env.store, PROJECT, "greet")
    assert stored["input"] == "who, punctuation"
    assert env.outputs() == {
        "name": "greet",
        "data": {"name": "greet", "input": {"who": "world", "punctuation": "!"}},
    }

    env.stacks.signal(PROJECT, "s", "greeter", {"input": {"who": "ops"}})
    first = env.resource("greeter")["attributes"]["executions"]
    assert [e["workflow_name"] for e in first] == ["greet"]
    done = env.settle(first[0]["id"])
    assert (done["state"], done["output"]) == ("SUCCESS", {"said": "hello ops!"})
    assert done["input"] == {"who": "ops", "punctuation": "!"}  # the property's defaults

    env.stacks.signal(PROJECT, "s", "greeter", {})  # no input: the defaults
    ids = [e["id"] for e in env.resource("greeter")["attributes"]["executions"]]
    assert len(ids) == 2 and ids[1] == first[0]["id"]  # newest first, as Heat's
    assert env.settle(ids[0])["output"] == {"said": "hello world!"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"input": {"whom": "x"}}, "Signal data error: Unknown input whom"),
        (
            {"input": ["x"]},
            "Signal data error: Input in signal data must be a map, find a <class 'list'>",
        ),
        ({"params": "x"}, "Signal data error: Params must be a map, find a <class 'str'>"),
    ],
)
def test_bad_signal_starts_nothing(env: Env, body: dict[str, Any], message: str) -> None:
    env.create(GREETER)
    with pytest.raises(InvalidInput, match=message.replace("[", r"\[").replace("(", r"\(")):
        env.stacks.signal(PROJECT, "s", "greeter", body)
    assert list_executions(env.store, PROJECT) == []


def test_update_rewrites_and_delete_removes_workflow_and_executions(env: Env) -> None:
    env.create(GREETER)
    env.stacks.signal(PROJECT, "s", "greeter", {})
    changed = GREETER.replace("hello ", "hi ")
    assert env.update(changed)["stack_status"] == "UPDATE_COMPLETE"
    assert "hi " in get_workflow(env.store, PROJECT, "greet")["definition"]
    assert env.resource("greeter")["physical_resource_id"] == "greet"  # in place

    env.delete()
    with pytest.raises(Exception, match="Workflow not found"):
        get_workflow(env.store, PROJECT, "greet")
    assert list_executions(env.store, PROJECT) == []


def test_name_taken_by_another_fails_create(env: Env) -> None:
    env.create(GREETER, name="first")
    second = env.create(GREETER, name="second")
    assert second["stack_status"] == "CREATE_FAILED"
    assert "Duplicate entry for WorkflowDefinition" in second["stack_status_reason"]
    env.delete("second")  # the failed create adopted nothing: first keeps its workflow
    assert get_workflow(env.store, PROJECT, "greet")["name"] == "greet"


# -- re-runs after kill -9, plugin by plugin ------------------------------------------


def _ctx(store: SQLStore, op: str = "t1:n:CREATE", **kw: Any) -> InMemoryContext:
    return InMemoryContext(
        resource_name="wf", stack_id="sid", operation_id=op,
        workflows=StackWorkflows(store, PROJECT), **kw,
    )  # fmt: skip


def test_create_again_adopts_what_it_stored(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite:///{tmp_path / 'db'}")
    props = {"name": "wf1", "type": "direct", "tasks": [{"name": "a", "action": "std.noop"}]}
    plugin = MistralWorkflow()
    ctx = _ctx(store)
    asyncio.run(plugin.create(ctx, props))
    ctx.physical_id = None  # killed after storing the workflow, before its id was recorded
    asyncio.run(plugin.create(ctx, props))
    assert ctx.physical_id == "wf1"
    other = _ctx(store, op="t2:n:CREATE")  # a new operation never adopts it
    with pytest.raises(Exception, match="Duplicate entry"):
        asyncio.run(plugin.create(other, props))
    store.close()


def test_repeated_signal_starts_one_execution(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite:///{tmp_path / 'db'}")
    props = {
        "name": "wf1",
        "type": "direct",
        "input": {},
        "tasks": [{"name": "a", "action": "std.noop"}],
    }
    plugin = MistralWorkflow()
    ctx = _ctx(store)
    asyncio.run(plugin.create(ctx, props))
    ctx.operation_id = "signal:7"
    asyncio.run(plugin.signal(ctx, props, {}))
    asyncio.run(plugin.signal(ctx, props, {}))  # delivered again
    assert len(list_executions(store, PROJECT)) == 1
    assert len(str(ctx.data["executions"]).split(",")) == 1
    store.close()


# -- OS::Mistral::ExternalResource ---------------------------------------------------

EXTERNAL = """
parameters:
  size: {type: number, default: 3}
  zone: {type: string, default: a}
resources:
  ops:
    type: OS::Mistral::Workflow
    properties:
      name: thing_ops
      type: direct
      input: {size: 1, zone: a, fail: false}
      output:
        resource_id: <% "thing-" + str($.zone) + "-" + str($.size) %>
        size: <% $.size %>
        before: <% env().get('heat_extresource_data') %>
      tasks:
        - name: check
          action: std.noop
          on_success:
            - boom: <% $.fail %>
            - done: <% not $.fail %>
        - name: boom
          action: std.fail error_data="the thing broke"
        - name: done
          action: std.noop
  thing:
    type: OS::Mistral::ExternalResource
    properties:
      actions:
        CREATE: {workflow: {get_resource: ops}}
        UPDATE: {workflow: {get_resource: ops}}
        DELETE: {workflow: {get_resource: ops}}
      input: {size: {get_param: size}, zone: {get_param: zone}, fail: false}
      replace_on_change_inputs: [zone]
outputs:
  id: {value: {get_resource: thing}}
  output: {value: {get_attr: [thing, output]}}
"""


def test_external_resource_lifecycle_is_workflows(env: Env) -> None:
    import json

    assert env.create(EXTERNAL)["stack_status"] == "CREATE_COMPLETE"
    out = env.outputs()
    assert out["id"] == "thing-a-3"  # output.resource_id is the physical id
    assert json.loads(out["output"]) == {"resource_id": "thing-a-3", "size": 3, "before": None}

    assert env.update(EXTERNAL, size=5)["stack_status"] == "UPDATE_COMPLETE"
    out = env.outputs()
    assert out["id"] == "thing-a-5"  # updated in place with the new input
    # The update workflow saw the outputs so far in env().heat_extresource_data.
    assert json.loads(out["output"])["before"]["resource_id"] == "thing-a-3"

    assert env.update(EXTERNAL, size=5, zone="b")["stack_status"] == "UPDATE_COMPLETE"
    assert env.outputs()["id"] == "thing-b-5"  # replaced: zone is in replace_on_change_inputs
    runs = [e for e in list_executions(env.store, PROJECT) if e["description"] == "Heat managed"]
    assert len(runs) == 4  # create, update, the replacement's create, the old one's delete

    env.delete()
    runs = [e for e in list_executions(env.store, PROJECT) if e["description"] == "Heat managed"]
    assert len(runs) == 5 and all(e["state"] == "SUCCESS" for e in runs)


def test_external_resource_failure_carries_state_info(env: Env) -> None:
    failing = EXTERNAL.replace("zone: {get_param: zone}, fail: false}", "zone: a, fail: true}")
    shown = env.create(failing)
    assert shown["stack_status"] == "CREATE_FAILED"
    assert "the thing broke" in env.resource("thing")["resource_status_reason"]


def test_external_resource_create_again_finds_its_execution(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite:///{tmp_path / 'db'}")
    store_wf = StackWorkflows(store, PROJECT)
    asyncio.run(
        store_wf.create_workflows("version: '2.0'\nmake:\n  tasks:\n    a: {action: std.noop}\n")
    )
    props = {
        "actions": {"CREATE": {"workflow": "make", "params": {}}},
        "input": {},
        "description": "d",
    }
    plugin = MistralExternalResource()
    ctx = _ctx(store)
    first = asyncio.run(plugin.create(ctx, props))
    again = asyncio.run(plugin.create(ctx, props))  # killed before the token was stored
    assert first == again and len(list_executions(store, PROJECT)) == 1
    store.close()


# -- OS::Mistral::CronTrigger ----------------------------------------------------

CRON = """
resources:
  nightly:
    type: OS::Mistral::Workflow
    properties:
      type: direct
      tasks: [{name: a, action: std.noop}]
  schedule:
    type: OS::Mistral::CronTrigger
    properties:
      name: nightly-run
      pattern: "0 3 * * *"
      count: 5
      workflow: {name: {get_resource: nightly}}
outputs:
  next: {value: {get_attr: [schedule, next_execution_time]}}
  left: {value: {get_attr: [schedule, remaining_executions]}}
"""


def test_cron_trigger_in_a_stack(env: Env) -> None:
    from convection.workflows import get_cron_trigger

    assert env.create(CRON)["stack_status"] == "CREATE_COMPLETE"
    trigger = get_cron_trigger(env.store, PROJECT, "nightly-run")
    assert trigger["pattern"] == "0 3 * * *" and trigger["remaining_executions"] == 5
    assert trigger["workflow_name"] == env.resource("nightly")["physical_resource_id"]
    out = env.outputs()
    assert out["left"] == 5 and str(out["next"]).endswith("03:00:00")
    second = env.create(CRON.replace("nightly-run", "nightly-run"), name="other")
    assert second["stack_status"] == "CREATE_FAILED"  # the name is taken: not adopted
    env.delete("other")
    assert get_cron_trigger(env.store, PROJECT, "nightly-run")["id"] == trigger["id"]
    env.delete()
    with pytest.raises(Exception, match="not found"):
        get_cron_trigger(env.store, PROJECT, "nightly-run")


def test_cron_trigger_needs_a_pattern_or_a_first_time() -> None:
    from convection.resources.mistral.cron_trigger import MistralCronTrigger

    path = ("resources", "t", "properties")
    _, diags = MistralCronTrigger.validate({"workflow": {"name": "w"}}, path)
    assert [(d.path, d.message) for d in diags] == [
        (path, "At least one of the following properties must be specified: pattern, first_time.")
    ]


HIDDEN = """
parameters:
  password: {type: string, hidden: true, default: s3cr3t-Pa55}
resources:
  wf:
    type: OS::Mistral::Workflow
    properties:
      type: direct
      input: {password: {get_param: password}}
      tasks: [{name: a, action: std.noop}]
"""


def test_hidden_parameters_are_masked_in_the_workflow_attributes(env: Env) -> None:
    assert env.create(HIDDEN)["stack_status"] == "CREATE_COMPLETE"
    env.stacks.signal(PROJECT, "s", "wf", {})
    shown = env.resource("wf")["attributes"]
    assert shown["data"]["input"] == {"password": "******"}
    assert shown["executions"][0]["input"] == {"password": "******"}
    assert "s3cr3t-Pa55" not in str(shown)
    assert "s3cr3t-Pa55" not in str(env.stacks.events(PROJECT, "s"))


def test_a_refused_definition_is_told_at_the_properties_that_wrote_it(env: Env) -> None:
    """The service checks the generated document; its errors name the
    template's property paths, not lines of a text the author never saw."""
    bad = GREETER.replace("publish: {said: <% task().result %>}", "publish: {said: <% $.x( %>}")
    shown = env.create(bad)
    assert shown["stack_status"] == "CREATE_FAILED"
    reason = env.resource("greeter")["resource_status_reason"]
    assert "resources.greeter: properties.tasks[0].publish.said: Parse error" in reason
    assert "workflow:" not in reason  # no line:column of the generated text
