"""The SQL store: SQLite (embedded default) and PostgreSQL (scale-out).

Every public method is one transaction (see :mod:`convection.store._sql_db`
for how each backend runs it); opening a store migrates its database to
head, so a fresh file or an older schema just works.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import platformdirs
import sqlalchemy as sa
from sqlalchemy.engine import Connection, RowMapping

from convection.common import NotFound, collector_paused
from convection.store import _sql_children as children
from convection.store import _sql_processes as procs
from convection.store import _sql_queries as queries
from convection.store import _sql_remote as remote
from convection.store import _sql_rows as rows
from convection.store import _sql_statements as q
from convection.store._fields import (
    check_changes,
    check_stack_query,
    check_stack_traversals,
    check_traversal,
)
from convection.store._sql_apply import apply_batch
from convection.store._sql_db import Database
from convection.store._sql_read import fetch_records
from convection.store._sql_scheduling import SQLSchedules
from convection.store._sql_software import SQLSoftware
from convection.store._sql_workflows import SQLWorkflows
from convection.store._time import aware, utcnow
from convection.store.api import (
    Change,
    EventRecord,
    JSONDict,
    NewStack,
    NodeRecord,
    Notice,
    ResourceRecord,
    SignalRecord,
    StackExists,
    StackRecord,
    StaleTraversal,
    StartedStack,
    Store,
    TemplateRecord,
    TimerRecord,
    TokenRecord,
    TraversalRecord,
    TraversalStart,
    UpdateStack,
)
from convection.store.memory import MemoryStore
from convection.store.processes import ProcessRecord
from convection.store.scheduling import ScheduleStore
from convection.store.schema import api_tokens, events, stacks
from convection.store.software import SoftwareStore
from convection.store.workflows import UpdateExecution, WorkflowStore

__all__ = ["SQLStore", "default_url", "open_store"]


def default_url() -> str:
    """An SQLite file in the user's data directory (created if missing)."""
    directory = Path(platformdirs.user_data_dir("convection"))
    directory.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{directory / 'convection.db'}"


def open_store(url: str | None = None) -> Store:
    """``memory://``, an ``sqlite:///`` file or a ``postgresql://`` URL."""
    url = url or default_url()
    if url.startswith("memory:"):
        return MemoryStore()
    return SQLStore(url)


#: Changes of a traversal's owner row: a batch with one locks the owner's
#: row for update, not share (``_sql_queries.is_current``).
_OWNER_UPDATES = (UpdateStack, UpdateExecution)


def _chunks(ids: Sequence[str], size: int = 500) -> list[list[str]]:
    """``IN`` lists of a bounded size (SQLite caps bound parameters)."""
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]


def _violation(exc: sa.exc.IntegrityError) -> str:
    """'unique', 'foreign' or '' for the constraint an IntegrityError broke."""
    state = getattr(exc.orig, "sqlstate", None)
    text = str(exc.orig)
    if state == "23505" or "UNIQUE constraint" in text:
        return "unique"
    if state == "23503" or "FOREIGN KEY constraint" in text:
        return "foreign"
    return ""


class SQLStore:
    """The :class:`~convection.store.api.Store` over SQLAlchemy Core."""

    def __init__(self, url: str) -> None:
        self._db = Database(url)
        try:
            self._db.upgrade()
        except BaseException:
            self._db.close()
            raise
        #: Heat's software configs and deployments (:mod:`.software`).
        self.software: SoftwareStore = SQLSoftware(self._db)
        #: Workflow definitions and executions (:mod:`.workflows`).
        self.workflows: WorkflowStore = SQLWorkflows(self._db)
        #: Stored environments and cron triggers (:mod:`.scheduling`).
        self.schedules: ScheduleStore = SQLSchedules(self._db)

    @property
    def url(self) -> str:
        return self._db.url.render_as_string(hide_password=True)

    def close(self) -> None:
        self._db.close()

    def _first(self, query: sa.Select[Any], **params: Any) -> RowMapping | None:
        return self._db.read(lambda conn: conn.execute(query, params).mappings().first())

    def _all(self, query: sa.Select[Any], **params: Any) -> Sequence[RowMapping]:
        return self._db.read(lambda conn: conn.execute(query, params).mappings().all())

    # -- stacks and templates -------------------------------------------------
    def create_stack(self, stack: StackRecord) -> None:
        values = rows.record_values(stack, utcnow())

        def run(conn: Connection) -> None:
            conn.execute(stacks.insert().values(values))

        try:
            self._db.write(run)
        except sa.exc.IntegrityError as exc:
            kind = _violation(exc)
            if kind == "unique":
                raise StackExists(stack.project, stack.name) from exc
            if kind == "foreign":
                raise ValueError(
                    f"stack {stack.id}: unknown template_id, prev_template_id or parent_id"
                ) from exc
            raise

    def get_stack(self, project: str, name_or_id: str) -> StackRecord | None:
        def run(conn: Connection) -> StackRecord | None:
            by_id = {"project": project, "id": name_or_id}
            row = conn.execute(q.STACK_OF_PROJECT, by_id).mappings().first()
            if row is None:
                by_name = {"project": project, "name": name_or_id}
                row = conn.execute(q.LIVE_STACK_BY_NAME, by_name).mappings().first()
            return None if row is None else rows.stack(row)

        return self._db.read(run)

    def get_stack_by_id(self, stack_id: str) -> StackRecord | None:
        row = self._first(q.STACK_BY_ID, id=stack_id)
        return None if row is None else rows.stack(row)

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
        where = queries.stack_filters(
            include_deleted=include_deleted,
            parent_id=parent_id,
            show_nested=show_nested,
            filters=accepted,
        )
        return self._db.read(
            lambda conn: queries.list_stacks(
                conn, project, where, sort_keys, sort_dir, limit, marker
            )
        )

    def purge_stack(self, stack_id: str) -> None:
        self._db.write(lambda conn: queries.purge(conn, stack_id))

    def reserve_resources(self, root_id: str, delta: int, limit: int) -> bool:
        # One conditional UPDATE: concurrent children of one root cannot both
        # pass a check that only one of them fits.
        new_total = stacks.c.nested_resources + delta
        stmt = stacks.update().where(stacks.c.id == root_id)
        if delta > 0 and limit >= 0:
            stmt = stmt.where(stacks.c.resource_count + new_total <= limit)
        stmt = stmt.values(nested_resources=sa.case((new_total < 0, 0), else_=new_total))
        return bool(self._db.write(lambda conn: conn.execute(stmt).rowcount) == 1)

    def put_template(self, template: JSONDict, environment: JSONDict, files: dict[str, str]) -> int:
        values = {
            "template": template,
            "environment": environment,
            "files": files,
            "created_at": utcnow(),
        }
        return int(
            self._db.write(lambda conn: conn.execute(q.INSERT_TEMPLATE, values).scalar_one())
        )

    def start_stacks(self, new: Sequence[NewStack], *, limit: int) -> list[StartedStack] | None:
        check_stack_traversals([n.traversal for n in new])
        for n in new:
            check_traversal(n.traversal, n.nodes, {})
        check_changes([e for n in new for e in n.events])
        if not new:
            return []
        now = utcnow()
        try:
            return self._db.write(lambda conn: children.start_stacks(conn, new, limit, now))
        except children.NoRoom:
            return None
        except sa.exc.IntegrityError as exc:
            if _violation(exc) == "unique":
                clash = self._clash(new)
                raise StackExists(clash.project, clash.name) from exc
            raise

    def _clash(self, new: Sequence[NewStack]) -> StackRecord:
        """The stack of ``new`` whose name a live stack took (or the first)."""
        for n in new:
            if self.get_stack(n.stack.project, n.stack.name) is not None:
                return n.stack
        return new[0].stack

    def get_template(self, template_id: int) -> TemplateRecord:
        with (
            collector_paused()
        ):  # a big template is 100,000s of containers: see convection.common.gc
            row = self._first(q.TEMPLATE_BY_ID, id=template_id)
        if row is None:
            raise NotFound("template", str(template_id))
        return rows.template(row)

    # -- resources --------------------------------------------------------------
    def add_resource(self, resource: ResourceRecord) -> int:
        return self.add_resources([resource])[0]

    def add_resources(self, resources: Sequence[ResourceRecord]) -> list[int]:
        if not resources:
            return []
        columns = rows.record_columns(resources, utcnow(), drop=("id",))
        try:
            ids = self._db.write(
                lambda conn: queries.insert_resources(conn, columns, len(resources))
            )
        except sa.exc.IntegrityError as exc:
            if _violation(exc) != "foreign":
                raise
            raise NotFound("stack", ", ".join(sorted({r.stack_id for r in resources}))) from exc
        return ids

    def get_resource(self, resource_id: int) -> ResourceRecord | None:
        row = self._first(q.RESOURCE_BY_ID, id=resource_id)
        return None if row is None else rows.resource(row)

    def list_resources(
        self, stack_id: str, *, current_only: bool = False, names: Collection[str] | None = None
    ) -> list[ResourceRecord]:
        if names is not None:
            return self._resources_named(stack_id, current_only, sorted(set(names)))
        query = q.CURRENT_RESOURCES_OF_STACK if current_only else q.RESOURCES_OF_STACK
        params = {"stack_id": stack_id}
        return self._db.read(lambda conn: fetch_records(conn, query, params, ResourceRecord))

    def _resources_named(
        self, stack_id: str, current_only: bool, names: list[str]
    ) -> list[ResourceRecord]:
        """A few rows by name (a list bound per call: not the fast path's
        statements compiled once)."""
        query = q.CURRENT_RESOURCES_NAMED if current_only else q.RESOURCES_NAMED

        def run(conn: Connection) -> list[ResourceRecord]:
            found: list[ResourceRecord] = []
            for chunk in _chunks(names):
                params = {"stack_id": stack_id, "names": chunk}
                found.extend(rows.resource(r) for r in conn.execute(query, params).mappings())
            return sorted(found, key=lambda r: r.id)

        return self._db.read(run) if names else []

    # -- traversals --------------------------------------------------------------
    def start_traversal(
        self, traversal: TraversalRecord, nodes: Sequence[NodeRecord], stack_fields: JSONDict
    ) -> None:
        check_traversal(traversal, nodes, stack_fields)
        now = utcnow()
        try:
            self._db.write(
                lambda conn: queries.start_traversal(conn, traversal, nodes, stack_fields, now)
            )
        except sa.exc.IntegrityError as exc:
            raise ValueError(f"traversal {traversal.id} already exists") from exc

    def start_traversals(self, starts: Sequence[TraversalStart]) -> None:
        check_stack_traversals([start.traversal for start in starts])
        for start in starts:
            check_traversal(start.traversal, start.nodes, start.stack_fields)
        check_changes([e for start in starts for e in start.events])
        now = utcnow()

        def run(conn: Connection) -> None:
            children.start_traversals(conn, starts, now)

        try:
            self._db.write(run)
        except sa.exc.IntegrityError as exc:
            raise ValueError("a traversal of the batch already exists") from exc

    def get_traversal(self, traversal_id: str) -> TraversalRecord | None:
        row = self._first(q.TRAVERSAL_BY_ID, id=traversal_id)
        return None if row is None else rows.traversal(row)

    def active_traversals(self) -> list[TraversalRecord]:
        return self._db.read(queries.active_traversals)

    def scan_active(
        self, owner: str, kinds: Collection[str] | None = None
    ) -> tuple[list[str], list[TraversalRecord]]:
        return self._db.read(lambda conn: queries.scan_active(conn, owner, kinds))

    def take_traversal(
        self, traversal_id: str, owner: str, lease_until: datetime, now: datetime
    ) -> bool:
        params = {
            "b_id": traversal_id,
            "b_owner": owner,
            "b_until": aware(lease_until, "lease_until"),
            "b_now": aware(now, "now"),
        }
        taken = self._db.write(lambda conn: conn.execute(q.TAKE_TRAVERSAL, params).rowcount)
        return bool(taken == 1)

    def renew_traversals(
        self, traversal_ids: Sequence[str], owner: str, lease_until: datetime
    ) -> set[str]:
        until = aware(lease_until, "lease_until")

        def run(conn: Connection) -> set[str]:
            held: set[str] = set()
            for chunk in _chunks(traversal_ids):
                params = {"b_ids": chunk, "b_owner": owner, "b_until": until}
                held.update(conn.execute(q.RENEW_TRAVERSALS, params).scalars())
            return held

        return self._db.write(run) if traversal_ids else set()

    def release_traversals(self, traversal_ids: Sequence[str], owner: str) -> None:
        def run(conn: Connection) -> None:
            for chunk in _chunks(traversal_ids):
                conn.execute(q.RELEASE_TRAVERSALS, {"b_ids": chunk, "b_owner": owner})

        if traversal_ids:
            self._db.write(run)

    def list_nodes(self, traversal_id: str) -> list[NodeRecord]:
        params = {"traversal_id": traversal_id}
        return self._db.read(
            lambda conn: fetch_records(conn, q.NODES_OF_TRAVERSAL, params, NodeRecord)
        )

    def get_node(self, traversal_id: str, key: str) -> NodeRecord | None:
        row = self._first(q.NODE_BY_KEY, traversal_id=traversal_id, key=key)
        return None if row is None else rows.node(row)

    def get_nodes(self, traversal_id: str, keys: Sequence[str]) -> list[NodeRecord]:
        def run(conn: Connection) -> list[NodeRecord]:
            found: list[NodeRecord] = []
            for chunk in _chunks(list(dict.fromkeys(keys))):
                params = {"traversal_id": traversal_id, "keys": chunk}
                found.extend(rows.node(r) for r in conn.execute(q.NODES_BY_KEYS, params).mappings())
            return found

        return self._db.read(run) if keys else []

    def claim_ready(
        self, traversal_id: str, owner: str, limit: int, lease_until: datetime
    ) -> list[NodeRecord]:
        return self._db.write(
            lambda conn: queries.claim(conn, traversal_id, owner, limit, lease_until)
        )

    def claim_many(
        self, wanted: Sequence[tuple[str, int]], owner: str, lease_until: datetime
    ) -> dict[str, list[NodeRecord]]:
        until = aware(lease_until, "lease_until")

        def run(conn: Connection) -> dict[str, list[NodeRecord]]:
            return children.claim_many(conn, wanted, owner, until)

        return self._db.write(run) if wanted else {}

    def count_unfinished(self, traversal_id: str) -> int:
        params = {"traversal_id": traversal_id}
        return int(self._db.read(lambda conn: conn.execute(q.UNFINISHED, params).scalar()) or 0)

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

        def run(conn: Connection) -> NodeRecord | None:
            return remote.take(conn, traversal_id, key, attempt, owner, until, claimed_by)

        return self._db.write(run)

    def renew_nodes(self, owner: str, lease_until: datetime) -> set[tuple[str, str]]:
        until = aware(lease_until, "lease_until")
        return self._db.write(lambda conn: remote.renew(conn, owner, until))

    def notify(self, channel: str, payload: str = "") -> None:
        if not self._db.is_sqlite:
            self._db.write(lambda conn: remote.send(conn, [Notice(channel, payload)]))

    def reclaim_expired(self, now: datetime) -> int:
        return int(self._db.write(lambda conn: conn.execute(q.RECLAIM, {"now": now}).rowcount))

    def due_timers(self, now: datetime, limit: int) -> list[TimerRecord]:
        return [rows.timer(r) for r in self._all(q.DUE_TIMERS, now=now, limit=limit)]

    def next_timer_due(self, traversal_id: str | None = None) -> datetime | None:
        if traversal_id is None:
            query, params = q.NEXT_DUE, {}
        else:
            query, params = q.NEXT_DUE_OF_TRAVERSAL, {"traversal_id": traversal_id}
        value: datetime | None = self._db.read(lambda conn: conn.execute(query, params).scalar())
        return value

    # -- journal -------------------------------------------------------------------
    def apply(self, changes: Sequence[Change], *, traversal_id: str | None = None) -> None:
        check_changes(changes)
        if not changes and traversal_id is None:
            return
        lock: queries.Lock = "share"
        if any(isinstance(c, _OWNER_UPDATES) for c in changes):
            lock = "update"
        now = utcnow()

        fences, notices, rows_changes = remote.split(changes, now)

        def run(conn: Connection) -> None:
            remote.check_fences(conn, fences)
            if traversal_id is not None and not queries.is_current(conn, traversal_id, lock):
                raise StaleTraversal(traversal_id)
            apply_batch(conn, rows_changes, now)
            remote.send(conn, notices)

        try:
            self._db.write(run)
        except sa.exc.IntegrityError as exc:
            raise self._explain(changes) from exc

    def apply_many(self, batches: Sequence[tuple[str | None, Sequence[Change]]]) -> list[bool]:
        for _, changes in batches:
            check_changes(changes)
        now = utcnow()

        lock: queries.Lock = "share"
        if any(isinstance(c, _OWNER_UPDATES) for _, changes in batches for c in changes):
            lock = "update"
        ids = [tid for tid, _ in batches if tid is not None]

        def run(conn: Connection) -> list[bool]:
            current = children.current_among(conn, ids, lock) if ids else set()
            stale = [tid is not None and tid not in current for tid, _ in batches]
            merged = [c for (_, cs), out in zip(batches, stale, strict=True) if not out for c in cs]
            fences, notices, rows_changes = remote.split(merged, now)
            remote.check_fences(conn, fences)
            apply_batch(conn, rows_changes, now)
            remote.send(conn, notices)
            return stale

        try:
            return self._db.write(run)
        except sa.exc.IntegrityError as exc:
            raise self._explain([c for _, changes in batches for c in changes]) from exc

    def _explain(self, changes: Sequence[Change]) -> Exception:
        """Name the stack constraint a failed batch broke, as the memory store
        does: only UpdateStack can (a template or parent that does not exist,
        or a live name taken). Runs after the rollback, off the hot path."""
        for change in changes:
            if not isinstance(change, UpdateStack):
                continue
            fields = change.fields
            for key in ("template_id", "prev_template_id"):
                if (
                    fields.get(key) is not None
                    and self._first(q.TEMPLATE_BY_ID, id=fields[key]) is None
                ):
                    return NotFound("template", str(fields[key]))
            if (
                fields.get("parent_id") is not None
                and self.get_stack_by_id(fields["parent_id"]) is None
            ):
                return NotFound("stack", fields["parent_id"])
            stack = self.get_stack_by_id(change.stack_id)
            if stack is None or fields.get("deleted_at", stack.deleted_at) is not None:
                continue
            project = fields.get("project", stack.project)
            name = fields.get("name", stack.name)
            other = self._first(q.LIVE_STACK_BY_NAME, project=project, name=name)
            if other is not None and other["id"] != stack.id:
                return StackExists(project, name)
        return ValueError("the batch broke a database constraint")

    # -- events and signals ------------------------------------------------------------
    def list_events(
        self,
        stack_id: str,
        *,
        resource_name: str | None = None,
        after_id: int | None = None,
        limit: int | None = None,
    ) -> list[EventRecord]:
        query = q.EVENTS_OF_STACK
        if resource_name is not None:
            query = query.where(events.c.resource_name == resource_name)
        if after_id is not None:
            query = query.where(events.c.id > after_id)
        query = query.order_by(events.c.id).limit(limit)
        return [rows.event(r) for r in self._all(query, stack_id=stack_id)]

    def last_events(self, stack_id: str, limit: int) -> list[EventRecord]:
        query = q.EVENTS_OF_STACK.order_by(events.c.id.desc()).limit(limit)
        return [rows.event(r) for r in self._all(query, stack_id=stack_id)]

    def add_signal(self, stack_id: str, resource_name: str, data: JSONDict) -> int:
        values: dict[str, Any] = {
            "stack_id": stack_id,
            "resource_name": resource_name,
            "data": data,
            "created_at": utcnow(),
            "consumed": False,
        }
        try:
            return int(
                self._db.write(lambda conn: conn.execute(q.INSERT_SIGNAL, values).scalar_one())
            )
        except sa.exc.IntegrityError as exc:
            if _violation(exc) != "foreign":
                raise
            raise NotFound("stack", stack_id) from exc

    def pending_signals(self, stack_id: str, resource_name: str) -> list[SignalRecord]:
        found = self._all(q.PENDING_SIGNALS, stack_id=stack_id, resource_name=resource_name)
        return [rows.signal(r) for r in found]

    # -- API tokens ---------------------------------------------------------------------
    def add_token(self, token: TokenRecord) -> None:
        values = rows.record_values(token, utcnow())
        self._db.write(lambda conn: conn.execute(api_tokens.insert(), values))

    def find_token(self, secret_hash: str) -> TokenRecord | None:
        query = sa.select(api_tokens).where(api_tokens.c.secret_hash == sa.bindparam("h"))
        row = self._first(query, h=secret_hash)
        return None if row is None else rows.token(row)

    def list_tokens(self, project: str | None = None) -> list[TokenRecord]:
        query = sa.select(api_tokens).order_by(api_tokens.c.created_at, api_tokens.c.id)
        if project is not None:
            query = query.where(api_tokens.c.project == project)
        return [rows.token(r) for r in self._all(query)]

    def revoke_tokens(
        self, now: datetime, *, token_id: str | None = None, stack_id: str | None = None
    ) -> int:
        if (token_id is None) == (stack_id is None):
            raise ValueError("revoke_tokens takes exactly one of token_id and stack_id")
        column = api_tokens.c.id if token_id is not None else api_tokens.c.stack_id
        statement = (
            api_tokens.update()
            .where(column == (token_id or stack_id), api_tokens.c.revoked_at.is_(None))
            .values(revoked_at=aware(now, "revoked_at"))
        )
        return int(self._db.write(lambda conn: conn.execute(statement).rowcount))

    # -- running processes and what operators count (_sql_processes) ----------------------
    def beat(self, record: ProcessRecord) -> None:
        procs.beat(self._db, record)

    def list_processes(self) -> list[ProcessRecord]:
        return procs.list_processes(self._db)

    def forget_process(self, process_id: str) -> None:
        procs.forget_process(self._db, process_id)

    def leases_held(self) -> dict[str, tuple[int, int]]:
        return procs.leases_held(self._db)

    def count_by_state(self) -> dict[str, dict[str, int]]:
        return procs.count_by_state(self._db)

    def queue_depths(self) -> dict[str, dict[str, int]]:
        return procs.queue_depths(self._db)
