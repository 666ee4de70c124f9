"""convection.stack.* and convection.signal through the real service layer
on an SQLite store: the action starts the operation, waits on a timer
(Sleep, then resume), and its result is the stack's outputs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from convection.service import Stacks
from convection.store import open_store
from convection.workflows import (
    Failure,
    RunContext,
    ServicePorts,
    Sleep,
    Success,
    default_registry,
    validate_input,
)

from .conftest import CTX, run

TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  greeting: {type: string, default: hello}
  fail: {type: boolean, default: false}
resources:
  thing:
    type: OS::Heat::TestResource
    properties: {value: {get_param: greeting}, fail: {get_param: fail}}
outputs:
  said: {value: {get_attr: [thing, output]}}
"""

WAIT = """
heat_template_version: 2018-08-31
resources:
  handle: {type: OS::Heat::WaitConditionHandle}
  wc:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, count: 1, timeout: 60}
outputs:
  data: {value: {get_attr: [wc, data]}}
"""


@pytest.fixture
def stacks(tmp_path: Path) -> Iterator[Stacks]:
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    yield Stacks(store)


@pytest.fixture
def ctx(stacks: Stacks) -> RunContext:
    ports = ServicePorts(stacks)
    return replace(CTX, stacks=ports, signals=ports)


def action(name: str) -> Any:
    return default_registry().lookup(name)()


def create(ctx: RunContext, stacks: Stacks, **params: Any) -> Any:
    """Run convection.stack.create to its end, the stack engine in between."""
    act = action("convection.stack.create")
    params = {"name": "s", "template": TEMPLATE, "poll_interval": 0.5, **params}
    started = run(act.run(ctx, params))
    assert isinstance(started, Sleep) and started.seconds == 0.5
    stacks.wait(started.state["stack_id"], timeout=60)
    return run(act.resume(ctx, params, started.state))


def test_create_waits_on_a_timer_and_returns_the_outputs(ctx: RunContext, stacks: Stacks) -> None:
    act = action("convection.stack.create")
    params = {"name": "s", "template": TEMPLATE, "parameters": {"greeting": "hi"}}
    started = run(act.run(ctx, params))
    assert isinstance(started, Sleep) and started.seconds == 2.0
    # no engine has run yet: still in progress, so it sleeps again, same state
    assert run(act.resume(ctx, params, started.state)) == started
    stacks.wait(started.state["stack_id"], timeout=60)
    assert run(act.resume(ctx, params, started.state)) == Success({"said": "hi"})
    assert run(action("convection.stack.outputs").run(ctx, {"name": "s"})) == Success(
        {"said": "hi"}
    )
    shown = run(action("convection.stack.show").run(ctx, {"name": "s"}))
    assert shown.data["stack_status"] == "CREATE_COMPLETE"


def test_a_failed_operation_fails_with_heats_status_and_reason(
    ctx: RunContext, stacks: Stacks
) -> None:
    outcome = create(ctx, stacks, parameters={"fail": True})
    assert isinstance(outcome, Failure)
    assert outcome.error.startswith("Stack s CREATE_FAILED: ")
    assert "Test Resource failed thing" in outcome.error


def test_service_errors_are_failures(ctx: RunContext, stacks: Stacks) -> None:
    assert create(ctx, stacks) == Success({"said": "hello"})
    again = run(action("convection.stack.create").run(ctx, {"name": "s", "template": TEMPLATE}))
    assert again == Failure("The Stack (s) already exists.")
    missing = run(action("convection.stack.show").run(ctx, {"name": "nope"}))
    assert missing == Failure("The Stack (nope) could not be found.")
    bad = run(action("convection.stack.create").run(ctx, {"name": "t", "template": "{"}))
    assert isinstance(bad, Failure)


def test_update_then_delete(ctx: RunContext, stacks: Stacks) -> None:
    create(ctx, stacks)
    update = action("convection.stack.update")
    params = {"name": "s", "parameters": {"greeting": "bye"}, "poll_interval": 0.5}
    started = run(update.run(ctx, params))
    assert isinstance(started, Sleep)
    stacks.wait(started.state["stack_id"], timeout=60)
    assert run(update.resume(ctx, params, started.state)) == Success({"said": "bye"})

    delete = action("convection.stack.delete")
    started = run(delete.run(ctx, {"name": "s"}))
    assert isinstance(started, Sleep)
    stacks.wait(started.state["stack_id"], timeout=60)
    assert run(delete.resume(ctx, {"name": "s"}, started.state)) == Success(None)
    assert run(action("convection.stack.show").run(ctx, {"name": "s"})) == Failure(
        "The Stack (s) could not be found."
    )


def test_signal_completes_a_wait_condition(ctx: RunContext, stacks: Stacks) -> None:
    act = action("convection.stack.create")
    params = {"name": "w", "template": WAIT, "poll_interval": 0.5}
    started = run(act.run(ctx, params))

    def waiting() -> bool:
        rows = {r["resource_name"]: r for r in stacks.resources("p", "w")}
        return rows.get("wc", {}).get("resource_status") == "CREATE_IN_PROGRESS"

    stacks.run_engine(until=waiting, timeout=60)
    assert isinstance(run(act.resume(ctx, params, started.state)), Sleep)
    data = {"id": "web", "status": "SUCCESS", "data": "10.0.0.1"}
    signalled = run(action("convection.signal").run(
        ctx, {"stack": "w", "resource": "handle", "data": data}
    ))  # fmt: skip
    assert isinstance(signalled, Success) and isinstance(signalled.data["signal_id"], int)
    stacks.wait(started.state["stack_id"], timeout=60)
    assert run(act.resume(ctx, params, started.state)) == Success({"data": '{"web": "10.0.0.1"}'})


def test_without_a_service_the_actions_say_so() -> None:
    outcome = run(action("convection.stack.show").run(CTX, {"name": "s"}))
    assert outcome == Failure("convection.stack.show: no stack service is attached to this engine")


def test_stack_inputs_are_validated() -> None:
    diags = validate_input(action("convection.stack.create"), {"template": 1}, ("input",))
    messages = [d.message for d in diags.errors]
    assert "missing=['name']" in messages[0]
    assert messages[1].endswith("'template' must be string, not integer")
