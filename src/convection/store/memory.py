"""The in-memory store: the SQL store's semantics in plain dicts.

For pure engine tests: no file, no migration, microseconds per call. One
``threading.Lock`` around each method stands in for the SQL transaction,
and a batch that fails rolls back through an undo log (see
:mod:`convection.store._memory_tables`). It passes the same behaviour suite
as the SQL store; anything it accepted that SQL refused would be a bug.
"""

from __future__ import annotations

import hmac
import threading
import uuid
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, TypeVar

from convection.common import NotFound
from convection.store import workflows as wf
from convection.store._fields import (
    check_added,
    check_changes,
    check_stack_query,
    check_stack_traversals,
    check_traversal,
    json_dumps,
    with_updated_at,
)
from convection.store._filters import after, matches, ordered
from convection.store._memory_processes import MemoryProcesses
from convection.store._memory_scheduling import MemorySchedules
from convection.store._memory_tables import (
    Tables,
    Undo,
    detach,
    json_copy,
    json_load,
    replace,
    stamped,
    updated,
)
from convection.store._paging import sort_columns
from convection.store._time import aware, utcnow
from convection.store.api import (
    STACK,
    AddNodes,
    AddTimer,
    AppendEvent,
    Change,
    ConsumeSignal,
    DeleteResource,
    DeleteTimers,
    EventRecord,
    FenceNode,
    FenceTraversal,
    JSONDict,
    LostLease,
    NewStack,
    NodeRecord,
    Notice,
    ReleaseSuccessors,
    ResourceRecord,
    SignalRecord,
    StackExists,
    StackRecord,
    StaleNode,
    StaleTraversal,
    StartedStack,
    TakeTimer,
    TemplateRecord,
    TimerRecord,
    TokenRecord,
    TraversalRecord,
    TraversalStart,
    UpdateNode,
    UpdateResource,
    UpdateStack,
    UpdateTraversal,
)
from convection.store.processes import ProcessRecord
from convection.store.scheduling import ScheduleStore
from convection.store.software import MemorySoftware, SoftwareStore
from convection.store.workflows import (
    AddActionExecution,
    AddTaskExecution,
    UpdateActionExecution,
    UpdateExecution,
    UpdateTaskExecution,
    WorkflowStore,
)

R = TypeVar("R")


def _stack_sort_value(stack: StackRecord, key: str) -> Any:
    if key == "updated_at":
        return stack.updated_at or stack.created_at
    return getattr(stack, key)


class MemoryStore:
    """The :class:`~convection.store.api.Store` in process memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._t = Tables()
        self._tokens = _TokenTable()
        #: Heat's software configs and deployments (:mod:`.software`).
        self.software: SoftwareStore = MemorySoftware()
        #: Workflow definitions and executions (:mod:`.workflows`).
        self.workflows: WorkflowStore = MemoryWorkflows(self)
        #: Stored environments and cron triggers (:mod:`.scheduling`).
        self.schedules: ScheduleStore = MemorySchedules(self, MemoryWorkflowRows(self))
        self._processes = MemoryProcesses(self._lock, self._t)

    def close(self) -> None:
        """Nothing to release; present so callers need not know the backend."""

    # -- stacks and templates -------------------------------------------------
    def create_stack(self, stack: StackRecord) -> None:
        with self._lock:
            t = self._t
            live_clash = stack.deleted_at is None and any(
                s.project == stack.project and s.name == stack.name and s.deleted_at is None
                for s in t.stacks.values()
            )
            if stack.id in t.stacks or live_clash:
                raise StackExists(stack.project, stack.name)
            templates = (stack.template_id, stack.prev_template_id)
            if any(i is not None and i not in t.templates for i in templates) or (
                stack.parent_id is not None and stack.parent_id not in t.stacks
            ):
                raise ValueError(
                    f"stack {stack.id}: unknown template_id, prev_template_id or parent_id"
                )
            t.put_stack(stamped(stack, utcnow()), [])

    def get_stack(self, project: str, name_or_id: str) -> StackRecord | None:
        with self._lock:
            found = self._t.stacks.get(name_or_id)
            if found is None or found.project != project:
                found = next(
                    (
                        s
                        for s in self._t.stacks.values()
                        if s.project == project and s.name == name_or_id and s.deleted_at is None
                    ),
                    None,
                )
            return None if found is None else detach(found)

    def get_stack_by_id(self, stack_id: str) -> StackRecord | None:
        with self._lock:
            found = self._t.stacks.get(stack_id)
            return None if found is None else detach(found)

    def list_stacks(
        self,
        project: str | None,
        *,
        include_deleted: bool = False,
        parent_id: str | None = None,
        show_nested: bool = True,
        filters: Mapping[str, str | Sequence[str]] | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: Literal["asc", "desc"] = "desc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> list[StackRecord]:
        accepted = check_stack_query(filters, sort_keys, sort_dir)
        keys = sort_columns(sort_keys)
        with self._lock:
            chosen = [
                s
                for s in self._t.stacks.values()
                if (project is None or s.project == project)
                and (include_deleted or s.deleted_at is None)
                and (parent_id is None or s.parent_id == parent_id)
                and (show_nested or s.parent_id is None)
                and all(getattr(s, k) in v for k, v in accepted.items())
            ]
            marker_stack = None if marker is None else self._t.stacks.get(marker)
            if marker is not None and marker_stack is None:
                raise NotFound("stack", marker)

        def order(s: StackRecord) -> list[Any]:
            return [_stack_sort_value(s, k) for k in keys]

        desc = sort_dir == "desc"
        chosen.sort(key=order, reverse=desc)
        if marker_stack is not None:
            mark = order(marker_stack)
            chosen = [s for s in chosen if (order(s) < mark if desc else order(s) > mark)]
        return [detach(s) for s in chosen[:limit]]

    def purge_stack(self, stack_id: str) -> None:
        with self._lock:
            t = self._t
            ids, frontier = {stack_id}, {stack_id}
            while frontier:
                frontier = {s.id for s in t.stacks.values() if s.parent_id in frontier}
                ids |= frontier
            used = {
                i
                for sid in ids
                if sid in t.stacks
                for i in (t.stacks[sid].template_id, t.stacks[sid].prev_template_id)
                if i is not None
            }
            t.drop_stacks(ids)
            still = {i for s in t.stacks.values() for i in (s.template_id, s.prev_template_id)}
            for template_id in used - still:
                del t.templates[template_id]

    def reserve_resources(self, root_id: str, delta: int, limit: int) -> bool:
        with self._lock:
            root = self._t.stacks.get(root_id)
            if root is None:
                return False
            total = root.resource_count + root.nested_resources + delta
            if delta > 0 and 0 <= limit < total:
                return False
            changed = replace(root, {"nested_resources": max(0, root.nested_resources + delta)})
            self._t.put_stack(changed, [])
            return True

    def put_template(self, template: JSONDict, environment: JSONDict, files: dict[str, str]) -> int:
        texts = (json_dumps(template), json_dumps(environment), json_dumps(files))
        with self._lock:
            template_id = self._t.next_id("templates")
            self._t.templates[template_id] = texts
            return template_id

    def start_stacks(self, new: Sequence[NewStack], *, limit: int) -> list[StartedStack] | None:
        check_stack_traversals([n.traversal for n in new])
        for n in new:
            check_traversal(n.traversal, n.nodes, {})
        check_changes([e for n in new for e in n.events])
        now = utcnow()
        with self._lock:
            self._check_new(new)
            roots = self._room(new, limit)
            if roots is None:
                return None
            undo: Undo = []
            try:
                for root in roots:
                    self._t.put_stack(root, undo)
                return [self._start_one(n, now, undo) for n in new]
            except BaseException:
                for step in reversed(undo):
                    step()
                raise

    def _check_new(self, new: Sequence[NewStack]) -> None:
        """What SQL's constraints refuse: a live name taken, an unknown parent."""
        t = self._t
        live = {(s.project, s.name) for s in t.stacks.values() if s.deleted_at is None}
        for n in new:
            key = (n.stack.project, n.stack.name)
            if n.stack.id in t.stacks or key in live:
                raise StackExists(*key)
            live.add(key)
            if n.stack.parent_id is not None and n.stack.parent_id not in t.stacks:
                raise ValueError(f"stack {n.stack.id}: unknown parent_id")

    def _room(self, new: Sequence[NewStack], limit: int) -> list[StackRecord] | None:
        """The roots with their new counts, or None when one would pass ``limit``."""
        wanted: dict[str, int] = {}
        for n in new:
            if n.stack.root_id is not None and n.stack.resource_count:
                wanted[n.stack.root_id] = wanted.get(n.stack.root_id, 0) + n.stack.resource_count
        roots = []
        for root_id, delta in wanted.items():
            root = self._t.stacks.get(root_id)
            if root is None or 0 <= limit < root.resource_count + root.nested_resources + delta:
                return None
            roots.append(replace(root, {"nested_resources": root.nested_resources + delta}))
        return roots

    def _drop_template(self, template_id: int) -> None:
        self._t.templates.pop(template_id, None)

    def _start_one(self, new: NewStack, now: datetime, undo: Undo) -> StartedStack:
        t = self._t
        template_id = t.next_id("templates")
        texts = (json_dumps(new.template), json_dumps(new.environment), json_dumps(new.files))
        t.templates[template_id] = texts
        undo.append(lambda: self._drop_template(template_id))
        stack = replace(new.stack, {"template_id": template_id, "updated_at": now})
        t.put_stack(stamped(stack, now), undo)
        ids = []
        for r in new.resources:
            rid = t.next_id("resources")
            t.put_resource(stamped(replace(r, {"id": rid}), now), undo)
            ids.append(rid)
        started = new.traversal.started_at or now
        t.put_traversal(stamped(replace(new.traversal, {"started_at": started}), now), undo)
        by_name = {r.name: i for r, i in zip(new.resources, ids, strict=True)}
        for node in new.nodes:
            if node.resource_id is None and node.resource_name in by_name:
                node = replace(node, {"resource_id": by_name[node.resource_name]})
            t.put_node(stamped(node, now), undo)
        for event in new.events:
            self._apply_insert(event, now, undo)
        return StartedStack(template_id, ids)

    def get_template(self, template_id: int) -> TemplateRecord:
        with self._lock:
            texts = self._t.templates.get(template_id)
        if texts is None:
            raise NotFound("template", str(template_id))
        template, environment, files = (json_load(x) for x in texts)
        return TemplateRecord(
            id=template_id, template=template, environment=environment, files=files
        )

    # -- resources --------------------------------------------------------------
    def add_resource(self, resource: ResourceRecord) -> int:
        return self.add_resources([resource])[0]

    def add_resources(self, resources: Sequence[ResourceRecord]) -> list[int]:
        now = utcnow()
        with self._lock:
            for r in resources:
                if r.stack_id not in self._t.stacks:
                    raise NotFound("stack", r.stack_id)
            copies = [stamped(r, now) for r in resources]
            ids = []
            for r in copies:
                rid = self._t.next_id("resources")
                self._t.put_resource(replace(r, {"id": rid}), [])
                ids.append(rid)
            return ids

    def get_resource(self, resource_id: int) -> ResourceRecord | None:
        with self._lock:
            found = self._t.resources.get(resource_id)
            return None if found is None else detach(found)

    def list_resources(
        self, stack_id: str, *, current_only: bool = False, names: Collection[str] | None = None
    ) -> list[ResourceRecord]:
        wanted = None if names is None else set(names)
        with self._lock:
            return [
                detach(r)
                for r in sorted(self._t.resources.values(), key=lambda r: r.id)
                if r.stack_id == stack_id
                and (r.current or not current_only)
                and (wanted is None or r.name in wanted)
            ]

    # -- traversals --------------------------------------------------------------
    def start_traversal(
        self, traversal: TraversalRecord, nodes: Sequence[NodeRecord], stack_fields: JSONDict
    ) -> None:
        check_traversal(traversal, nodes, stack_fields)
        now = utcnow()
        with self._lock:
            self._start_traversal(traversal, nodes, stack_fields, now, [])

    def start_traversals(self, starts: Sequence[TraversalStart]) -> None:
        check_stack_traversals([start.traversal for start in starts])
        for start in starts:
            check_traversal(start.traversal, start.nodes, start.stack_fields)
        check_changes([e for start in starts for e in start.events])
        now = utcnow()
        with self._lock:
            undo: Undo = []
            try:
                for s in starts:
                    self._start_traversal(s.traversal, s.nodes, s.stack_fields, now, undo)
                for s in starts:
                    for event in s.events:
                        self._apply_insert(event, now, undo)
            except BaseException:
                for step in reversed(undo):
                    step()
                raise

    def _start_traversal(
        self,
        traversal: TraversalRecord,
        nodes: Sequence[NodeRecord],
        stack_fields: JSONDict,
        now: datetime,
        undo: Undo,
    ) -> None:
        t = self._t
        fields = with_updated_at({**stack_fields, "traversal_id": traversal.id}, now)
        if traversal.kind == STACK:
            stack = t.stacks.get(traversal.stack_id)
            if stack is None:
                raise NotFound("stack", traversal.stack_id)
            if traversal.id in t.traversals:
                raise ValueError(f"traversal {traversal.id} already exists")
            t.put_stack(updated(stack, fields), undo)
        else:
            executions = t.workflow_rows[wf.EXECUTIONS.name]
            execution = executions.get(traversal.execution_id)
            if execution is None:
                raise NotFound(wf.EXECUTIONS.what, traversal.execution_id)
            if traversal.id in t.traversals:
                raise ValueError(f"traversal {traversal.id} already exists")
            t.put_row(wf.EXECUTIONS.name, updated(execution, fields), undo)
        column = "stack_id" if traversal.kind == STACK else "execution_id"
        owner = getattr(traversal, column)
        for old in list(t.traversals.values()):
            if getattr(old, column) == owner and old.status == "IN_PROGRESS":
                superseded = replace(old, {"status": "SUPERSEDED", "finished_at": now})
                t.put_traversal(superseded, undo)
        started = traversal.started_at or now
        t.put_traversal(stamped(replace(traversal, {"started_at": started}), now), undo)
        for node in nodes:
            t.put_node(stamped(node, now), undo)

    def get_traversal(self, traversal_id: str) -> TraversalRecord | None:
        with self._lock:
            return self._t.traversals.get(traversal_id)

    def active_traversals(self) -> list[TraversalRecord]:
        with self._lock:
            found = [
                tr
                for tr in self._t.traversals.values()
                if tr.status == "IN_PROGRESS" and self._is_current(tr.id)
            ]
        return sorted(found, key=lambda tr: (tr.started_at, tr.id))

    def scan_active(
        self, owner: str, kinds: Collection[str] | None = None
    ) -> tuple[list[str], list[TraversalRecord]]:
        active = self.active_traversals()
        if kinds is not None:
            active = [tr for tr in active if tr.kind in kinds]
        mine = [tr.id for tr in active if tr.lease_owner == owner]
        return mine, [tr for tr in active if tr.lease_owner != owner]

    def take_traversal(
        self, traversal_id: str, owner: str, lease_until: datetime, now: datetime
    ) -> bool:
        until, now = aware(lease_until, "lease_until"), aware(now, "now")
        with self._lock:
            tr = self._t.traversals.get(traversal_id)
            if tr is None or tr.status != "IN_PROGRESS":
                return False
            held = tr.lease_owner not in (None, owner)
            if held and tr.lease_until is not None and tr.lease_until >= now:
                return False
            self._t.put_traversal(replace(tr, {"lease_owner": owner, "lease_until": until}), [])
            return True

    def renew_traversals(
        self, traversal_ids: Sequence[str], owner: str, lease_until: datetime
    ) -> set[str]:
        return self._set_leases(traversal_ids, owner, aware(lease_until, "lease_until"))

    def release_traversals(self, traversal_ids: Sequence[str], owner: str) -> None:
        self._set_leases(traversal_ids, owner, None)

    def _set_leases(
        self, traversal_ids: Sequence[str], owner: str, until: datetime | None
    ) -> set[str]:
        """Set ``lease_until`` of those of ``traversal_ids`` ``owner`` holds."""
        held = set()
        with self._lock:
            for tid in traversal_ids:
                tr = self._t.traversals.get(tid)
                if tr is not None and tr.lease_owner == owner:
                    self._t.put_traversal(replace(tr, {"lease_until": until}), [])
                    held.add(tid)
        return held

    def list_nodes(self, traversal_id: str) -> list[NodeRecord]:
        with self._lock:
            found = [n for (tid, _), n in self._t.nodes.items() if tid == traversal_id]
        return [detach(n) for n in sorted(found, key=lambda n: n.key)]

    def get_node(self, traversal_id: str, key: str) -> NodeRecord | None:
        with self._lock:
            found = self._t.nodes.get((traversal_id, key))
            return None if found is None else detach(found)

    def get_nodes(self, traversal_id: str, keys: Sequence[str]) -> list[NodeRecord]:
        with self._lock:
            found = (self._t.nodes.get((traversal_id, key)) for key in dict.fromkeys(keys))
            return [detach(n) for n in found if n is not None]

    def claim_ready(
        self, traversal_id: str, owner: str, limit: int, lease_until: datetime
    ) -> list[NodeRecord]:
        until = aware(lease_until, "lease_until")
        with self._lock:
            return self._claim(traversal_id, owner, limit, until)

    def claim_many(
        self, wanted: Sequence[tuple[str, int]], owner: str, lease_until: datetime
    ) -> dict[str, list[NodeRecord]]:
        until = aware(lease_until, "lease_until")
        with self._lock:
            return {tid: self._claim(tid, owner, limit, until) for tid, limit in wanted}

    def _claim(
        self, traversal_id: str, owner: str, limit: int, until: datetime
    ) -> list[NodeRecord]:
        if limit <= 0 or not self._is_current(traversal_id):
            return []
        keys = list(self._t.ready.get(traversal_id, {}))[:limit]
        claimed = []
        for key in keys:
            node = self._t.nodes[(traversal_id, key)]
            changes = {
                "state": "running",
                "lease_owner": owner,
                "lease_until": until,
                "attempt": node.attempt + 1,
            }
            node = replace(node, changes)
            self._t.put_node(node, [])
            claimed.append(detach(node))
        return claimed

    def count_unfinished(self, traversal_id: str) -> int:
        with self._lock:
            return sum(
                1
                for (tid, _), node in self._t.nodes.items()
                if tid == traversal_id and node.state not in ("done", "failed", "skipped")
            )

    def take_node(
        self,
        traversal_id: str,
        key: str,
        attempt: int,
        owner: str,
        lease_until: datetime,
        *,
        claimed_by: str | None = None,
    ) -> NodeRecord | None:
        until = aware(lease_until, "lease_until")
        with self._lock:
            node = self._t.nodes.get((traversal_id, key))
            if node is None or node.state != "running" or node.attempt != attempt:
                return None
            if claimed_by is not None and node.lease_owner != claimed_by:
                return None
            taken = replace(node, {"lease_owner": owner, "lease_until": until})
            self._t.put_node(taken, [])
            return taken

    def renew_nodes(self, owner: str, lease_until: datetime) -> set[tuple[str, str]]:
        until = aware(lease_until, "lease_until")
        with self._lock:
            held = [self._t.nodes[k] for k in self._t.running]
            held = [node for node in held if node.lease_owner == owner]
            for node in held:
                self._t.put_node(replace(node, {"lease_until": until}), [])
            return {(node.traversal_id, node.key) for node in held}

    def notify(self, channel: str, payload: str = "") -> None:
        """One process: nobody else to wake."""

    def reclaim_expired(self, now: datetime) -> int:
        now = aware(now, "now")
        with self._lock:
            expired = [
                self._t.nodes[key]
                for key in self._t.running
                if (until := self._t.nodes[key].lease_until) is not None and until < now
            ]
            for node in expired:
                ready = replace(node, {"state": "ready", "lease_owner": None, "lease_until": None})
                self._t.put_node(ready, [])
            return len(expired)

    def due_timers(self, now: datetime, limit: int) -> list[TimerRecord]:
        now = aware(now, "now")
        with self._lock:
            due = [t for t in self._t.timers.values() if t.due_at <= now]
        return sorted(due, key=lambda t: (t.due_at, t.id))[:limit]

    def next_timer_due(self, traversal_id: str | None = None) -> datetime | None:
        with self._lock:
            return min(
                (
                    t.due_at
                    for t in self._t.timers.values()
                    if traversal_id is None or t.traversal_id == traversal_id
                ),
                default=None,
            )

    def _is_current(self, traversal_id: str) -> bool:
        traversal = self._t.traversals.get(traversal_id)
        if traversal is None:
            return False
        if traversal.kind == STACK:
            owner: Any = self._t.stacks.get(traversal.stack_id)
        else:
            owner = self._t.workflow_rows[wf.EXECUTIONS.name].get(traversal.execution_id)
        return owner is not None and owner.traversal_id == traversal_id

    # -- journal -------------------------------------------------------------------
    def apply(self, changes: Sequence[Change], *, traversal_id: str | None = None) -> None:
        check_changes(changes)
        now = utcnow()
        with self._lock:
            if traversal_id is not None and not self._is_current(traversal_id):
                raise StaleTraversal(traversal_id)
            undo: Undo = []
            try:
                for change in changes:
                    self._apply_one(change, now, undo)
            except BaseException:
                for step in reversed(undo):
                    step()
                raise

    def apply_many(self, batches: Sequence[tuple[str | None, Sequence[Change]]]) -> list[bool]:
        for _, changes in batches:
            check_changes(changes)
        now = utcnow()
        with self._lock:
            stale = [tid is not None and not self._is_current(tid) for tid, _ in batches]
            undo: Undo = []
            try:
                for (_, changes), left_out in zip(batches, stale, strict=True):
                    for change in () if left_out else changes:
                        self._apply_one(change, now, undo)
            except BaseException:
                for step in reversed(undo):
                    step()
                raise
            return stale

    def _apply_one(self, change: Change, now: datetime, undo: Undo) -> None:
        t = self._t
        match change:
            case UpdateStack(stack_id=sid, fields=fields):
                stack = updated(
                    _need(t.stacks.get(sid), "stack", sid), with_updated_at(fields, now)
                )
                self._check_stack(
                    stack, renamed=bool({"name", "project", "deleted_at"} & set(fields))
                )
                t.put_stack(stack, undo)
            case UpdateResource(resource_id=rid, fields=fields):
                resource = _need(t.resources.get(rid), "resource", rid)
                t.put_resource(updated(resource, with_updated_at(fields, now)), undo)
            case DeleteResource(resource_id=rid):
                t.drop_resource(rid, undo)
            case FenceNode(traversal_id=tid, key=key, attempt=attempt, owner=owner):
                node = t.nodes.get((tid, key))
                if (
                    node is None
                    or node.state != "running"
                    or node.attempt != attempt
                    or node.lease_owner != owner
                ):
                    raise StaleNode(tid, key, attempt)
            case FenceTraversal(traversal_id=tid, owner=owner):
                traversal = t.traversals.get(tid)
                if traversal is None or traversal.lease_owner != owner:
                    raise LostLease(tid, owner)
            case Notice():
                pass  # one process: nobody else to wake
            case UpdateNode(traversal_id=tid, key=key, fields=fields):
                node = _need(t.nodes.get((tid, key)), "traversal node", f"{tid}/{key}")
                t.put_node(updated(node, fields), undo)
            case ReleaseSuccessors(traversal_id=tid, keys=keys):
                for key in keys:
                    self._release(tid, key, undo)
            case UpdateTraversal(traversal_id=tid, fields=fields):
                traversal = _need(t.traversals.get(tid), "traversal", tid)
                t.put_traversal(updated(traversal, fields), undo)
            case ConsumeSignal(signal_id=gid):
                signal = _need(t.signals.get(gid), "signal", gid)
                t.put_signal(replace(signal, {"consumed": True}), undo)
            case UpdateExecution() | UpdateTaskExecution() | UpdateActionExecution():
                table, attr = wf.UPDATES[type(change)]
                row_id = getattr(change, attr)
                old = _need(t.workflow_rows[table.name].get(row_id), table.what, row_id)
                t.put_row(table.name, updated(old, with_updated_at(change.fields, now)), undo)
            case AddTaskExecution() | AddActionExecution():
                self._insert_row(change, now, undo)
            case _:
                self._apply_insert(change, now, undo)

    def _insert_row(
        self, change: AddTaskExecution | AddActionExecution, now: datetime, undo: Undo
    ) -> None:
        """What SQL refuses: a taken id, a missing execution or task."""
        table, attr = wf.INSERTS[type(change)]
        record = getattr(change, attr)
        rows = self._t.workflow_rows
        pid: str | None
        if isinstance(change, AddTaskExecution):
            parent, what, pid = wf.EXECUTIONS.name, wf.EXECUTIONS.what, change.task.execution_id
        else:
            parent, what, pid = wf.TASKS.name, wf.TASKS.what, change.action.task_execution_id
        if pid is not None:
            _need(rows[parent].get(pid), what, pid)
        if record.id in rows[table.name]:
            raise ValueError(f"{table.what} {record.id}: already exists")
        self._t.put_row(table.name, stamped(record, now), undo)

    def _check_stack(self, stack: StackRecord, *, renamed: bool) -> None:
        """The constraints SQL enforces on an updated stack row."""
        t = self._t
        for template_id in (stack.template_id, stack.prev_template_id):
            if template_id is not None and template_id not in t.templates:
                raise NotFound("template", str(template_id))
        if stack.parent_id is not None and stack.parent_id not in t.stacks:
            raise NotFound("stack", stack.parent_id)
        if (
            renamed
            and stack.deleted_at is None
            and any(
                s.id != stack.id and s.project == stack.project and s.name == stack.name
                for s in t.stacks.values()
                if s.deleted_at is None
            )
        ):
            raise StackExists(stack.project, stack.name)

    def _release(self, traversal_id: str, key: str, undo: Undo) -> None:
        node = _need(
            self._t.nodes.get((traversal_id, key)), "traversal node", f"{traversal_id}/{key}"
        )
        if node.pending < 1:
            raise ValueError(
                f"ReleaseSuccessors would take pending below zero (a node released twice?): "
                f"{traversal_id}/{key}"
            )
        pending = node.pending - 1
        state = "ready" if pending == 0 and node.state == "waiting" else node.state
        self._t.put_node(replace(node, {"pending": pending, "state": state}), undo)

    def _apply_insert(self, change: Change, now: datetime, undo: Undo) -> None:
        t = self._t
        match change:
            case AppendEvent():
                _need(t.stacks.get(change.stack_id), "stack", change.stack_id)
                event = EventRecord(
                    id=t.next_id("events"),
                    stack_id=change.stack_id,
                    resource_name=change.resource_name,
                    resource_type=change.resource_type,
                    physical_resource_id=change.physical_resource_id,
                    action=change.action,
                    status=change.status,
                    reason=change.reason,
                    timestamp=now,
                    uuid=str(uuid.uuid4()),
                )
                t.add_event(event, undo)
            case AddNodes(traversal_id=tid):
                _need(t.traversals.get(tid), "traversal", tid)
                check_added(change)
                for node in change.nodes:
                    if (tid, node.key) in t.nodes:
                        raise ValueError(f"traversal node {tid}/{node.key}: already exists")
                    t.put_node(stamped(node, now), undo)
            case AddTimer(traversal_id=tid, node_key=key, due_at=due, purpose=purpose):
                _need(t.traversals.get(tid), "traversal", tid)
                timer = TimerRecord(
                    id=t.next_id("timers"),
                    traversal_id=tid,
                    node_key=key,
                    due_at=aware(due, "due_at"),
                    purpose=purpose,
                )
                t.add_timer(timer, undo)
            case DeleteTimers(traversal_id=tid, node_key=key):
                t.drop_timers(tid, key, undo)
            case TakeTimer(timer_id=timer_id):
                _need(t.timers.get(timer_id), "timer", timer_id)
                t.drop_timer(timer_id, undo)
            case _:
                raise TypeError(f"not a journal change: {change!r}")

    # -- events and signals ------------------------------------------------------------
    def list_events(
        self,
        stack_id: str,
        *,
        resource_name: str | None = None,
        after_id: int | None = None,
        limit: int | None = None,
    ) -> list[EventRecord]:
        with self._lock:
            log = list(self._t.events.get(stack_id, ()))
        found = [
            e
            for e in log
            if (resource_name is None or e.resource_name == resource_name)
            and (after_id is None or e.id > after_id)
        ]
        return found[:limit]

    def last_events(self, stack_id: str, limit: int) -> list[EventRecord]:
        with self._lock:
            log = list(self._t.events.get(stack_id, ()))
        return log[::-1][:limit]

    def add_signal(self, stack_id: str, resource_name: str, data: JSONDict) -> int:
        payload = json_copy(data)
        with self._lock:
            _need(self._t.stacks.get(stack_id), "stack", stack_id)
            signal = SignalRecord(
                id=self._t.next_id("signals"),
                stack_id=stack_id,
                resource_name=resource_name,
                data=payload,
                created_at=utcnow(),
            )
            self._t.put_signal(signal, [])
            return signal.id

    # -- API tokens ---------------------------------------------------------------------
    def add_token(self, token: TokenRecord) -> None:
        with self._lock:
            if token.id in self._tokens.by_id or self._find_token(token.secret_hash):
                raise ValueError(f"token {token.id} exists")
            stamped_token = token if token.created_at else replace(token, {"created_at": utcnow()})
            self._tokens.by_id[token.id] = stamped_token

    def _find_token(self, secret_hash: str) -> TokenRecord | None:
        """By a scan: the hashes compared in constant time (they are secrets'
        stand-ins; ``Tokens.verify`` compares again)."""
        tokens = self._tokens.by_id.values()
        return next((t for t in tokens if hmac.compare_digest(t.secret_hash, secret_hash)), None)

    def find_token(self, secret_hash: str) -> TokenRecord | None:
        with self._lock:
            return self._find_token(secret_hash)

    def list_tokens(self, project: str | None = None) -> list[TokenRecord]:
        with self._lock:
            found = [t for t in self._tokens.by_id.values() if project in (None, t.project)]
        return sorted(found, key=lambda t: (t.created_at or utcnow(), t.id))

    def revoke_tokens(
        self, now: datetime, *, token_id: str | None = None, stack_id: str | None = None
    ) -> int:
        if (token_id is None) == (stack_id is None):
            raise ValueError("revoke_tokens takes exactly one of token_id and stack_id")
        with self._lock:
            hits = [
                t
                for t in self._tokens.by_id.values()
                if t.revoked_at is None
                and (t.id == token_id if token_id is not None else t.stack_id == stack_id)
            ]
            for t in hits:
                self._tokens.by_id[t.id] = replace(t, {"revoked_at": aware(now, "revoked_at")})
        return len(hits)

    def pending_signals(self, stack_id: str, resource_name: str) -> list[SignalRecord]:
        with self._lock:
            found = [
                detach(g)
                for g in self._t.signals.values()
                if g.stack_id == stack_id and g.resource_name == resource_name and not g.consumed
            ]
        return sorted(found, key=lambda g: g.id)

    # -- running processes and what operators count (_memory_processes) -------------------
    def beat(self, record: ProcessRecord) -> None:
        self._processes.beat(record)

    def list_processes(self) -> list[ProcessRecord]:
        return self._processes.list_processes()

    def forget_process(self, process_id: str) -> None:
        self._processes.forget_process(process_id)

    def leases_held(self) -> dict[str, tuple[int, int]]:
        return self._processes.leases_held()

    def count_by_state(self) -> dict[str, dict[str, int]]:
        return self._processes.count_by_state()

    def queue_depths(self) -> dict[str, dict[str, int]]:
        return self._processes.queue_depths()


class _TokenTable:
    """API tokens: a dict under the store's lock (never part of a batch)."""

    def __init__(self) -> None:
        self.by_id: dict[str, TokenRecord] = {}


def _need(found: R | None, what: str, key: object) -> R:
    if found is None:
        raise NotFound(what, str(key))
    return found


class MemoryWorkflowRows:
    """The primitives (``workflows.WorkflowRows``) of a memory store: its
    tables, under its lock (the journal writes the same rows)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    @property
    def _lock(self) -> threading.Lock:
        return self._store._lock

    def _rows(self, table: wf.Table[Any]) -> dict[str, Any]:
        return self._store._t.workflow_rows[table.name]

    def _check_unique(self, table: wf.Table[Any], record: Any) -> None:
        if not table.unique:
            return
        key = tuple(getattr(record, f) for f in table.unique)
        for other in self._rows(table).values():
            if other.id != record.id and tuple(getattr(other, f) for f in table.unique) == key:
                raise wf.exists_error(table, record)

    def insert(self, table: wf.Table[Any], record: Any) -> None:
        now = utcnow()
        with self._lock:
            rows = self._rows(table)
            if record.id in rows:
                if table.unique:
                    raise wf.exists_error(table, record)
                raise ValueError(f"{table.what} {record.id}: already exists")
            self._check_unique(table, record)
            parent = getattr(record, "task_execution_id", None)
            if table is wf.ACTION_EXECUTIONS and parent is not None:
                _need(self._rows(wf.TASKS).get(parent), wf.TASKS.what, parent)
            self._store._t.put_row(table.name, stamped(record, now), [])

    def get(self, table: wf.Table[Any], row_id: str) -> Any | None:
        with self._lock:
            found = self._rows(table).get(row_id)
            return None if found is None else detach(found)

    def state(self, table: wf.Table[Any], row_id: str) -> tuple[str, str | None] | None:
        with self._lock:
            found = self._rows(table).get(row_id)
            return None if found is None else (found.state, found.state_info)

    def find(
        self, table: wf.Table[Any], project: str, name_or_id: str, namespace: str
    ) -> Any | None:
        with self._lock:
            rows = list(self._rows(table).values())
        by_id = next(
            (
                r
                for r in rows
                if r.id == name_or_id and (r.project == project or r.scope == "public")
            ),
            None,
        )
        named = [r for r in rows if r.name == name_or_id and r.namespace == namespace]
        found = (
            by_id
            or next((r for r in named if r.project == project), None)
            or next((r for r in named if r.scope == "public"), None)
        )
        return None if found is None else detach(found)

    def rows(self, table: wf.Table[Any], q: wf.Query) -> list[Any]:
        with self._lock:
            rows = self._rows(table)
            chosen = [
                r
                for r in rows.values()
                if (q.project is None or r.project == q.project)
                and all(matches(getattr(r, k), w) for k, w in q.filters.items())
            ]
            mark = None if q.marker is None else rows.get(q.marker)
            if q.marker is not None and mark is None:
                raise NotFound(table.what, q.marker)

        def order(r: Any) -> list[Any]:
            return [_row_sort_value(r, k) for k in q.keys]

        chosen = ordered(chosen, order, q.dirs)
        if mark is not None:
            at = order(mark)
            chosen = [r for r in chosen if after(order(r), at, q.dirs)]
        return [detach(r) for r in chosen[: q.limit]]

    def update(self, table: wf.Table[Any], row_id: str, fields: Mapping[str, Any]) -> Any | None:
        now = utcnow()
        with self._lock:
            old = self._rows(table).get(row_id)
            if old is None:
                return None
            new = updated(old, with_updated_at(fields, now))
            self._check_unique(table, new)
            self._store._t.put_row(table.name, new, [])
            return detach(new)

    def delete(self, table: wf.Table[Any], row_id: str) -> bool:
        with self._lock:
            if table is wf.EXECUTIONS:
                return self._delete_execution(row_id)
            rows = self._store._t.workflow_rows
            if rows[table.name].pop(row_id, None) is None:
                return False
            if table is wf.TASKS:  # the cascade to its action executions
                actions = rows[wf.ACTION_EXECUTIONS.name]
                for a in [a for a, x in actions.items() if x.task_execution_id == row_id]:
                    del actions[a]
            return True

    def start_execution(
        self,
        execution: Any,
        traversal: TraversalRecord | None,
        nodes: Sequence[NodeRecord],
    ) -> None:
        if traversal is not None:
            check_traversal(traversal, nodes, {})
        with self._lock:
            self.start_execution_locked(execution, traversal, nodes, utcnow())

    def start_execution_locked(
        self,
        execution: Any,
        traversal: TraversalRecord | None,
        nodes: Sequence[NodeRecord],
        now: datetime,
    ) -> None:
        """:meth:`start_execution` with the store's lock held by the caller
        (a cron trigger's firing holds it for its own change too)."""
        t = self._store._t
        if execution.id in self._rows(wf.EXECUTIONS):
            raise ValueError(f"{wf.EXECUTIONS.what} {execution.id}: already exists")
        if traversal is not None and traversal.id in t.traversals:
            raise ValueError(f"traversal {traversal.id} already exists")
        if traversal is not None:
            execution = replace(execution, {"traversal_id": traversal.id})
        t.put_row(wf.EXECUTIONS.name, stamped(execution, now), [])
        if traversal is not None:
            started = traversal.started_at or now
            t.put_traversal(stamped(replace(traversal, {"started_at": started}), now), [])
            for node in nodes:
                t.put_node(stamped(node, now), [])

    def delete_execution(self, execution_id: str) -> bool:
        with self._lock:
            return self._delete_execution(execution_id)

    def _delete_execution(self, execution_id: str) -> bool:
        rows = self._store._t.workflow_rows
        executions, tasks = rows[wf.EXECUTIONS.name], rows[wf.TASKS.name]
        if execution_id not in executions:
            return False
        ids, frontier = {execution_id}, {execution_id}
        while frontier:
            parents = {k for k, x in tasks.items() if x.execution_id in frontier}
            frontier = {e for e, x in executions.items() if x.task_execution_id in parents}
            ids |= frontier
        self._store._t.drop_executions(ids)
        return True


def _row_sort_value(row: Any, key: str) -> Any:
    if key in ("updated_at", "started_at"):
        return getattr(row, key) or row.created_at
    return getattr(row, key)


class MemoryWorkflows(wf.NamedRows):
    """``store.workflows`` of a memory store."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(MemoryWorkflowRows(store))
