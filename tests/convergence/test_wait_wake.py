"""A signal's wake (``engine.signal_wake``): it makes a node sleeping on a
poll run now, puts itself off while the node runs, and does nothing to any
other node (real stores: memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import time

from convection.convergence import signal_wake
from convection.store.api import AddTimer, DeleteTimers, UpdateNode

from .conftest import Env

TWO = """
resources:
  a: {type: OS::Heat::None}
  b: {type: OS::Heat::None, depends_on: [a]}
"""


def traversal(env: Env) -> str:
    stack = env.store.get_stack("p", "s")
    assert stack is not None and stack.traversal_id is not None
    return stack.traversal_id


def test_fire_by_node_state(env: Env) -> None:
    env.create(TWO)  # no engine runs: a is ready, b waits for it
    tid = traversal(env)
    keys = {n.resource_name: n.key for n in env.store.list_nodes(tid)}
    a, b = keys["a"], keys["b"]
    assert signal_wake.fire(env.store, tid, b) == [DeleteTimers(tid, b)]  # waiting
    assert signal_wake.fire(env.store, tid, a) == [DeleteTimers(tid, a)]  # ready anyway
    assert signal_wake.fire(env.store, tid, "gone") == [DeleteTimers(tid, "gone")]

    env.store.apply([UpdateNode(tid, a, {"state": "running"})])
    changes = signal_wake.fire(env.store, tid, a)
    assert changes[0] == DeleteTimers(tid, a)
    later = changes[1]
    assert isinstance(later, AddTimer) and later.purpose == "signal:1"
    assert signal_wake.is_wake(later.purpose)
    assert isinstance(signal_wake.fire(env.store, tid, a, "signal:7")[1], AddTimer)
    assert signal_wake.fire(env.store, tid, a, "signal:8") == [DeleteTimers(tid, a)]  # gives up

    parked = {"state": "sleeping", "payload": {"hook": "pre-create"}}
    env.store.apply([UpdateNode(tid, a, parked)])
    assert signal_wake.fire(env.store, tid, a) == [DeleteTimers(tid, a)]  # a hook's, not ours

    env.store.apply([UpdateNode(tid, a, {"state": "sleeping", "payload": {}})])
    assert signal_wake.fire(env.store, tid, a) == [
        DeleteTimers(tid, a),
        UpdateNode(tid, a, {"state": "ready"}),
    ]
    # A signal wakes the sleeping node only (b still waits for a).
    assert [(w.node_key, w.purpose) for w in signal_wake.signal_wakes(env.store, tid)] == [
        (a, signal_wake.SIGNAL_PURPOSE)
    ]


WITH_SLOW = """
resources:
  slow: {type: OS::Heat::TestResource, properties: {wait_secs: 3}}
  handle: {type: OS::Heat::WaitConditionHandle}
  wc:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, timeout: 600}
"""


def test_wake_is_harmless_to_other_sleepers(env: Env) -> None:
    started = time.monotonic()
    env.create(WITH_SLOW)
    env.run_until(lambda: env.resource_status("wc") == "CREATE_IN_PROGRESS")
    env.stacks.signal("p", "s", "handle", {})  # wakes slow too: it polls, and sleeps on
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert time.monotonic() - started >= 3  # slow still took its time
    done = [
        e["resource_name"]
        for e in env.stacks.events("p", "s")
        if e["resource_status"] == "CREATE_COMPLETE"
    ]
    assert done.index("wc") < done.index("slow")  # the signal was acted on at once
