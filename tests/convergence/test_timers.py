"""Two live engines sharing a store: a due timer is fired by exactly one.

The race: engine B reads a due poll timer; engine A fires the same timer,
claims the node and starts polling; B then fires its stale copy. Were B's
firing applied, the running node would be ready again and a second poll
would run at the same time. Both engines here are real ``Engine`` objects,
each on its own store connection (SQLite, PostgreSQL; memory shares one).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from convection.convergence import EngineConfig
from convection.store.api import NodeRecord, Store

from .conftest import Env, Recorder

SLEEPER = """
resources:
  w: {type: Test::Rec, properties: {wait: 0.3}}
"""


def _node(store: Store, stack_id: str) -> NodeRecord:
    stack = store.get_stack_by_id(stack_id)
    assert stack is not None and stack.traversal_id is not None
    (node,) = store.list_nodes(stack.traversal_id)
    return node


def test_a_poll_timer_read_by_two_engines_fires_once(
    store_factory: Callable[[], Store], recorder: Recorder
) -> None:
    config = EngineConfig(scan_seconds=0.05)
    a = Env(store_factory(), recorder, config)
    b = Env(store_factory(), Recorder(), EngineConfig(scan_seconds=0.05))
    stack_id = a.create(SLEEPER)
    a.run_until(lambda: _node(a.store, stack_id).state == "sleeping")
    time.sleep(0.35)  # the poll timer is due
    engine_a, engine_b = a.stacks.engine, b.stacks.engine
    node = _node(a.store, stack_id)
    lease = datetime.now(UTC) - timedelta(seconds=1)  # lapses at once: see the end

    async def race() -> Any:
        engine_a.start()
        engine_b.start()
        now = datetime.now(UTC)
        stale = b.store.due_timers(now, 100)  # B reads the timer...
        assert [t.node_key for t in stale] == [node.key]
        engine_a.timers.fire(now, engine_a.runs, set())  # ...A fires it
        claimed = a.store.claim_ready(node.traversal_id, config.owner, 1, lease)
        assert [n.key for n in claimed] == [node.key]  # and A's poll is running
        engine_b.timers.act(stale, engine_b.runs, set())  # B fires its copy late
        engine_b.journal.flush()
        await asyncio.sleep(0)

    asyncio.run(race())
    after = _node(b.store, stack_id)
    assert (after.state, after.lease_owner, after.attempt) == ("running", config.owner, 2)
    assert b.store.due_timers(datetime.now(UTC) + timedelta(days=1), 100) == []

    # The stack still completes: A's claim lapses, the node is reclaimed.
    shown = a.wait()
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert recorder.ops("create") == [("create", "w")]
