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

First, consecutive updates of one row merge into one update (later fields
win): a job's ``IN_PROGRESS`` marker and the physical id its plugin stores
next are one ``UPDATE`` of the row, not two. Applying two updates of a row
in order equals applying their merged fields once, and the merged update
fails exactly when the first one would (the row is missing), so merging
changes no result.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from convection.store.api import (
    AddNodes,
    AddTimer,
    AppendEvent,
    Change,
    ConsumeSignal,
    DeleteResource,
    DeleteTimers,
    ReleaseSuccessors,
    TakeTimer,
    UpdateNode,
    UpdateResource,
    UpdateStack,
    UpdateTraversal,
)
from convection.store.workflows import (
    AddActionExecution,
    AddTaskExecution,
    UpdateActionExecution,
    UpdateExecution,
    UpdateTaskExecution,
)

#: (change class name, the sorted field names for updates): one statement.
GroupKey = tuple[str, tuple[str, ...]]
Phase = dict[GroupKey, list[Change]]


Rows = tuple[Hashable, ...]


_SORTED: dict[tuple[str, ...], tuple[str, ...]] = {}


def _fields_group(change: Any) -> GroupKey:
    """The kind and sorted field names; a batch repeats a few field sets
    thousands of times, so the sort is memoized on the names as given."""
    given = tuple(change.fields)
    found = _SORTED.get(given)
    if found is None:
        if len(_SORTED) > 4096:  # field sets are few; this only guards a leak
            _SORTED.clear()
        found = _SORTED[given] = tuple(sorted(given))
    return type(change).__name__, found


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
    AddNodes: lambda c: (("AddNodes", ()), tuple(("node", c.traversal_id, n.key) for n in c.nodes)),
    AddTimer: lambda c: (("AddTimer", ()), (("timer", c.traversal_id, c.node_key),)),
    DeleteTimers: lambda c: (("DeleteTimers", ()), (("timer", c.traversal_id, c.node_key),)),
    TakeTimer: lambda c: (("TakeTimer", ()), (("timer", c.traversal_id, c.node_key),)),
    UpdateTraversal: lambda c: (_fields_group(c), (("traversal", c.traversal_id),)),
    ConsumeSignal: lambda c: (("ConsumeSignal", ()), (("signal", c.signal_id),)),
    AppendEvent: lambda c: (("AppendEvent", ()), ()),
    UpdateExecution: lambda c: (_fields_group(c), (("execution", c.execution_id),)),
    UpdateTaskExecution: lambda c: (_fields_group(c), (("task", c.task_id),)),
    UpdateActionExecution: lambda c: (_fields_group(c), (("action", c.action_id),)),
    AddTaskExecution: lambda c: (("AddTaskExecution", ()), (("task", c.task.id),)),
    AddActionExecution: lambda c: (("AddActionExecution", ()), (("action", c.action.id),)),
}


def keys(change: Change) -> tuple[GroupKey, Rows]:
    """The statement group of a change (equal groups run as one
    ``executemany``) and the rows it touches (disjoint rows commute)."""
    try:
        return _KEYS[type(change)](change)
    except KeyError:
        raise TypeError(f"not a journal change: {change!r}") from None


def plan(changes: Sequence[Change]) -> list[Phase]:
    """Split ``changes`` into phases, merging updates of a row as it goes;
    see the module docstring for the rules."""
    phases: list[dict[GroupKey, list[Change | None]]] = [{}]
    #: row -> where its last change went: (phase, group, index in the bucket)
    last: dict[Hashable, tuple[int, GroupKey, int]] = {}
    merged = False
    for change in changes:
        row_of = _UPDATED_ROW.get(type(change))
        if row_of is None:
            group, rows = keys(change)
        else:
            row = row_of(change)
            seen = last.get(row)
            if seen is not None and _merge_into(phases, seen, change, row, last):
                merged = True
                continue
            group, rows = _fields_group(change), (row,)
        at = 0
        for row in rows:
            seen = last.get(row)
            if seen is not None:
                at = max(at, seen[0] if seen[1] == group else seen[0] + 1)
        if at == len(phases):
            phases.append({})
        bucket = phases[at].setdefault(group, [])
        for row in rows:
            last[row] = (at, group, len(bucket))
        bucket.append(change)
    if not merged:
        return phases  # type: ignore[return-value]
    kept = ({g: [c for c in b if c is not None] for g, b in phase.items()} for phase in phases)
    return [{g: b for g, b in phase.items() if b} for phase in kept]


#: The one row each update kind touches: updates of the same kind of the same
#: row may merge.
_UPDATED_ROW: dict[type[Any], Callable[[Any], Hashable]] = {
    UpdateStack: lambda c: ("stack", c.stack_id),
    UpdateResource: lambda c: ("resource", c.resource_id),
    UpdateNode: lambda c: ("node", c.traversal_id, c.key),
    UpdateTraversal: lambda c: ("traversal", c.traversal_id),
    UpdateExecution: lambda c: ("execution", c.execution_id),
    UpdateTaskExecution: lambda c: ("task", c.task_id),
    UpdateActionExecution: lambda c: ("action", c.action_id),
}


#: An update kind's change rebuilt with other fields: what
#: ``dataclasses.replace`` does, at about half its cost (a create merges one
#: pair per resource).
_WITH_FIELDS: dict[type[Any], Callable[[Any, dict[str, Any]], Change]] = {
    UpdateStack: lambda c, f: UpdateStack(c.stack_id, f),
    UpdateResource: lambda c, f: UpdateResource(c.resource_id, f),
    UpdateNode: lambda c, f: UpdateNode(c.traversal_id, c.key, f),
    UpdateTraversal: lambda c, f: UpdateTraversal(c.traversal_id, f),
    UpdateExecution: lambda c, f: UpdateExecution(c.execution_id, f),
    UpdateTaskExecution: lambda c, f: UpdateTaskExecution(c.task_id, f),
    UpdateActionExecution: lambda c, f: UpdateActionExecution(c.action_id, f),
}


def _merge_into(
    phases: list[dict[GroupKey, list[Change | None]]],
    seen: tuple[int, GroupKey, int],
    change: Any,
    row: Hashable,
    last: dict[Hashable, tuple[int, GroupKey, int]],
) -> bool:
    """Merge ``change`` into the row's last change if that is an update of
    the same kind, which then moves to the bucket of the merged fields in
    the same phase (no other change of that phase touches the row)."""
    phase, group, index = seen
    earlier: Any = phases[phase][group][index]
    if type(earlier) is not type(change):
        return False
    combined = _WITH_FIELDS[type(change)](earlier, {**earlier.fields, **change.fields})
    phases[phase][group][index] = None
    new_group = _fields_group(combined)
    bucket = phases[phase].setdefault(new_group, [])
    last[row] = (phase, new_group, len(bucket))
    bucket.append(combined)
    return True
