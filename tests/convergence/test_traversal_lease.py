"""Two live engines sharing a store: each traversal is run by one of them.

Each engine counts and sees only its own commits to a traversal, so two
running one traversal would never finish it. Here two real ``Engine``
objects, each on its own store connection (SQLite, PostgreSQL; memory
shares one), run the same stacks at once; a lapsed lease is taken up; an
engine whose lease was taken drops the run. See ``engine.leases``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from convection.convergence import EngineConfig
from convection.store.api import Store

from .conftest import Env, Recorder

CHAIN = """
resources:
  a: {type: Test::Rec, properties: {value: first}}
  b: {type: Test::Rec, properties: {value: {get_attr: [a, value]}}}
  c: {type: Test::Rec, properties: {value: {get_attr: [b, value]}}}
  d: {type: Test::Rec, properties: {value: {get_attr: [a, value]}}}
outputs:
  last: {value: {get_attr: [c, value]}}
"""

STACKS = ("s0", "s1", "s2", "s3")


def _config(**kw: Any) -> EngineConfig:
    return EngineConfig(scan_seconds=0.05, **kw)


def _traversal_id(store: Store, name: str = "s") -> str:
    stack = store.get_stack("p", name)
    assert stack is not None and stack.traversal_id is not None
    return stack.traversal_id


async def _both(a: Env, b: Env) -> None:
    """Both engines' until-idle loops, at once, on one event loop."""
    work = asyncio.gather(a.stacks.engine.run(), b.stacks.engine.run())
    await asyncio.wait_for(work, 30)


def test_two_engines_run_each_stack_once(
    store_factory: Callable[[], Store], recorder: Recorder
) -> None:
    recorder.hold = 0.05  # jobs overlap: both engines are busy at once
    # Each takes only some of the ready nodes, and short leases make both
    # look for ready nodes in every traversal they run, often.
    config = _config(concurrency=2, lease_seconds=0.3)
    a = Env(store_factory(), recorder, config)
    b = Env(store_factory(), recorder, replace(config, owner="engine-b"))

    for name in STACKS:
        a.create(CHAIN, name=name)

    asyncio.run(_both(a, b))  # both loops end: nothing is left active

    assert a.store.active_traversals() == []
    for name in STACKS:
        shown = b.stacks.show("p", name)
        assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
        assert {o["output_key"]: o["output_value"] for o in shown["outputs"]} == {"last": "first"}
        traversal = a.store.get_traversal(_traversal_id(a.store, name))
        assert traversal is not None and traversal.lease_until is None  # released
    creates = recorder.ops("create")
    assert sorted(creates) == sorted(("create", r) for r in "abcd" for _ in STACKS)
    assert not a.stacks.engine.runs and not b.stacks.engine.runs


def test_only_one_engine_takes_a_traversal(store_factory: Callable[[], Store]) -> None:
    """The take is atomic: the second engine's conditional update fails
    until the first's lease lapses or is released."""
    a = Env(store_factory(), Recorder(), _config())
    other = store_factory()
    a.create(CHAIN)
    tid = _traversal_id(a.store)
    now = datetime.now(UTC)
    soon = now + timedelta(seconds=30)
    assert a.store.take_traversal(tid, "engine-a", soon, now)
    assert not other.take_traversal(tid, "engine-b", soon, now)
    assert a.store.take_traversal(tid, "engine-a", soon, now)  # its own: a renewal
    assert other.renew_traversals([tid], "engine-b", soon) == set()
    assert other.take_traversal(tid, "engine-b", soon, soon + timedelta(seconds=1))  # lapsed
    assert a.store.renew_traversals([tid], "engine-a", soon) == set()  # a lost it
    other.release_traversals([tid], "engine-a")  # not a's to release
    assert not a.store.take_traversal(tid, "engine-a", soon, now)
    other.release_traversals([tid], "engine-b")
    assert a.store.take_traversal(tid, "engine-a", soon, now)


def test_a_lapsed_lease_is_taken_up(store_factory: Callable[[], Store], recorder: Recorder) -> None:
    """Engine A stops without releasing (its run is cancelled mid-job): B
    leaves the traversal alone while A's lease lasts, then finishes it."""
    recorder.hold = 0.6
    a = Env(store_factory(), recorder, _config(lease_seconds=1.5))
    b = Env(store_factory(), recorder, _config(lease_seconds=1.5))
    a.create(CHAIN)
    tid = _traversal_id(a.store)
    with pytest.raises(TimeoutError):
        a.stacks.run_engine(timeout=0.3)  # A dies holding its lease
    held = a.store.get_traversal(tid)
    assert held is not None and held.lease_owner == a.stacks.engine.config.owner

    started = time.monotonic()
    b.stacks.run_engine(until=lambda: time.monotonic() - started > 0.4, timeout=10)
    assert not b.stacks.engine.runs  # A's lease still holds
    assert recorder.ops("create") == [("create", "a")]  # A's, cut short

    shown = b.wait()  # waits for the lapse, takes the traversal up, finishes it
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    after = b.store.get_traversal(tid)
    assert after is not None and after.lease_owner == b.stacks.engine.config.owner
    assert sorted(recorder.ops("create")) == [("create", n) for n in "aabcd"]  # a re-run


def test_an_engine_that_lost_its_lease_drops_the_run(
    store_factory: Callable[[], Store], recorder: Recorder
) -> None:
    """A held up past its lease (here: B takes the traversal as if it had
    lapsed): A notices at its next renewal and stops working on it."""
    a = Env(store_factory(), recorder, _config())
    b = Env(store_factory(), recorder, _config())
    a.create(CHAIN)
    tid = _traversal_id(a.store)
    engine_a = a.stacks.engine
    engine_a.start()
    assert tid in engine_a.runs
    later = datetime.now(UTC) + timedelta(minutes=5)  # A's lease has lapsed by then
    owner_b = b.stacks.engine.config.owner
    assert b.store.take_traversal(tid, owner_b, later + timedelta(minutes=1), later)

    engine_a.kernel._renew_leases(datetime.now(UTC))
    engine_a.kernel._finish_ready()
    assert tid not in engine_a.runs  # dropped, not finished by A
    assert recorder.ops("create") == []

    asyncio.run(_both(a, b))
    assert b.status() == ("CREATE_COMPLETE", "Stack CREATE completed successfully")
    assert sorted(recorder.ops("create")) == [("create", n) for n in "abcd"]
