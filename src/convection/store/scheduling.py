"""Stored environments and cron triggers: Mistral's ``environments_v2`` and
``cron_triggers_v2`` rows, and the store's port for them (``store.schedules``).

Both are read and written outside any traversal, one transaction per call,
with one exception that is the reason this port exists: **firing a cron
trigger** (:meth:`ScheduleStore.fire_cron_trigger`) is one transaction
that moves the trigger on by compare-and-set on the ``next_execution_time``
it read (Mistral's ``update_cron_trigger(query_filter=...)``) and creates
the execution it starts, with its traversal and first nodes. Two engines
that read the same due trigger therefore start one execution between them;
an engine that dies before the commit started nothing and moved nothing,
so the next one fires it; one that dies after it leaves a started
execution that any engine takes up.

Both tables are unique per (name, project), as Mistral's are. Their CRUD
goes through the same :class:`~convection.store.workflows.Rows` code as
the workflow rows; the duplicate messages are Mistral's
(``mistral/db/v2/sqlalchemy/api.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Protocol

from convection.common import Conflict
from convection.store._traversals import WORKFLOW, NodeRecord, TraversalRecord
from convection.store.workflows import (
    EXECUTIONS,
    ExecutionRecord,
    Filters,
    Rows,
    SortDir,
    Table,
    WorkflowRows,
    check_record,
)

JSONDict = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvironmentRecord:
    """A stored environment: ``variables`` become an execution's ``env``
    when it names this one (``params.env`` given as a string)."""

    id: str
    project: str
    name: str
    description: str | None = None
    variables: JSONDict = field(default_factory=dict)
    scope: str = "private"
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CronTriggerRecord:
    """A cron trigger: starts ``workflow_id`` with ``workflow_input`` and
    ``workflow_params`` at ``next_execution_time``, then at the pattern's
    next time, ``remaining_executions`` times (None: for ever)."""

    id: str
    project: str
    name: str
    pattern: str | None = None
    first_execution_time: datetime | None = None
    next_execution_time: datetime
    remaining_executions: int | None = None
    workflow_name: str
    workflow_id: str
    workflow_namespace: str = ""
    workflow_input: JSONDict = field(default_factory=dict)
    workflow_params: JSONDict = field(default_factory=dict)
    scope: str = "private"
    created_at: datetime | None = None
    updated_at: datetime | None = None


class EnvironmentExists(Conflict):
    """An environment of that name exists in the project (Mistral's 409)."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__("Duplicate entry for Environment: ['name', 'project_id']")


class CronTriggerExists(Conflict):
    """A cron trigger of that name exists in the project (Mistral's 409)."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"Duplicate entry for cron trigger {name}: ['name', 'project_id']")


_UNIQUE = ("name", "project")

ENVIRONMENTS: Final = Table(
    "environment", "environments", EnvironmentRecord,
    ("name", "scope", "created_at", "updated_at", "id"),
    ("id", "name", "scope", "description"),
    unique=_UNIQUE, exists=lambda r: EnvironmentExists(r.name),
)  # fmt: skip
CRON_TRIGGERS: Final = Table(
    "cron trigger", "cron_triggers", CronTriggerRecord,
    ("name", "workflow_name", "next_execution_time", "scope", "created_at", "updated_at", "id"),
    ("id", "name", "workflow_name", "workflow_id", "pattern", "scope", "remaining_executions"),
    unique=_UNIQUE, exists=lambda r: CronTriggerExists(r.name),
)  # fmt: skip
TABLES: Final = (ENVIRONMENTS, CRON_TRIGGERS)

#: JSON-valued fields of each record (the memory store copies them).
JSON_FIELDS: Final[dict[type[Any], tuple[str, ...]]] = {
    EnvironmentRecord: ("variables",),
    CronTriggerRecord: ("workflow_input", "workflow_params"),
}


@dataclass(frozen=True, slots=True)
class CronFire:
    """One firing of a cron trigger, written whole or not at all.

    ``due`` is the ``next_execution_time`` the firing engine read: the
    write happens only if the row still has it (compare-and-set), so of
    two engines firing the same due time one wins. ``next_time`` None
    means this was its last run: the trigger is deleted (Mistral deletes a
    trigger whose ``remaining_executions`` reaches 0). ``execution``
    None moves the trigger on without starting anything (its workflow
    could not start: Mistral logs that and moves on too)."""

    trigger_id: str
    due: datetime
    next_time: datetime | None
    remaining: int | None
    execution: ExecutionRecord | None = None
    traversal: TraversalRecord | None = None
    nodes: Sequence[NodeRecord] = ()


def check_fire(fire: CronFire) -> None:
    """Refuse a fire whose execution and traversal do not belong together
    (the backends check the traversal's nodes, as ``start_execution`` does)."""
    if fire.execution is None:
        return
    check_record(EXECUTIONS, fire.execution)
    traversal = fire.traversal
    if traversal is not None and (
        traversal.kind != WORKFLOW or traversal.execution_id != fire.execution.id
    ):
        raise ValueError(
            f"traversal {traversal.id} is not a workflow traversal of execution {fire.execution.id}"
        )


class CronRows(Protocol):
    """What a backend implements beyond the workflow rows' primitives
    (``workflows.WorkflowRows``, which serve the CRUD of both tables)."""

    def due(self, now: datetime, limit: int) -> list[CronTriggerRecord]:
        """Triggers whose ``next_execution_time`` is at or before ``now``,
        soonest first (an index on ``next_execution_time``: O(due))."""
        ...

    def fire(self, fire: CronFire) -> bool:
        """Apply ``fire`` (see :class:`CronFire`); False when the trigger
        moved on or went since it was read (another engine fired it)."""
        ...


class ScheduleStore(Protocol):
    """Stored environments and cron triggers (``store.schedules``).

    Every method is one transaction. ``create_*`` raises
    :class:`EnvironmentExists` / :class:`CronTriggerExists` on a taken
    (name, project); ``get_*_named`` finds the project's own row by name,
    else a public one; listings page as ``store.workflows``' do."""

    def create_environment(self, record: EnvironmentRecord) -> None: ...
    def get_environment(self, env_id: str) -> EnvironmentRecord | None: ...
    def get_environment_named(self, project: str, name: str) -> EnvironmentRecord | None: ...
    def list_environments(
        self,
        project: str | None,
        *,
        filters: Filters | None = None,
        sort_keys: Sequence[str] | None = None,
        sort_dir: SortDir = "asc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> list[EnvironmentRecord]: ...  # fmt: skip
    def update_environment(
        self, env_id: str, fields: Mapping[str, Any]
    ) -> EnvironmentRecord | None: ...
    def delete_environment(self, env_id: str) -> bool: ...

    def create_cron_trigger(self, record: CronTriggerRecord) -> None: ...
    def get_cron_trigger(self, trigger_id: str) -> CronTriggerRecord | None: ...
    def get_cron_trigger_named(self, project: str, name: str) -> CronTriggerRecord | None: ...
    def list_cron_triggers(
        self,
        project: str | None,
        *,
        filters: Filters | None = None,
        sort_keys: Sequence[str] | None = None,
        sort_dir: SortDir = "asc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> list[CronTriggerRecord]: ...  # fmt: skip
    def delete_cron_trigger(self, trigger_id: str) -> bool: ...

    def due_cron_triggers(self, now: datetime, limit: int = 100) -> list[CronTriggerRecord]:
        """Every project's triggers due at ``now``, soonest first."""
        ...

    def fire_cron_trigger(self, fire: CronFire) -> bool:
        """One firing (:class:`CronFire`); whether this call made it."""
        ...


def _named(rows: Rows[Any], project: str, name: str) -> Any | None:
    """The project's row of that name, else a public one."""
    own = rows.rows(project, filters={"name": name}, limit=1)
    if own:
        return own[0]
    public = rows.rows(None, filters={"name": name, "scope": "public"}, limit=1)
    return public[0] if public else None


class NamedSchedules:
    """:class:`ScheduleStore` over a backend's row primitives and its
    :class:`CronRows`."""

    def __init__(self, backend: WorkflowRows, cron: CronRows) -> None:
        self.cron = cron
        e = self._environments = Rows(backend, ENVIRONMENTS)
        self.create_environment, self.get_environment = e.create, e.get
        self.list_environments, self.update_environment = e.rows, e.update
        self.delete_environment = e.delete
        c = self._triggers = Rows(backend, CRON_TRIGGERS)
        self.create_cron_trigger, self.get_cron_trigger = c.create, c.get
        self.list_cron_triggers, self.delete_cron_trigger = c.rows, c.delete

    def get_environment_named(self, project: str, name: str) -> EnvironmentRecord | None:
        found: EnvironmentRecord | None = _named(self._environments, project, name)
        return found

    def get_cron_trigger_named(self, project: str, name: str) -> CronTriggerRecord | None:
        found: CronTriggerRecord | None = _named(self._triggers, project, name)
        return found

    def due_cron_triggers(self, now: datetime, limit: int = 100) -> list[CronTriggerRecord]:
        return self.cron.due(now, limit)

    def fire_cron_trigger(self, fire: CronFire) -> bool:
        check_fire(fire)
        return self.cron.fire(fire)
