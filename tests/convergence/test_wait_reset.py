"""Deleting a wait condition empties its handle's signals (issue 4).

Heat's ``HeatWaitCondition.handle_delete`` calls ``handle.metadata_set({})``
(``heat/engine/resources/openstack/heat/wait_condition.py``; the AWS type
inherits it), so a wait condition removed and later added back on the same
handle waits for new signals. Here the wait condition asks with
``ctx.reset_peer`` and the handle's own plugin forgets them; the handle's
signal token is kept. Real engine and stores (memory, SQLite, PostgreSQL).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from convection.convergence import EngineConfig
from convection.resources import signal_urls
from convection.resources.heat.wait_condition_handle import SIGNALS
from convection.store.api import ConsumeSignal, ResourceRecord, Store, UpdateResource

from .conftest import Env

WITH_WC = """
parameters:
  timeout: {type: number, default: 60}
resources:
  handle: {type: OS::Heat::WaitConditionHandle}
  wc:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: handle}
      timeout: {get_param: timeout}
outputs:
  data: {value: {get_attr: [wc, data]}}
"""

WITHOUT_WC = """
parameters:
  timeout: {type: number, default: 60}
resources:
  handle: {type: OS::Heat::WaitConditionHandle}
"""

AWS_WITH_WC = """
resources:
  handle: {type: AWS::CloudFormation::WaitConditionHandle}
  wc:
    type: AWS::CloudFormation::WaitCondition
    properties: {Handle: {get_resource: handle}, Timeout: 60}
"""

AWS_WITHOUT_WC = """
resources:
  handle: {type: AWS::CloudFormation::WaitConditionHandle}
"""


def handle_row(env: Env) -> ResourceRecord:
    store: Store = env.store
    stack = store.get_stack("p", "s")
    assert stack is not None
    return _row(store, stack.id)


def waiting(env: Env) -> Callable[[], bool]:
    def check() -> bool:
        found = env.resources()
        return "wc" in found and found["wc"]["resource_status"].endswith("_IN_PROGRESS")

    return check


def output(env: Env, key: str) -> Any:
    outputs = env.stacks.show("p", "s")["outputs"]
    return next(o["output_value"] for o in outputs if o["output_key"] == key)


def completed(env: Env, signal: dict[str, Any], template: str) -> None:
    """Create handle + wait condition and complete it with ``signal``."""
    env.create(template)
    env.run_until(waiting(env))
    env.stacks.signal("p", "s", "handle", signal)
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert handle_row(env).data.get(SIGNALS)


def polls(env: Env, count: int) -> None:
    """Let the engine run ``count`` turns of its loop."""
    seen: list[int] = []

    def enough() -> bool:
        seen.append(1)
        return len(seen) >= count

    env.run_until(enough)


def completed_then_removed(env: Env, signal: dict[str, Any], first: str, second: str) -> None:
    """:func:`completed`, then update to ``second``, without the wait condition."""
    completed(env, signal, first)
    env.update(second)
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert "wc" not in env.resources()


def test_a_wait_condition_added_back_waits_for_new_signals(env: Env) -> None:
    completed_then_removed(env, {"data": "old"}, WITH_WC, WITHOUT_WC)
    assert SIGNALS not in handle_row(env).data  # Heat: metadata_set({})
    env.update(WITH_WC)
    env.run_until(waiting(env))
    polls(env, 5)  # the old signal must not count
    assert env.resource_status("wc") == "CREATE_IN_PROGRESS"
    env.stacks.signal("p", "s", "handle", {"data": "new"})
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert json.loads(output(env, "data")) == {"1": "new"}  # ids count from 1 again


def test_a_wait_condition_added_back_times_out_without_a_new_signal(env: Env) -> None:
    completed_then_removed(env, {"data": "old"}, WITH_WC, WITHOUT_WC)
    env.update(WITH_WC, parameters={"timeout": 1})
    assert env.wait()["stack_status"] == "UPDATE_FAILED"
    reason = env.resources()["wc"]["resource_status_reason"]
    assert reason == "WaitConditionTimeout: resources.wc: 0 of 1 received"


def test_the_aws_wait_condition_empties_its_handle_too(memory_env: Env) -> None:
    env = memory_env
    signal = {"Status": "SUCCESS", "Reason": "up", "UniqueId": "a", "Data": "old"}
    completed_then_removed(env, signal, AWS_WITH_WC, AWS_WITHOUT_WC)
    assert SIGNALS not in handle_row(env).data
    env.update(AWS_WITH_WC)
    env.run_until(waiting(env))
    assert env.resource_status("wc") == "CREATE_IN_PROGRESS"
    env.stacks.signal("p", "s", "handle", {**signal, "Data": "new"})
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"


def test_the_signal_token_survives_the_reset(store: Store, recorder: Any) -> None:
    """The URL a booted machine was given keeps signalling the handle."""
    env = Env(store, recorder, EngineConfig(scan_seconds=0.05, api_url="http://127.0.0.1:8004"))
    env.create(WITH_WC)
    env.run_until(waiting(env))
    before = handle_row(env).data.get(signal_urls.DATA_KEY)
    assert before is not None
    env.stacks.signal("p", "s", "handle", {})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    env.update(WITHOUT_WC)
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    data = handle_row(env).data
    assert SIGNALS not in data
    assert data.get(signal_urls.DATA_KEY) == before


def test_a_stack_delete_still_works(env: Env) -> None:
    env.create(WITH_WC)
    env.run_until(waiting(env))
    env.stacks.signal("p", "s", "handle", {})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    env.stacks.delete("p", "s")
    assert env.wait()["stack_status"] == "DELETE_COMPLETE"


def test_a_signal_delivered_across_the_reset_is_reset_too(
    env: Env, store_factory: Callable[[], Store]
) -> None:
    """A delivery that read the handle before the reset and wrote after it
    would bring the old signals back; the reset waits for it and resets
    again."""
    completed(env, {"data": "old"}, WITH_WC)
    stale = dict(handle_row(env).data)
    stack = env.store.get_stack("p", "s")
    assert stack is not None
    racing = env.store.add_signal(stack.id, "handle", {"data": "late"})
    other = store_factory()
    errors: list[BaseException] = []

    def late_delivery() -> None:
        try:
            deadline = time.monotonic() + 30
            while SIGNALS in _row(other, stack.id).data and time.monotonic() < deadline:
                time.sleep(0.005)
            row = _row(other, stack.id)
            other.apply([UpdateResource(row.id, {"data": stale}), ConsumeSignal(racing)])
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    sender = threading.Thread(target=late_delivery)
    sender.start()
    env.update(WITHOUT_WC)
    try:
        assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    finally:
        sender.join()
    assert errors == []
    assert SIGNALS not in handle_row(env).data


def _row(store: Store, stack_id: str) -> ResourceRecord:
    return next(r for r in store.list_resources(stack_id, current_only=True) if r.name == "handle")
