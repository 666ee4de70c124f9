"""What Heat's API has no single route for, composed from routes it has.

* A stack's tree to a depth (for hooks; resources and events take
  ``nested_depth``): its nested stacks come from one ``GET
  /stacks?show_nested=true`` (each names its ``parent``), ordered by name
  as the service orders them; each child's owner is the parent's resource
  whose physical id is the child.
* Hooks waiting (heatclient's ``hook poll``, which also reads events): a
  resource whose last pause event since the stack's current operation
  began has no "cleared" event after it.
* A hook path (``web/3``): each owner's physical id is its child stack.

It is written against :class:`StackReads`, the few reads it composes,
rather than :class:`~convection.cli.remote.stacks.RemoteStacks`, which
calls it: so neither module imports the other.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Dicts = list[dict[str, Any]]


class StackReads(Protocol):
    """The reads of a stack service this module composes."""

    def show(self, project: str, name_or_id: str) -> dict[str, Any]: ...

    def list(
        self,
        project: str | None = None,
        *,
        show_nested: bool = False,
        sort_keys: Sequence[str] = (),
        sort_dir: Literal["asc", "desc"] = "desc",
    ) -> Dicts: ...

    def resources(self, project: str, name_or_id: str, *, nested_depth: int = 0) -> Dicts: ...

    def resource(self, project: str, name_or_id: str, resource: str) -> dict[str, Any]: ...

    def events(self, project: str, name_or_id: str) -> Dicts: ...


@dataclass(frozen=True, slots=True)
class Member:
    """A stack of the tree: the stack, its owner resource, its hook path prefix."""

    stack: dict[str, Any]
    owner: str | None
    prefix: str


def tree(stacks: StackReads, project: str, name_or_id: str, depth: int) -> list[Member]:
    """The stack and its live nested stacks to ``depth``, parents first."""
    top = stacks.show(project, name_or_id)
    out = [Member(top, None, "")]
    if depth <= 0:
        return out
    children: dict[str, Dicts] = {}
    for s in stacks.list(project, show_nested=True, sort_keys=["stack_name"], sort_dir="asc"):
        if s.get("parent"):
            children.setdefault(str(s["parent"]), []).append(s)
    level = out
    for _ in range(depth):
        found = []
        for parent in level:
            kids = children.get(str(parent.stack["id"]), [])
            owners = _owners(stacks, project, parent.stack["id"]) if kids else {}
            for kid in kids:
                owner = owners.get(str(kid["id"]), "")
                found.append(Member(kid, owner, f"{parent.prefix}{owner}/"))
        out.extend(found)
        level = found
    return out


def _owners(stacks: StackReads, project: str, stack_id: str) -> dict[str, str]:
    """Child stack id -> the name of the resource that owns it."""
    return {
        str(r["physical_resource_id"]): str(r["resource_name"])
        for r in stacks.resources(project, stack_id)
        if r.get("physical_resource_id")
    }


def hook_poll(stacks: StackReads, project: str, name_or_id: str, depth: int) -> Dicts:
    found: list[tuple[str, int, dict[str, Any]]] = []
    for member in tree(stacks, project, name_or_id, depth):
        every = stacks.events(project, member.stack["id"])
        for position, event, hook in _pending(every, str(member.stack["stack_name"])):
            view = {
                **event,
                "hook_type": hook,
                "stack_name": member.stack["stack_name"],
                "resource_path": member.prefix + str(event["resource_name"]),
            }
            found.append((str(event.get("event_time") or ""), position, view))
    return [view for _, _, view in sorted(found, key=lambda item: item[:2])]


@functools.cache
def _reasons() -> tuple[dict[str, str], dict[str, str]]:
    """Event reason -> hook, for a pause and for a clear: the engine's own
    wording (imported here: only a hook poll needs the engine's module)."""
    from convection.convergence import HOOK_ACTIONS, cleared_reason, paused_reason

    paused = {paused_reason(h): h for h in HOOK_ACTIONS}
    cleared = {cleared_reason(h): h for h in HOOK_ACTIONS}
    return paused, cleared


def _pending(events: Dicts, stack_name: str) -> list[tuple[int, dict[str, Any], str]]:
    """(position, pause event, hook) of each pause not cleared since the
    stack's current operation started (its last stack-level IN_PROGRESS)."""
    paused, cleared = _reasons()
    start = 0
    for i, e in enumerate(events):
        if e["resource_name"] == stack_name and str(e["resource_status"]).endswith("_IN_PROGRESS"):
            start = i
    waiting: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for i, e in enumerate(events[start:], start):
        reason = str(e.get("resource_status_reason") or "")
        if reason in paused:
            waiting[(e["resource_name"], paused[reason])] = (i, e)
        elif reason in cleared:
            waiting.pop((e["resource_name"], cleared[reason]), None)
    return sorted(((i, e, hook) for (_, hook), (i, e) in waiting.items()), key=lambda t: t[0])


def resolve_path(stacks: StackReads, project: str, name_or_id: str, path: str) -> tuple[str, str]:
    """(stack id, resource name) of a hook path such as ``web/3``."""
    parts = [p for p in path.split("/") if p] or [path]
    stack_id = str(stacks.show(project, name_or_id)["id"])
    for owner in parts[:-1]:
        stack_id = str(stacks.resource(project, stack_id, owner)["physical_resource_id"])
    return stack_id, parts[-1]
