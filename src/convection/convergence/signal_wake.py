"""Waking sleeping nodes when a signal arrives.

A resource that waits for a signal (a wait condition) sleeps on a timer
row like any poll, holding no worker. A signal should not have to wait for
that timer: ``Stacks.signal`` writes a *wake timer*, due now, for each node
of the stack's traversal that sleeps on a poll, in the same way a hook
clear does (``engine.hooks``). It needs no engine; whichever engine runs
next fires it.

Firing a wake must be harmless whatever the node does by then:

* sleeping on a poll: it is made ready at once (its poll timer goes), and
  its plugin polls, reading the new signal;
* running: its poll may have read the store before the signal was stored,
  so the wake is put off a moment and fired again once the node has
  recorded its outcome (then usually sleeping); a few times at most, as a
  node that runs for long is not in a poll;
* anything else (done, failed, waiting for predecessors, parked at a hook,
  gone): nothing to do; the wake is dropped. A node that has not started
  polls when it starts, and reads the signal then.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from convection.convergence.hooks import parked
from convection.kernel import UNREAD
from convection.store import AddTimer, Change, DeleteTimers, NodeRecord, Store, UpdateNode

#: Timer purpose of a signal's wake; a put-off one is ``signal:<n>``.
SIGNAL_PURPOSE = "signal"
#: How long a wake of a running node is put off, and how often at most
#: (a poll takes milliseconds; a node running for longer is not polling,
#: and reads the signal at its next poll anyway).
RETRY = timedelta(seconds=0.25)
RETRIES = 8


def is_wake(purpose: str) -> bool:
    """Whether a timer's ``purpose`` is a signal's wake."""
    return purpose == SIGNAL_PURPOSE or purpose.startswith(SIGNAL_PURPOSE + ":")


def _retries(purpose: str) -> int:
    _, _, count = purpose.partition(":")
    return int(count) if count.isdigit() else 0


def polling(node: NodeRecord) -> bool:
    """Whether ``node`` sleeps on a poll timer (not at a hook)."""
    return node.state == "sleeping" and not parked(node)


def signal_wakes(store: Store, traversal_id: str) -> list[Change]:
    """A due-now wake for every node of the traversal sleeping on a poll."""
    now = datetime.now(UTC)
    return [
        AddTimer(traversal_id, n.key, now, purpose=SIGNAL_PURPOSE)
        for n in store.list_nodes(traversal_id)
        if polling(n) or n.state == "running"
    ]


def fire(
    store: Store,
    traversal_id: str,
    key: str,
    purpose: str = SIGNAL_PURPOSE,
    *,
    node: NodeRecord | None = UNREAD,
) -> list[Change]:
    """The changes a due wake (timer ``purpose``) makes (see the module
    docstring). ``node``: the node as the caller just read it (None: gone)."""
    if node is UNREAD:
        node = store.get_node(traversal_id, key)
    changes: list[Change] = [DeleteTimers(traversal_id, key)]
    if node is None:
        return changes
    if polling(node):
        changes.append(UpdateNode(traversal_id, key, {"state": "ready"}))
    elif node.state == "running" and _retries(purpose) < RETRIES:
        later = datetime.now(UTC) + RETRY
        again = f"{SIGNAL_PURPOSE}:{_retries(purpose) + 1}"
        changes.append(AddTimer(traversal_id, key, later, purpose=again))
    return changes
