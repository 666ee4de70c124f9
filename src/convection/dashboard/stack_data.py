"""A stack as the dashboard draws it, and the changes that follow.

Everything here is read through the stack service, as the REST API
reads it, so what the page shows is what ``stack show``, ``resource
list`` and ``event list`` say, secrets masked by the same rules. The
snapshot takes the newest event's id *before* it reads the resources:
following the events from there may repeat a change the snapshot already
shows (harmless: a status is set, not added), but never misses one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from convection.dashboard.layout import layered
from convection.service import Stacks

Body = dict[str, Any]

#: Types whose nested stack is a group of members (drawn as "group").
GROUP_TYPES = frozenset(
    {
        "OS::Heat::ResourceGroup",
        "OS::Heat::AutoScalingGroup",
        "OS::Heat::InstanceGroup",
        "AWS::AutoScaling::AutoScalingGroup",
    }
)
#: Events read per tick of a stream; with more waiting, the next tick
#: comes at once, and the stack's own state waits until they are sent.
EVENTS_PER_TICK = 5000
#: Events sent to the page's timeline per message.
TIMELINE_PER_MESSAGE = 50
#: Heat's hook event reasons (``convergence.hooks``): paused, cleared.
_PAUSED = re.compile(r"paused until Hook (\S+) is cleared")
_CLEARED = re.compile(r"Hook (\S+) is cleared")


def stack_graph(stacks: Stacks, project: str, stack_id: str) -> Body:
    """The page's first state: stack, resources as nodes, dependencies
    as edges, positions, paused hooks and nested stacks."""
    recent = stacks.recent_events(project, stack_id, TIMELINE_PER_MESSAGE)
    cursor = recent[-1]["id"] if recent else None
    stack = stacks.identify(project, stack_id)
    resources = stacks.resources(project, stack["id"])
    nested = stacks.nested_stacks(project, stack["id"])
    hooks = {h["resource_name"]: h["hook_type"] for h in stacks.hook_poll(project, stack["id"])}
    names = [r["resource_name"] for r in resources]
    edges = [(r["resource_name"], needs) for r in resources for needs in r["required_by"]]
    at = layered(names, edges)
    return {
        "stack": stack_state(stack),
        "cursor": cursor,
        "events": recent,
        "nodes": [_node(r, at, hooks, nested) for r in resources],
        "edges": [{"source": s, "target": t} for s, t in edges],
    }


def stack_state(stack: Body) -> Body:
    return {
        "id": stack["id"],
        "name": stack["stack_name"],
        "status": stack["stack_status"],
        "status_reason": stack.get("stack_status_reason") or "",
        "parent": stack.get("parent"),
    }


def _node(
    r: Body, at: dict[str, tuple[float, float]], hooks: dict[str, str], nested: dict[str, Any]
) -> Body:
    name = r["resource_name"]
    x, y = at[name]
    child = nested.get(name)
    return {
        "id": name,
        "name": name,
        "type": r["resource_type"],
        "status": r["resource_status"],
        "reason": r["resource_status_reason"],
        "physical_id": r["physical_resource_id"],
        "x": x,
        "y": y,
        "hook": hooks.get(name),
        "nested": None
        if child is None
        else {
            "stack_id": child["id"],
            "kind": "group" if r["resource_type"] in GROUP_TYPES else "stack",
        },
    }


def resource_detail(stacks: Stacks, project: str, stack_id: str, name: str) -> Body:
    """The side panel: the resource as ``resource show`` has it, its
    properties (masked), its events, and the hook it waits at."""
    resource = stacks.resource_masked(project, stack_id, name)
    events = stacks.events(project, stack_id, resource_name=name)
    change: Body | None = None
    for e in events:  # the hook it waits at: its last pause not cleared since
        change = _resource_change(e, change)
    return {
        "resource": resource,
        "properties": resource.pop("properties"),
        "events": events[-200:],
        "hook": change["hook"] if change is not None else None,
    }


def stack_changes(
    stacks: Stacks, project: str, stack_id: str, cursor: str | None, last_status: str | None
) -> tuple[Body | None, str | None]:
    """What changed since ``cursor``: the latest state of each resource
    that has a new event, the stack's state if it moved, and the events
    for the timeline; with the new cursor. None when nothing changed."""
    stack = stack_state(stacks.identify(project, stack_id))
    events = stacks.events(project, stack_id, marker=cursor, limit=EVENTS_PER_TICK)
    behind = len(events) == EVENTS_PER_TICK
    # The stack's state is read before its events: when it says the
    # stack is done, every resource event of the operation is among them.
    moved = stack["status"] != last_status and not behind
    if not events and not moved:
        return None, cursor
    latest: dict[str, Body] = {}
    for e in events:
        if e["physical_resource_id"] == stack["id"] and e["resource_name"] == stack["name"]:
            continue  # the stack's own event: its state is read above
        latest[e["resource_name"]] = _resource_change(e, latest.get(e["resource_name"]))
    _replaced(stacks, project, stack, latest)
    message = {
        "resources": list(latest.values()),
        "stack": stack if moved else None,
        "events": events[-TIMELINE_PER_MESSAGE:],
        "backlog": behind,
    }
    return message, (events[-1]["id"] if events else cursor)


def _replaced(stacks: Stacks, project: str, stack: Body, latest: dict[str, Body]) -> None:
    """A replaced resource's old copy is deleted under the same name, after
    its replacement was made: its DELETE events must not paint over the
    current resource. Where the current row of that name is another one,
    show the current row (a resource removed by the update has none, and
    stays deleted)."""
    deleted = [n for n, c in latest.items() if c["status"].startswith("DELETE_")]
    if not deleted or stack["status"].startswith("DELETE_"):
        return
    current = {r["resource_name"]: r for r in stacks.resources(project, stack["id"])}
    for name in deleted:
        row = current.get(name)
        if row is not None and row["physical_resource_id"] != latest[name]["physical_id"]:
            latest[name] = {
                "name": name,
                "status": row["resource_status"],
                "reason": row["resource_status_reason"],
                "physical_id": row["physical_resource_id"],
                "hook": None,
            }


def _resource_change(event: Body, earlier: Body | None) -> Body:
    reason = event["resource_status_reason"] or ""
    hook = earlier["hook"] if earlier is not None else None
    if (paused := _PAUSED.search(reason)) is not None:
        hook = paused.group(1)
    elif _CLEARED.search(reason) is not None or earlier is None:
        hook = None
    return {
        "name": event["resource_name"],
        "status": event["resource_status"],
        "reason": reason,
        "physical_id": event["physical_resource_id"],
        "hook": hook,
    }


def stack_rows(stacks: Stacks, project: str, status: str, query: str) -> Sequence[Body]:
    """The stack list page: top-level stacks, newest first, filtered by
    status (``CREATE_COMPLETE``, or a family such as ``FAILED``) and by
    a search on the name."""
    rows = stacks.list(project)
    wanted = status.strip().upper()
    needle = query.strip().lower()
    return [
        s
        for s in rows
        if (not wanted or s["stack_status"] == wanted or s["stack_status"].endswith("_" + wanted))
        and (not needle or needle in s["stack_name"].lower())
    ]


def list_changes(stacks: Stacks, project: str, sent: dict[str, tuple[str, str]]) -> Body | None:
    """The list page's changes: each top-level stack whose status moved
    since ``sent`` (updated in place), and those that appeared or went.
    The first call sends every stack: the page may be older than the
    stream."""
    rows = stacks.list(project)
    now = {s["id"]: (s["stack_status"], s.get("stack_status_reason") or "") for s in rows}
    changed = [
        {"id": s["id"], "name": s["stack_name"], "status": now[s["id"]][0],
         "status_reason": now[s["id"]][1]}
        for s in rows
        if sent.get(s["id"]) != now[s["id"]]
    ]  # fmt: skip
    gone = [sid for sid in sent if sid not in now]
    sent.clear()
    sent.update(now)
    if not (changed or gone):
        return None
    return {"stacks": changed, "gone": gone}
