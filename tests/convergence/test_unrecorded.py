"""A store that refuses a job's outcome: bounded retries, then a clear failure.

The store here is a real one (memory, SQLite or PostgreSQL) behind a thin
wrapper whose ``apply`` raises for one chosen change, as a full disk or a
broken constraint would. Before the fix the walker dropped the traversal,
took it up again a lease period later, failed again, and so on until the
stack's timeout: ``--wait`` hung for an hour.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from convection.kernel import RECORD_ATTEMPTS, UNRECORDED
from convection.store.api import AppendEvent, Change, Store

from .conftest import Env, Recorder

TWO = """
resources:
  a: {type: Test::Rec, properties: {value: one}}
  bad: {type: Test::Rec, properties: {value: {get_resource: a}}}
  after: {type: Test::Rec, properties: {value: {get_attr: [bad, value]}}}
"""


class RefusingStore:
    """Every store method passes through, but ``apply`` raises ``error``
    for any batch holding a change ``refuse`` picks."""

    def __init__(self, store: Store, refuse: Callable[[Change], bool], error: Exception) -> None:
        self._store = store
        self._refuse = refuse
        self._error = error
        self.refusals = 0

    def apply(self, changes: Sequence[Change], *, traversal_id: str | None = None) -> None:
        if any(self._refuse(c) for c in changes):
            self.refusals += 1
            raise self._error
        self._store.apply(changes, traversal_id=traversal_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def completed(name: str) -> Callable[[Change], bool]:
    """The event of ``name``'s completed create: part of its outcome."""
    return lambda c: (
        isinstance(c, AppendEvent) and c.resource_name == name and c.status == "COMPLETE"
    )


def refusing_env(store: Store, recorder: Recorder, refuse: Callable[[Change], bool]) -> Env:
    from convection.convergence import EngineConfig

    wrapped = RefusingStore(store, refuse, OSError("disk I/O error"))
    return Env(wrapped, recorder, EngineConfig(scan_seconds=0.05, lease_seconds=300))  # type: ignore[arg-type]


def test_a_refused_outcome_fails_the_stack_naming_the_error(
    store: Store, recorder: Recorder
) -> None:
    env = refusing_env(store, recorder, completed("bad"))
    env.create(TWO)
    shown = env.wait()  # a lease of 300 s: a retry that waited for it would time out
    assert shown["stack_status"] == "CREATE_FAILED"
    reason = shown["stack_status_reason"]
    assert reason.startswith("Resource CREATE failed: OSError: resources.bad: ")
    assert "could not be recorded (3 attempts): disk I/O error" in reason
    # A refused batch of several entries is retried entry by entry, so the
    # store may refuse more often than the job ran.
    assert env.stacks.store.refusals >= RECORD_ATTEMPTS  # type: ignore[attr-defined]
    assert recorder.ops("create") == [("create", "a")] + [("create", "bad")] * RECORD_ATTEMPTS
    resources = env.resources()
    assert resources["a"]["resource_status"] == "CREATE_COMPLETE"
    assert resources["bad"]["resource_status"] == "CREATE_FAILED"
    assert resources["after"]["resource_status"] == "INIT_COMPLETE"  # skipped
    nodes = {n.key: n for n in store.list_nodes(store.get_stack("p", "s").traversal_id)}  # type: ignore[union-attr]
    assert nodes["update:bad"].state == "failed"
    assert nodes["update:after"].state == "skipped"


def test_a_refusal_that_passes_is_retried_and_forgotten(store: Store, recorder: Recorder) -> None:
    refused: list[int] = []

    def once(change: Change) -> bool:
        if completed("bad")(change) and not refused:
            refused.append(1)
            return True
        return False

    env = refusing_env(store, recorder, once)
    env.create(TWO)
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert recorder.ops("create").count(("create", "bad")) == 2
    traversal = store.get_stack("p", "s").traversal_id  # type: ignore[union-attr]
    assert all(
        UNRECORDED not in n.payload for n in store.list_nodes(traversal) if n.state != "done"
    )


@pytest.mark.parametrize("attempts", [RECORD_ATTEMPTS])
def test_even_the_failure_cannot_be_written_about_the_resource(
    store: Store, recorder: Recorder, attempts: int
) -> None:
    """When the store refuses every write about the resource, the node and
    the stack still fail (without the resource's own state)."""
    env = refusing_env(
        store,
        recorder,
        lambda c: isinstance(c, AppendEvent)
        and c.resource_name == "bad"
        and c.status != "IN_PROGRESS",
    )
    env.create(TWO)
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_FAILED"
    assert f"could not be recorded ({attempts} attempts)" in shown["stack_status_reason"]
