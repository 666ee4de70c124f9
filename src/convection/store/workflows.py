"""Workflow rows: Mistral's definitions and executions, the records, their
journal changes and the store's port for them (``store.workflows``).

Two families of rows:

* **definitions** (workflows, workbooks, ad-hoc actions): text uploaded
  through the API, unique per (name, namespace, project), read and written
  outside any traversal, one transaction per call;
* **executions** (workflow executions, task executions, action
  executions): the state of running workflows. A workflow execution owns
  its kernel traversal as a stack does (``traversal_id`` points at the
  current one; ``traversals.execution_id`` points back), and its task and
  action rows are written by the engine through the journal
  (:class:`AddTaskExecution`, :class:`UpdateTaskExecution`, ...), in the
  same ``Store.apply`` batch as the node they belong to: a task's outcome
  and its node's state commit together or not at all, and each batch
  touches the rows of that task only, never the whole execution.

Contexts are stored once (see :class:`ExecutionRecord` and
:class:`TaskExecutionRecord`): a task row holds what the task published,
not its inbound context, which the engine derives.

This module does not import ``api`` (which imports the change types from
here for the ``Change`` union); the traversal records it names live in
``_traversals``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar

from convection.common import Conflict
from convection.store._filters import SortDir as SortDir
from convection.store._filters import Where as Where
from convection.store._filters import checked_where, sort_plan
from convection.store._time import aware
from convection.store._traversals import WORKFLOW, NodeRecord, TraversalRecord

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

JSONDict = dict[str, Any]

#: Mistral's states (``mistral/workflow/states.py``); the store checks a
#: written state is one of these, the engine checks the transitions.
WORKFLOW_STATES: Final = ("IDLE", "RUNNING", "PAUSED", "SUCCESS", "ERROR", "CANCELLED")
TASK_STATES: Final = (
    "IDLE",
    "WAITING",
    "RUNNING",
    "DELAYED",
    "SUCCESS",
    "ERROR",
    "CANCELLED",
    "SKIPPED",
)
ACTION_STATES: Final = ("IDLE", "RUNNING", "PAUSED", "SUCCESS", "ERROR", "CANCELLED")
TASK_TYPES: Final = ("ACTION", "WORKFLOW")
SCOPES: Final = ("private", "public")


# -- definitions ----------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class WorkflowDefinitionRecord:
    """One workflow as uploaded (a document of several workflows is several
    rows; a workbook's workflows are rows named ``workbook.workflow``)."""

    id: str
    project: str
    name: str
    namespace: str = ""
    scope: str = "private"
    #: The workflow's YAML text, as uploaded.
    definition: str = ""
    #: The input as Mistral's API shows it: ``a, b="1"``.
    input: str = ""
    #: ``{"input": [...], "output": [...]}`` as Mistral's API shows it, kept
    #: so that a listing does not parse every definition.
    interface: JSONDict = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkbookRecord:
    id: str
    project: str
    name: str
    namespace: str = ""
    scope: str = "private"
    definition: str = ""
    tags: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionDefinitionRecord:
    """An ad-hoc action (``base`` plus ``base-input``), as uploaded."""

    id: str
    project: str
    name: str
    namespace: str = ""
    scope: str = "private"
    definition: str = ""
    #: As Mistral's API shows it: ``host, username, cmd="ls -l"``.
    input: str = ""
    description: str = ""
    tags: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None


# -- executions -------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionRecord:
    """A workflow execution: its state, its data and its traversal.

    Data is stored once per execution, never per task: ``input`` (as
    given, defaults filled), ``params`` (``env``, ``namespace``,
    ``task_name``, ``notify``...; a sub-workflow's ``env`` is its root's,
    read from ``root_execution_id``'s row rather than copied), and
    ``context``: the execution's own variables (``vars``) and its
    ``global`` publishes, merged in as tasks publish them. ``output`` is
    written when it ends.

    ``definition`` is the workflow's text as it was when the execution
    started: updating the workflow does not change a running execution,
    and a take-up after a crash parses what the execution started with.
    """

    id: str
    project: str
    workflow_id: str
    workflow_name: str
    workflow_namespace: str = ""
    description: str = ""
    state: str = "IDLE"
    state_info: str | None = None
    definition: str = ""
    input: JSONDict = field(default_factory=dict)
    params: JSONDict = field(default_factory=dict)
    output: JSONDict = field(default_factory=dict)
    #: ``{"vars": {...}, "global": {...}}``, as the engine keeps them.
    context: JSONDict = field(default_factory=dict)
    #: The parent's task, for a sub-workflow; None for a top-level one.
    task_execution_id: str | None = None
    #: The top of the tree (None for a top-level execution).
    root_execution_id: str | None = None
    #: The traversal allowed to make progress (as ``StackRecord``'s).
    traversal_id: str | None = None
    tags: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskExecutionRecord:
    """One run of one task of a workflow execution.

    A task row holds what the task *published* (``published``: its
    branch-local variables; its ``global`` publishes go to the execution's
    ``context``), never its inbound context, which the engine derives
    instead of storing: the inbound context of a task is the execution's
    input and ``context`` (vars, globals), overlaid with the published
    data of the tasks that led to it, in order: each of ``predecessors``
    (the task executions whose transitions started this one: one in a
    sequence, several at a ``join``) contributes its own inbound context
    overlaid with its ``published``. The engine keeps these as chained
    mappings over shared values (a 10 MB input is one object however many
    tasks read it), and after a crash rebuilds them from these rows by
    following ``predecessors``.

    ``runtime_context`` is the task's progress that must survive a crash:
    retry counts, with-items progress (indices done, concurrency), the
    reason of a wait. ``node_key`` is the kernel node that runs it.
    ``processed`` is set once its transitions were dispatched;
    ``error_handled`` once an ``on-error`` of an ERROR task fired.
    """

    id: str
    execution_id: str
    project: str
    name: str
    node_key: str | None = None
    state: str = "IDLE"
    state_info: str | None = None
    type: str = "ACTION"
    published: JSONDict = field(default_factory=dict)
    predecessors: list[str] = field(default_factory=list)
    runtime_context: JSONDict = field(default_factory=dict)
    processed: bool = False
    error_handled: bool = False
    created_at: datetime | None = None
    updated_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionExecutionRecord:
    """One run of an action: of a task (``task_execution_id``), or alone
    (``POST /v2/action_executions``, no task). ``accepted`` marks the runs
    that count towards the task's result (a retried action's earlier runs
    do not)."""

    id: str
    project: str
    name: str
    task_execution_id: str | None = None
    state: str = "RUNNING"
    state_info: str | None = None
    accepted: bool = False
    input: JSONDict = field(default_factory=dict)
    output: JSONDict = field(default_factory=dict)
    is_sync: bool = True
    created_at: datetime | None = None
    updated_at: datetime | None = None


# -- journal changes ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class UpdateExecution:
    execution_id: str
    fields: JSONDict


@dataclass(frozen=True, slots=True)
class AddTaskExecution:
    task: TaskExecutionRecord


@dataclass(frozen=True, slots=True)
class UpdateTaskExecution:
    task_id: str
    fields: JSONDict


@dataclass(frozen=True, slots=True)
class AddActionExecution:
    action: ActionExecutionRecord


@dataclass(frozen=True, slots=True)
class UpdateActionExecution:
    action_id: str
    fields: JSONDict


WorkflowChange = (
    UpdateExecution
    | AddTaskExecution
    | UpdateTaskExecution
    | AddActionExecution
    | UpdateActionExecution
)


# -- what each table is, for both stores ------------------------------------------------
#: A table's record type (every one a dataclass, for ``Table.fields``).
Rec = TypeVar("Rec", bound="DataclassInstance")


@dataclass(frozen=True, slots=True)
class Table(Generic[Rec]):
    """A table of workflow rows as both stores see it: one description per
    table, so that one set of CRUD code (:class:`Rows` over a backend's
    :class:`WorkflowRows`) serves them all."""

    #: For messages (``NotFound``): "workflow", "task execution"...
    what: str
    #: The SQL table's name.
    name: str
    record: type[Rec]
    #: Sorting: any of these, ``id`` always the last tie-breaker.
    sort_keys: tuple[str, ...]
    #: Filtering: a value or a list of values (any of).
    filter_keys: tuple[str, ...]
    #: Fields an update may not change.
    fixed: tuple[str, ...] = ("id", "project", "created_at")
    #: The unique key among live rows (definitions only).
    unique: tuple[str, ...] = ()
    #: Checked values of ``state`` when written.
    states: tuple[str, ...] = ()
    #: A listing's sort keys when the caller names none.
    default_sort: tuple[str, ...] = ("created_at",)
    #: The error of a taken unique key, given the record (None: a
    #: definition's :class:`DefinitionExists`).
    exists: Callable[[Any], Exception] | None = None

    def fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self.record))

    def updatable(self) -> frozenset[str]:
        return frozenset(self.fields()) - set(self.fixed)


_DEFINITION_SORT = ("name", "namespace", "scope", "created_at", "updated_at", "id")
_DEFINITION_FILTER = ("id", "name", "namespace", "scope", "created_at", "updated_at")
_UNIQUE = ("name", "namespace", "project")

WORKFLOWS = Table(
    "workflow", "workflow_definitions", WorkflowDefinitionRecord,
    _DEFINITION_SORT, _DEFINITION_FILTER, unique=_UNIQUE,
)  # fmt: skip
WORKBOOKS = Table(
    "workbook", "workbooks", WorkbookRecord, _DEFINITION_SORT, _DEFINITION_FILTER, unique=_UNIQUE
)
ACTIONS = Table(
    "action", "action_definitions", ActionDefinitionRecord,
    _DEFINITION_SORT, _DEFINITION_FILTER, unique=_UNIQUE, default_sort=("name",),
)  # fmt: skip
EXECUTIONS = Table(
    "workflow execution", "workflow_executions", ExecutionRecord,
    ("workflow_name", "state", "created_at", "updated_at", "id"),
    ("id", "workflow_id", "workflow_name", "workflow_namespace", "state", "state_info",
     "description", "task_execution_id", "root_execution_id", "created_at", "updated_at"),
    states=WORKFLOW_STATES,
)  # fmt: skip
TASKS = Table(
    "task execution", "task_executions", TaskExecutionRecord,
    ("name", "state", "created_at", "updated_at", "started_at", "id"),
    ("id", "execution_id", "name", "state", "state_info", "type", "processed", "created_at",
     "updated_at", "started_at", "finished_at"),
    fixed=("id", "project", "execution_id", "created_at"),
    states=TASK_STATES,
)  # fmt: skip
ACTION_EXECUTIONS = Table(
    "action execution", "action_executions", ActionExecutionRecord,
    ("name", "state", "created_at", "updated_at", "id"),
    ("id", "task_execution_id", "name", "state", "state_info", "accepted", "created_at",
     "updated_at"),
    fixed=("id", "project", "task_execution_id", "created_at"),
    states=ACTION_STATES,
)  # fmt: skip
TABLES = (WORKFLOWS, WORKBOOKS, ACTIONS, EXECUTIONS, TASKS, ACTION_EXECUTIONS)

#: Per journal change kind: its table, and how it names its row.
UPDATES: Final[dict[type[Any], tuple[Table[Any], str]]] = {
    UpdateExecution: (EXECUTIONS, "execution_id"),
    UpdateTaskExecution: (TASKS, "task_id"),
    UpdateActionExecution: (ACTION_EXECUTIONS, "action_id"),
}
INSERTS: Final[dict[type[Any], tuple[Table[Any], str]]] = {
    AddTaskExecution: (TASKS, "task"),
    AddActionExecution: (ACTION_EXECUTIONS, "action"),
}

#: Datetime fields of these records (aware UTC, checked on the way in).
DATETIMES = frozenset({"created_at", "updated_at", "started_at", "finished_at"})
#: JSON-valued fields of each record.
JSON_FIELDS: Final[dict[type[Any], tuple[str, ...]]] = {
    WorkflowDefinitionRecord: ("interface", "tags"),
    WorkbookRecord: ("tags",),
    ActionDefinitionRecord: ("tags",),
    ExecutionRecord: ("input", "params", "output", "context", "tags"),
    TaskExecutionRecord: ("published", "predecessors", "runtime_context"),
    ActionExecutionRecord: ("input", "output"),
}


def exists_error(table: Table[Any], record: Any) -> Exception:
    """What a backend raises when ``record`` takes a live row's unique key."""
    if table.exists is not None:
        return table.exists(record)
    return DefinitionExists(table.what, record.name, record.namespace, record.project)


def check_update(table: Table[Any], fields: Mapping[str, Any]) -> None:
    """Refuse unknown or fixed fields, naive datetimes and unknown states."""
    allowed = table.updatable()
    if not fields.keys() <= allowed:
        unknown = sorted(set(fields) - allowed)
        raise ValueError(f"{table.what}: unknown or read-only fields {unknown}")
    check_values(table, fields)


def check_values(table: Table[Any], values: Mapping[str, Any]) -> None:
    for name, value in values.items():
        if isinstance(value, datetime):
            aware(value, f"{table.what}.{name}")
    state = values.get("state")
    if table.states and state is not None and state not in table.states:
        raise ValueError(f"{table.what}: unknown state {state!r}")
    scope = values.get("scope")
    if scope is not None and "scope" in table.fields() and scope not in SCOPES:
        raise ValueError(f"{table.what}: scope must be one of {list(SCOPES)}, not {scope!r}")
    kind = values.get("type")
    if table is TASKS and kind is not None and kind not in TASK_TYPES:
        raise ValueError(f"{table.what}: unknown type {kind!r}")


def check_record(table: Table[Rec], record: Rec) -> None:
    check_values(table, {f: getattr(record, f) for f in table.fields()})


#: Per filter key: a value, a list of values (any of), or a :class:`Where`
#: (Mistral's operators: ``neq``, ``gt``, ``has``...).
Filters = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Query:
    """A listing, checked (:func:`check_query`): what a backend's ``rows``
    runs, so both backends take the same options in one value."""

    project: str | None
    #: Per filter key, its checked condition.
    filters: dict[str, Where]
    #: The sort columns, ``id`` last, and each one's direction (:func:`sort_plan`).
    keys: list[str]
    dirs: list[SortDir]
    limit: int | None
    marker: str | None


def check_query(
    table: Table[Any], filters: Filters | None, sort_keys: Sequence[str], sort_dir: str
) -> dict[str, Where]:
    """Validate a listing's options; each filter as its checked condition."""
    bad = [k for k in sort_keys if k not in table.sort_keys]
    if bad:
        raise ValueError(f"cannot sort {table.what}s by {bad}; allowed: {list(table.sort_keys)}")
    if sort_dir not in ("asc", "desc"):
        raise ValueError(f"sort_dir must be 'asc' or 'desc', not {sort_dir!r}")
    out: dict[str, Where] = {}
    for key, value in (filters or {}).items():
        if key not in table.filter_keys:
            raise ValueError(
                f"cannot filter {table.what}s on {key!r}; allowed: {list(table.filter_keys)}"
            )
        out[key] = checked_where(key, value)
    return out


class DefinitionExists(Conflict):
    """A workflow, workbook or action of that name exists in the namespace
    of the project (the unique key decides, not a prior read). The message
    is Mistral's (``mistral/db/v2/sqlalchemy/api.py``)."""

    _MODELS: Final = {
        "workflow": "WorkflowDefinition",
        "workbook": "Workbook",
        "action": "ActionDefinition",
    }

    def __init__(self, what: str, name: str, namespace: str, project: str) -> None:
        self.what = what
        self.name = name
        self.namespace = namespace
        self.project = project
        model = self._MODELS.get(what, what)
        super().__init__(
            f"Duplicate entry for {model} ['name', 'namespace', 'project_id']: "
            f"{name}, {namespace}, {project}"
        )


# -- the port ------------------------------------------------------------------------------
class WorkflowRows(Protocol):
    """What a backend implements; :class:`WorkflowStore`'s named methods
    are built on these (:class:`Rows`, :class:`NamedRows`)."""

    def insert(self, table: Table[Rec], record: Rec) -> None: ...

    def get(self, table: Table[Rec], row_id: str) -> Rec | None: ...

    def state(self, table: Table[Any], row_id: str) -> tuple[str, str | None] | None:
        """A row's ``state`` and ``state_info`` alone (an engine's check
        between tasks must not read a 10 MB input)."""
        ...

    def find(
        self, table: Table[Rec], project: str, name_or_id: str, namespace: str
    ) -> Rec | None: ...

    def rows(self, table: Table[Rec], q: Query) -> list[Rec]: ...

    def update(self, table: Table[Rec], row_id: str, fields: Mapping[str, Any]) -> Rec | None: ...

    def delete(self, table: Table[Any], row_id: str) -> bool: ...

    def start_execution(
        self,
        execution: ExecutionRecord,
        traversal: TraversalRecord | None,
        nodes: Sequence[NodeRecord],
    ) -> None: ...

    def delete_execution(self, execution_id: str) -> bool: ...


class WorkflowStore(Protocol):
    """Workflow definitions and executions (``store.workflows``).

    Every method is one transaction. Listings are project-scoped
    (``project=None``: every project) and paged as stacks are: sort on the
    table's keys with ``id`` the tie-breaker, filter on its filter keys,
    ``marker`` the id of the last row of the previous page (keyset paging;
    an unknown marker raises ``NotFound``). Unknown keys raise ``ValueError``.
    ``create_*`` of a definition raises :class:`DefinitionExists` on a
    taken (name, namespace, project); ``update_*`` returns the new row or
    None when there is none; ``delete_*`` whether a row went.

    Task and action executions are written by the engine through the
    journal (``Store.apply`` with :class:`AddTaskExecution` and the
    other changes of this module), with the nodes they belong to."""

    # workflows, workbooks, ad-hoc actions
    def create_workflow(self, record: WorkflowDefinitionRecord) -> None: ...
    def get_workflow(
        self, project: str, name_or_id: str, namespace: str = ""
    ) -> WorkflowDefinitionRecord | None: ...
    def list_workflows(
        self,
        project: str | None,
        *,
        filters: Filters | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: SortDir = "asc",
        limit: int | None = None,
        marker: str | None = None,
        sort_dirs: Sequence[str] | None = None,
    ) -> list[WorkflowDefinitionRecord]: ...  # fmt: skip
    def update_workflow(
        self, workflow_id: str, fields: Mapping[str, Any]
    ) -> WorkflowDefinitionRecord | None: ...
    def delete_workflow(self, workflow_id: str) -> bool: ...

    def create_workbook(self, record: WorkbookRecord) -> None: ...
    def get_workbook(
        self, project: str, name_or_id: str, namespace: str = ""
    ) -> WorkbookRecord | None: ...
    def list_workbooks(
        self,
        project: str | None,
        *,
        filters: Filters | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: SortDir = "asc",
        limit: int | None = None,
        marker: str | None = None,
        sort_dirs: Sequence[str] | None = None,
    ) -> list[WorkbookRecord]: ...  # fmt: skip
    def update_workbook(
        self, workbook_id: str, fields: Mapping[str, Any]
    ) -> WorkbookRecord | None: ...
    def delete_workbook(self, workbook_id: str) -> bool: ...

    def create_adhoc_action(self, record: ActionDefinitionRecord) -> None: ...
    def get_adhoc_action(
        self, project: str, name_or_id: str, namespace: str = ""
    ) -> ActionDefinitionRecord | None: ...
    def list_adhoc_actions(
        self,
        project: str | None,
        *,
        filters: Filters | None = None,
        sort_keys: Sequence[str] = ("name",),
        sort_dir: SortDir = "asc",
        limit: int | None = None,
        marker: str | None = None,
        sort_dirs: Sequence[str] | None = None,
    ) -> list[ActionDefinitionRecord]: ...  # fmt: skip
    def update_adhoc_action(
        self, action_id: str, fields: Mapping[str, Any]
    ) -> ActionDefinitionRecord | None: ...
    def delete_adhoc_action(self, action_id: str) -> bool: ...

    # executions
    def create_execution(
        self,
        execution: ExecutionRecord,
        *,
        traversal: TraversalRecord | None = None,
        nodes: Sequence[NodeRecord] = (),
    ) -> None:
        """Insert ``execution``; with ``traversal`` (of kind ``workflow``,
        its ``execution_id`` this execution's), also its traversal and
        nodes, the execution pointed at it: one transaction, so an
        execution is never left without the traversal that runs it."""
        ...

    def get_execution(self, execution_id: str) -> ExecutionRecord | None: ...
    def execution_state(self, execution_id: str) -> tuple[str, str | None] | None:
        """(state, state_info) of an execution, reading nothing else."""
        ...

    def list_executions(
        self,
        project: str | None,
        *,
        filters: Filters | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: SortDir = "asc",
        limit: int | None = None,
        marker: str | None = None,
        sort_dirs: Sequence[str] | None = None,
    ) -> list[ExecutionRecord]: ...  # fmt: skip
    def update_execution(
        self, execution_id: str, fields: Mapping[str, Any]
    ) -> ExecutionRecord | None:
        """Outside the journal (a description); the engine writes state
        through ``Store.apply`` with :class:`UpdateExecution`."""
        ...

    def delete_execution(self, execution_id: str) -> bool:
        """The execution, its sub-workflow executions (recursively), their
        tasks, action executions, traversals, nodes and timers."""
        ...

    # tasks and action executions
    def get_task(self, task_id: str) -> TaskExecutionRecord | None: ...
    def list_tasks(
        self,
        project: str | None,
        *,
        filters: Filters | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: SortDir = "asc",
        limit: int | None = None,
        marker: str | None = None,
        sort_dirs: Sequence[str] | None = None,
    ) -> list[TaskExecutionRecord]: ...  # fmt: skip

    def create_action_execution(self, record: ActionExecutionRecord) -> None:
        """An action run outside any workflow (no ``task_execution_id``);
        a task's action runs go through the journal."""
        ...

    def get_action_execution(self, action_id: str) -> ActionExecutionRecord | None: ...
    def list_action_executions(
        self,
        project: str | None,
        *,
        filters: Filters | None = None,
        sort_keys: Sequence[str] = ("created_at",),
        sort_dir: SortDir = "asc",
        limit: int | None = None,
        marker: str | None = None,
        sort_dirs: Sequence[str] | None = None,
    ) -> list[ActionExecutionRecord]: ...  # fmt: skip
    def delete_action_execution(self, action_id: str) -> bool: ...


class Rows(Generic[Rec]):
    """One table's create, get, list, update and delete over a backend:
    the checks every table's named methods make, written once."""

    def __init__(self, backend: WorkflowRows, table: Table[Rec]) -> None:
        self.backend = backend
        self.table = table

    def create(self, record: Rec) -> None:
        check_record(self.table, record)
        self.backend.insert(self.table, record)

    def find(self, project: str, name_or_id: str, namespace: str = "") -> Rec | None:
        """A definition by id or by name (see the backends' ``find``)."""
        return self.backend.find(self.table, project, name_or_id, namespace)

    def get(self, row_id: str) -> Rec | None:
        return self.backend.get(self.table, row_id)

    def rows(
        self, project: str | None, *, filters: Filters | None = None,
        sort_keys: Sequence[str] | None = None, sort_dir: SortDir = "asc",
        limit: int | None = None, marker: str | None = None,
        sort_dirs: Sequence[str] | None = None,
    ) -> list[Rec]:  # fmt: skip
        """``sort_keys`` None: the table's ``default_sort``; ``sort_dirs``
        each key's direction (missing ones: ``sort_dir``)."""
        keys = self.table.default_sort if sort_keys is None else sort_keys
        accepted = check_query(self.table, filters, keys, sort_dir)
        plan = sort_plan(keys, sort_dirs, sort_dir)
        query = Query(project, accepted, [k for k, _ in plan], [d for _, d in plan], limit, marker)
        return self.backend.rows(self.table, query)

    def update(self, row_id: str, fields: Mapping[str, Any]) -> Rec | None:
        check_update(self.table, fields)
        return self.backend.update(self.table, row_id, fields)

    def delete(self, row_id: str) -> bool:
        return self.backend.delete(self.table, row_id)


class NamedRows:
    """:class:`WorkflowStore`'s named methods: each one a :class:`Rows`
    method of its table, over a backend's :class:`WorkflowRows`; only
    an execution's start and delete (its traversal, its tree) are its own."""

    def __init__(self, backend: WorkflowRows) -> None:
        self.backend = backend
        w = Rows(backend, WORKFLOWS)
        self.create_workflow, self.get_workflow, self.list_workflows = w.create, w.find, w.rows
        self.update_workflow, self.delete_workflow = w.update, w.delete
        b = Rows(backend, WORKBOOKS)
        self.create_workbook, self.get_workbook, self.list_workbooks = b.create, b.find, b.rows
        self.update_workbook, self.delete_workbook = b.update, b.delete
        a = Rows(backend, ACTIONS)
        self.create_adhoc_action, self.get_adhoc_action = a.create, a.find
        self.list_adhoc_actions, self.update_adhoc_action = a.rows, a.update
        self.delete_adhoc_action = a.delete
        e = Rows(backend, EXECUTIONS)
        self.get_execution, self.list_executions, self.update_execution = e.get, e.rows, e.update
        t = Rows(backend, TASKS)
        self.get_task, self.list_tasks = t.get, t.rows
        x = Rows(backend, ACTION_EXECUTIONS)
        self.create_action_execution, self.get_action_execution = x.create, x.get
        self.list_action_executions, self.delete_action_execution = x.rows, x.delete

    def create_execution(
        self,
        execution: ExecutionRecord,
        *,
        traversal: TraversalRecord | None = None,
        nodes: Sequence[NodeRecord] = (),
    ) -> None:
        check_record(EXECUTIONS, execution)
        if traversal is not None and (
            traversal.kind != WORKFLOW or traversal.execution_id != execution.id
        ):
            raise ValueError(
                f"traversal {traversal.id} is not a workflow traversal of execution {execution.id}"
            )
        self.backend.start_execution(execution, traversal, nodes)

    def delete_execution(self, execution_id: str) -> bool:
        return self.backend.delete_execution(execution_id)

    def execution_state(self, execution_id: str) -> tuple[str, str | None] | None:
        return self.backend.state(EXECUTIONS, execution_id)
