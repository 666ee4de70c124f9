"""Turn a journal batch into a few bulk statements without changing its meaning.

A batch of 500 job completions interleaves change kinds (node, resource,
event, node, resource, event...). Run one by one that is 1,500 statements;
grouped by kind it is a handful of ``executemany`` calls. Grouping reorders
changes, which is only safe between changes that touch different rows, so
the batch is cut into *phases*:

* a change goes into the earliest phase after every earlier change on the
  same row, unless that earlier change is of the same statement group, in
  which case they may share a phase (``executemany`` keeps their order);
* within a phase, different groups touch disjoint rows, so their order is
  free.

A typical batch is one phase. Events have no row identity and always land in
phase 0, in batch order, so their ids follow the batch.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from convection.store.api import (
    AddTimer,
    AppendEvent,
    Change,
    ConsumeSignal,
    DeleteResource,
    DeleteTimers,
    ReleaseSuccessors,
    UpdateNode,
    UpdateResource,
    UpdateStack,
    UpdateTraversal,
)

#: (change class name, the sorted field names for updates): one statement.
GroupKey = tuple[str, tuple[str, ...]]
Phase = dict[GroupKey, list[Change]]


Rows = tuple[Hashable, ...]


def _fields_group(change: Any) -> GroupKey:
    return type(change).__name__, tuple(sorted(change.fields))


# Per change class: its statement group and the rows it touches. A table of
# small functions rather than a match statement: plan() runs once per change
# of every batch, so dispatch cost shows on a 1,000-change batch.
_KEYS: dict[type[Any], Callable[[Any], tuple[GroupKey, Rows]]] = {
    UpdateStack: lambda c: (_fields_group(c), (("stack", c.stack_id),)),
    UpdateResource: lambda c: (_fields_group(c), (("resource", c.resource_id),)),
    DeleteResource: lambda c: (("DeleteResource", ()), (("resource", c.resource_id),)),
    UpdateNode: lambda c: (_fields_group(c), (("node", c.traversal_id, c.key),)),
    ReleaseSuccessors: lambda c: (
        ("ReleaseSuccessors", ()),
        tuple(("node", c.traversal_id, k) for k in c.keys),
    ),
    AddTimer: lambda c: (("AddTimer", ()), (("timer", c.traversal_id, c.node_key),)),
    DeleteTimers: lambda c: (("DeleteTimers", ()), (("timer", c.traversal_id, c.node_key),)),
    UpdateTraversal: lambda c: (_fields_group(c), (("traversal", c.traversal_id),)),
    ConsumeSignal: lambda c: (("ConsumeSignal", ()), (("signal", c.signal_id),)),
    AppendEvent: lambda c: (("AppendEvent", ()), ()),
}


def keys(change: Change) -> tuple[GroupKey, Rows]:
    """The statement group of a change (equal groups run as one
    ``executemany``) and the rows it touches (disjoint rows commute)."""
    try:
        return _KEYS[type(change)](change)
    except KeyError:
        raise TypeError(f"not a journal change: {change!r}") from None


def plan(changes: Sequence[Change]) -> list[Phase]:
    """Split ``changes`` into phases; see the module docstring for the rule."""
    phases: list[Phase] = [{}]
    last: dict[Hashable, tuple[int, GroupKey]] = {}
    for change in changes:
        group, rows = keys(change)
        at = 0
        for row in rows:
            seen = last.get(row)
            if seen is not None:
                phase, seen_group = seen
                at = max(at, phase if seen_group == group else phase + 1)
        for row in rows:
            last[row] = (at, group)
        if at == len(phases):
            phases.append({})
        bucket = phases[at].get(group)
        if bucket is None:
            phases[at][group] = [change]
        else:
            bucket.append(change)
    return phases
