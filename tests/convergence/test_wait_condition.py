"""Wait conditions on a real engine and store (memory, SQLite, PostgreSQL).

Expectations follow Heat: ``heat/engine/resources/openstack/heat/
wait_condition.py``, ``heat/engine/resources/wait_condition.py`` and
``heat_integrationtests/functional/test_waitcondition.py``. A waiting
condition holds no worker; a signal sent while no engine runs is kept and
acted on by the next engine; a restart mid-wait loses nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from convection.common.errors import Conflict, InvalidInput, NotFound
from convection.convergence import EngineConfig
from convection.model.compiler import StackInputs
from convection.service import signals as stack_signals
from convection.service.stacks import Stacks, StacksConfig
from convection.store.api import Store

from .conftest import Env

WAIT = """
parameters:
  count: {type: number, default: 1}
  timeout: {type: number, default: 60}
resources:
  handle: {type: OS::Heat::WaitConditionHandle}
  wc:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: handle}
      count: {get_param: count}
      timeout: {get_param: timeout}
outputs:
  data: {value: {get_attr: [wc, data]}}
"""


def waiting(env: Env, name: str = "wc") -> Callable[[], bool]:
    def check() -> bool:
        found = env.resources()
        return name in found and found[name]["resource_status"] == "CREATE_IN_PROGRESS"

    return check


def turns(env: Env, count: int) -> list[int]:
    """Run ``count`` turns of the engine's loop; the running jobs at each."""
    seen: list[int] = []

    def until() -> bool:
        seen.append(env.stacks.engine.executor.running)
        return len(seen) >= count

    env.run_until(until)
    return seen


def reason(env: Env, name: str) -> str:
    return str(env.resources()[name]["resource_status_reason"])


def output(env: Env, key: str) -> Any:
    outputs = env.stacks.show("p", "s")["outputs"]
    return next(o["output_value"] for o in outputs if o["output_key"] == key)


def test_count_signals_complete_it_and_data_maps_ids(env: Env) -> None:
    env.create(WAIT, parameters={"count": 3})
    env.run_until(waiting(env))
    assert set(turns(env, 5)) == {0}  # the wait holds no worker
    env.stacks.signal("p", "s", "handle", {})
    env.stacks.signal("p", "s", "handle", {"id": "web", "data": {"ip": "10.0.0.1"}})
    turns(env, 3)
    assert env.resource_status("wc") == "CREATE_IN_PROGRESS"  # 2 of 3
    env.stacks.signal("p", "s", "handle", {"status": "SUCCESS", "reason": "third", "data": "x"})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    data = output(env, "data")
    assert isinstance(data, str)  # Heat's attribute is a JSON string
    assert json.loads(data) == {"1": None, "web": {"ip": "10.0.0.1"}, "3": "x"}
    assert data == '{"1": null, "web": {"ip": "10.0.0.1"}, "3": "x"}'


def test_failure_signal_fails_with_its_reason(env: Env) -> None:
    env.create(WAIT, parameters={"count": 2})
    env.run_until(waiting(env))
    env.stacks.signal("p", "s", "handle", {})
    env.stacks.signal("p", "s", "handle", {"status": "FAILURE", "reason": "disk full"})
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_FAILED"
    assert reason(env, "wc") == "WaitConditionFailure: resources.wc: disk full"
    assert env.resource_status("wc") == "CREATE_FAILED"


def test_timeout_says_how_many_arrived(env: Env) -> None:
    env.create(WAIT, parameters={"count": 2, "timeout": 1})
    env.run_until(waiting(env))
    env.stacks.signal("p", "s", "handle", {"reason": "one is up"})
    started = time.monotonic()
    assert env.wait()["stack_status"] == "CREATE_FAILED"
    assert time.monotonic() - started < 10
    expected = "WaitConditionTimeout: resources.wc: 1 of 2 received - one is up"
    assert reason(env, "wc") == expected


def test_timeout_with_nothing_received(env: Env) -> None:
    env.create(WAIT, parameters={"timeout": 1})
    assert env.wait()["stack_status"] == "CREATE_FAILED"
    assert reason(env, "wc") == "WaitConditionTimeout: resources.wc: 0 of 1 received"


def test_signal_before_the_waiter_starts(env: Env) -> None:
    template = WAIT.replace(
        "    type: OS::Heat::WaitCondition\n",
        "    type: OS::Heat::WaitCondition\n    depends_on: [gate]\n",
    ).replace(
        "resources:\n",
        "resources:\n  gate: {type: OS::Heat::TestResource, properties: {wait_secs: 1}}\n",
    )
    env.create(template)
    env.run_until(lambda: env.resource_status("handle") == "CREATE_COMPLETE")
    assert env.resource_status("wc") == "INIT_COMPLETE"
    env.stacks.signal("p", "s", "handle", {"data": "early"})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert json.loads(output(env, "data")) == {"1": "early"}


def test_restart_mid_wait_loses_nothing(
    env: Env, store_factory: Callable[[], Store], engine_config: EngineConfig
) -> None:
    env.create(WAIT, parameters={"count": 2, "timeout": 600})
    env.run_until(waiting(env))
    env.stacks.signal("p", "s", "handle", {"data": 1})
    deadline = env.store.get_stack("p", "s")
    assert deadline is not None
    before = _wc_row(env.store, deadline.id).data["wait"]
    # A new process: its own store connection and engine; the old one is gone.
    other = Stacks(store_factory(), env.registry, config=StacksConfig(engine=engine_config))
    other.signal("p", "s", "handle", {"data": 2})  # while no engine runs
    assert other.wait(deadline.id, timeout=30)["stack_status"] == "CREATE_COMPLETE"
    assert _wc_row(other.store, deadline.id).data["wait"] == before  # same deadline
    outputs = other.show("p", "s")["outputs"]
    assert json.loads(outputs[0]["output_value"]) == {"1": 1, "2": 2}


def _wc_row(store: Store, stack_id: str) -> Any:
    return next(r for r in store.list_resources(stack_id, current_only=True) if r.name == "wc")


def test_a_signal_wakes_the_running_engine_at_once(
    env: Env, store_factory: Callable[[], Store], store_url: str
) -> None:
    if store_url == "memory://":
        pytest.skip("needs a second process's store")
    env.create(WAIT, parameters={"timeout": 600})
    env.run_until(waiting(env))
    other = Stacks(store_factory(), env.registry)
    sender = threading.Timer(0.3, lambda: other.signal("p", "s", "handle", {}))
    started = time.monotonic()
    sender.start()
    try:
        assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    finally:
        sender.join()
    assert time.monotonic() - started < 5  # not the 600 s poll timer


def test_invalid_signals_are_refused_and_not_stored(env: Env) -> None:
    env.create(WAIT)
    env.run_until(waiting(env))
    with pytest.raises(InvalidInput, match=r"resources\.handle: .*'DONE' is not one of"):
        env.stacks.signal("p", "s", "handle", {"status": "DONE"})
    with pytest.raises(InvalidInput, match=r"resources\.handle: .*unknown keys \['colour'\]"):
        env.stacks.signal("p", "s", "handle", {"colour": "red"})
    with pytest.raises(Conflict, match="does not accept signals"):
        env.stacks.signal("p", "s", "wc", {})
    stack = env.store.get_stack("p", "s")
    assert stack is not None
    handle = next(r for r in env.store.list_resources(stack.id) if r.name == "handle")
    assert handle.data.get("signals") is None
    env.stacks.signal("p", "s", "handle", {})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"


def test_a_reused_id_overwrites_its_signal(env: Env) -> None:
    env.create(WAIT, parameters={"count": 2, "timeout": 2})
    env.run_until(waiting(env))
    env.stacks.signal("p", "s", "handle", {"id": "a", "status": "FAILURE", "reason": "r"})
    env.stacks.signal("p", "s", "handle", {"id": "a", "data": "fixed"})
    # The FAILURE was replaced, and one id counts once: 1 of 2, then timeout.
    assert env.wait()["stack_status"] == "CREATE_FAILED"
    assert reason(env, "wc").startswith("WaitConditionTimeout: resources.wc: 1 of 2 received")


UPDATE_HANDLE = """
parameters:
  note: {type: string, default: one}
resources:
  handle: {type: OS::Heat::UpdateWaitConditionHandle}
  wc:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, timeout: 60}
  noted: {type: OS::Heat::Value, properties: {value: {get_param: note}}}
outputs:
  data: {value: {get_attr: [wc, data]}}
"""


def last_event(env: Env, name: str) -> str:
    events = env.stacks.events("p", "s", resource_name=name)
    return str(events[-1]["resource_status"]) if events else ""


def aws_signal(unique: str, data: str) -> dict[str, str]:
    return {"Status": "SUCCESS", "Reason": "up", "UniqueId": unique, "Data": data}


def test_update_handle_starts_over_on_every_update(env: Env) -> None:
    env.create(UPDATE_HANDLE)
    env.run_until(waiting(env))
    env.stacks.signal("p", "s", "handle", aws_signal("n1", "first"))
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    old_handle = env.resources()["handle"]["physical_resource_id"]
    # An update that changes nothing of the handle still replaces it, and
    # the wait condition waits again, for a signal to the new handle.
    env.update(UPDATE_HANDLE, parameters={"note": "two"})
    env.run_until(lambda: last_event(env, "wc") == "CREATE_IN_PROGRESS")  # the new one
    assert env.resources()["handle"]["physical_resource_id"] != old_handle
    env.stacks.signal("p", "s", "handle", aws_signal("n1", "second"))
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert json.loads(output(env, "data")) == {"n1": "second"}


def test_aws_handle_needs_all_four_keys(env: Env) -> None:
    env.create(UPDATE_HANDLE)
    env.run_until(waiting(env))
    with pytest.raises(InvalidInput, match=r"missing keys \['Data', 'Reason', 'UniqueId'\]"):
        env.stacks.signal("p", "s", "handle", {"Status": "SUCCESS"})


def test_handle_that_is_not_a_handle_fails_clearly(env: Env) -> None:
    env.create(
        """
        resources:
          other: {type: OS::Heat::None}
          wc:
            type: OS::Heat::WaitCondition
            properties: {handle: {get_resource: other}, timeout: 10}
        """
    )
    assert env.wait()["stack_status"] == "CREATE_FAILED"
    assert reason(env, "wc") == (
        "InvalidHandle: resources.wc: other is not a valid wait condition handle."
    )


#: heat_integrationtests/functional/test_waitcondition.py, unchanged (the
#: queue it posts to is Zaqar there; here the same body goes to Stacks.signal).
HEAT_FUNCTIONAL = """\
heat_template_version: "2013-05-23"

resources:
  wait_condition:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: wait_handle}
      timeout: 120
  wait_handle:
    type: OS::Heat::WaitConditionHandle
    properties:
      signal_transport: ZAQAR_SIGNAL

outputs:
  wait_data:
   value: {'Fn::Select': ['data_id', {get_attr: [wait_condition, data]}]}
"""


def test_heat_functional_template(env: Env) -> None:
    env.stacks.create("p", "s", StackInputs.from_text(HEAT_FUNCTIONAL))
    env.run_until(lambda: env.resource_status("wait_handle") == "CREATE_COMPLETE")
    env.stacks.signal("p", "s", "wait_handle", {"data": "here!", "id": "data_id"})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert output(env, "wait_data") == "here!"


def test_concurrent_signals_are_all_kept(
    env: Env, store_factory: Callable[[], Store], engine_config: EngineConfig
) -> None:
    """Senders in parallel, each with its own store connection (as separate
    processes): deliveries to one resource take turns, so none is lost."""
    env.create(WAIT, parameters={"count": 24, "timeout": 600})
    env.run_until(waiting(env))
    errors: list[BaseException] = []

    def sender(i: int) -> None:
        service = Stacks(store_factory(), env.registry, config=StacksConfig(engine=engine_config))
        try:
            for j in range(4):
                service.signal("p", "s", "handle", {"id": f"{i}-{j}", "data": i * 10 + j})
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=sender, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    data = json.loads(output(env, "data"))
    assert data == {f"{i}-{j}": i * 10 + j for i in range(6) for j in range(4)}


def test_a_signal_whose_sender_died_is_delivered_by_the_next(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stack_signals, "TAKEOVER_SECONDS", 0.2)
    env.create(WAIT, parameters={"count": 2})
    env.run_until(waiting(env))
    stack = env.store.get_stack("p", "s")
    assert stack is not None
    # Stored, then its sender was killed before delivering it.
    env.store.add_signal(stack.id, "handle", {"id": "orphan", "data": "a"})
    env.stacks.signal("p", "s", "handle", {"id": "next", "data": "b"})
    assert env.store.pending_signals(stack.id, "handle") == []
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert json.loads(output(env, "data")) == {"orphan": "a", "next": "b"}


def test_a_refused_signal_holds_up_no_other(env: Env) -> None:
    env.create(WAIT)
    env.run_until(waiting(env))
    with pytest.raises(InvalidInput):
        env.stacks.signal("p", "s", "handle", {"status": "NOPE"})
    started = time.monotonic()
    env.stacks.signal("p", "s", "handle", {})
    assert time.monotonic() - started < stack_signals.TAKEOVER_SECONDS / 2
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"


def test_count_updates_in_place_and_waits_again(env: Env) -> None:
    env.create(WAIT)
    env.run_until(waiting(env))
    env.stacks.signal("p", "s", "handle", {"data": "a"})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    env.update(WAIT, parameters={"count": 2})  # count is update_allowed: no replace
    env.run_until(lambda: env.resource_status("wc") == "UPDATE_IN_PROGRESS")
    env.stacks.signal("p", "s", "handle", {"data": "b"})
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert env.resource_status("wc") == "UPDATE_COMPLETE"
    assert json.loads(output(env, "data")) == {"1": "a", "2": "b"}


def test_delete_while_waiting(env: Env) -> None:
    env.create(WAIT, parameters={"timeout": 600})
    env.run_until(waiting(env))
    env.stacks.delete("p", "s")
    assert env.wait()["stack_status"] == "DELETE_COMPLETE"
    with pytest.raises(NotFound):
        env.stacks.signal("p", "s", "handle", {})
