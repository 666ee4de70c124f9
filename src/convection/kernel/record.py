"""What a job's outcome writes of its node: shared by the engine, which
records the jobs it runs itself, and by a worker, which records the jobs
it runs for an engine elsewhere. Both must write the same rows for the
same outcome, or a node's end would depend on where its job ran."""

from __future__ import annotations

from convection.kernel.outcome import Outcome
from convection.kernel.ports import KernelStore
from convection.kernel.run import Run
from convection.store import AddTimer, Change, NodeRecord, ReleaseSuccessors, UpdateNode

#: The payload key counting a node's refused outcomes (``Kernel._unrecorded``).
UNRECORDED = "unrecorded"


def bookkeeping(
    store: KernelStore, run: Run, node: NodeRecord, outcome: Outcome
) -> tuple[list[Change], list[str]]:
    """The node's own changes for ``outcome``, and the nodes a failure skips."""
    progress = list(outcome.progress)
    key = node.key
    if outcome.state == "sleeping":
        assert outcome.due_at is not None
        payload = {k: v for k, v in node.payload.items() if k != UNRECORDED}
        payload["progress"] = outcome.resume
        fields = {"state": "sleeping", "lease_owner": None, "lease_until": None}
        progress.append(UpdateNode(run.id, key, {**fields, "payload": payload}))
        progress.append(AddTimer(run.id, key, outcome.due_at))
    elif outcome.state == "done":
        progress.append(UpdateNode(run.id, key, {"state": "done", "lease_owner": None}))
        released = tuple(s for s in node.successors if s not in run.tally.skipped)
        if released:
            progress.append(ReleaseSuccessors(run.id, released))
    elif outcome.state == "failed":
        progress.append(UpdateNode(run.id, key, {"state": "failed", "lease_owner": None}))
        skipped = downstream(store, run, node)
        progress.extend(UpdateNode(run.id, k, {"state": "skipped"}) for k in skipped)
        return progress, skipped
    return progress, []


def downstream(store: KernelStore, run: Run, node: NodeRecord) -> list[str]:
    """Every node that (transitively) needs ``node`` and is not skipped yet."""
    if run.successors is None:
        nodes = store.list_nodes(run.id)
        run.successors = {n.key: tuple(n.successors) for n in nodes}
    stack, found = list(node.successors), dict[str, None]()
    while stack:
        key = stack.pop()
        if key in run.tally.skipped or key in found:
            continue
        found[key] = None
        stack.extend(run.successors.get(key, ()))
    return list(found)
