"""The store's narrow interface: records, journal changes, and queries.

The engine never sees a session or a SQL statement. It reads records and
writes **journal batches**: small, typed changes applied atomically in one
transaction. A batch may hold the completions of many jobs (group commit):
that loses no crash guarantee, because every job is idempotent and is simply
run again if its batch never committed.

Two implementations: :mod:`convection.store.sql` (SQLite in WAL mode by
default, PostgreSQL at scale) and :mod:`convection.store.memory` for fast
tests. Both pass the same behaviour suite.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from convection.common import Conflict

# Re-exported: the kernel's rows are the store's records like any other.
from convection.store._traversals import NODE_STATES as NODE_STATES
from convection.store._traversals import STACK as STACK
from convection.store._traversals import TRAVERSAL_KINDS as TRAVERSAL_KINDS
from convection.store._traversals import WORKFLOW as WORKFLOW
from convection.store._traversals import NodeRecord as NodeRecord
from convection.store._traversals import TraversalRecord as TraversalRecord
from convection.store.workflows import (
    AddActionExecution,
    AddTaskExecution,
    UpdateActionExecution,
    UpdateExecution,
    UpdateTaskExecution,
)

if TYPE_CHECKING:
    from convection.store.processes import ProcessRecord
    from convection.store.scheduling import ScheduleStore
    from convection.store.software import SoftwareStore
    from convection.store.workflows import WorkflowStore

JSONDict = dict[str, Any]

#: Fields ``list_stacks`` sorts on. ``updated_at`` sorts a never-updated stack
#: by its ``created_at``; ``id`` is always appended as the tie-breaker, so
#: ``marker`` paging is exact.
STACK_SORT_KEYS = ("name", "status", "action", "created_at", "updated_at", "id")
#: Fields ``list_stacks`` filters on; a value may be one string or a list
#: (any of). ``status`` is the status column (``COMPLETE``); the service
#: splits Heat's ``CREATE_COMPLETE`` into action and status.
STACK_FILTER_KEYS = ("id", "name", "action", "status")


# -- records ------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class StackRecord:
    id: str
    project: str
    name: str
    action: str
    status: str
    status_reason: str = ""
    #: The template and environment the stack is converging to.
    template_id: int | None = None
    #: The last template the stack fully reached: the rollback target.
    prev_template_id: int | None = None
    #: The traversal allowed to make progress; any other is superseded.
    traversal_id: str | None = None
    #: User parameters as given (hidden values are stored, never shown).
    parameters: JSONDict = field(default_factory=dict)
    disable_rollback: bool = True
    timeout_mins: int | None = None
    #: Outputs computed when the last operation ended: [{output_key, ...}].
    outputs: list[JSONDict] = field(default_factory=list)
    parent_id: str | None = None
    parent_resource: str | None = None
    #: Nested stacks: the top of the tree (None for a top-level stack) and
    #: how deep this stack sits (0 at the top).
    root_id: str | None = None
    nested_depth: int = 0
    #: Resources this stack's own template defines, and (on a root only)
    #: those of every stack nested below it: Heat's max_resources_per_stack
    #: counts the whole tree, and a running total keeps the check O(1).
    resource_count: int = 0
    nested_resources: int = 0
    tags: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    deleted_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateRecord:
    id: int
    template: JSONDict
    #: The merged environment, in Heat's env_as_dict shape.
    environment: JSONDict
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceRecord:
    """One version of one resource. A replacement is a new row; the old row
    stays (``current=False``) until its cleanup node deletes it."""

    id: int
    stack_id: str
    name: str
    type: str
    action: str
    status: str
    status_reason: str = ""
    physical_id: str | None = None
    #: What get_resource returns (the plugin's reference id); usually the
    #: physical id, but not for every type, so it is stored as given.
    reference_id: str | None = None
    #: Resolved properties last applied: the base of the next update diff.
    properties: JSONDict = field(default_factory=dict)
    #: Attribute values the plugin reported; get_attr reads these.
    attributes: JSONDict = field(default_factory=dict)
    #: Small plugin-owned state (deadlines, tokens), persisted before waits.
    data: JSONDict = field(default_factory=dict)
    #: A digest of the unresolved definition, to detect change cheaply.
    definition_hash: str = ""
    requires: tuple[str, ...] = ()
    current: bool = True
    replaces: int | None = None
    replaced_by: int | None = None
    deletion_policy: str = "Delete"
    external_id: str | None = None
    #: Set by mark-unhealthy; forces replacement on the next update.
    unhealthy: bool = False
    #: The type as the template wrote it (an alias, a template's own name),
    #: which Heat shows; ``type`` is what the registry resolved it to.
    #: None for rows written before it was kept: shown as ``type``.
    template_type: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def shown_type(self) -> str:
        """The type users see (resource list, events): as written."""
        return self.template_type or self.type


@dataclass(frozen=True, slots=True, kw_only=True)
class TimerRecord:
    id: int
    traversal_id: str
    node_key: str
    due_at: datetime
    purpose: str = "poll"


@dataclass(frozen=True, slots=True, kw_only=True)
class EventRecord:
    id: int
    stack_id: str
    resource_name: str
    resource_type: str
    physical_resource_id: str | None
    action: str
    status: str
    reason: str
    timestamp: datetime
    uuid: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SignalRecord:
    id: int
    stack_id: str
    resource_name: str
    data: JSONDict
    created_at: datetime
    consumed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRecord:
    """An API credential. The secret itself is never stored: only its hash.

    ``stack_id``/``resource_name`` narrow a token to signalling one resource
    (a WaitConditionHandle's URL); ``server_id`` narrows it to one server's
    deployments (the pull agent). A token with neither is a project token.
    """

    id: str
    secret_hash: str
    project: str
    role: str
    description: str | None = None
    stack_id: str | None = None
    resource_name: str | None = None
    server_id: str | None = None
    created_at: datetime | None = None
    expires_at: datetime | None = None
    revoked_at: datetime | None = None


# -- journal changes ------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class UpdateStack:
    stack_id: str
    fields: JSONDict


@dataclass(frozen=True, slots=True)
class UpdateResource:
    resource_id: int
    fields: JSONDict


@dataclass(frozen=True, slots=True)
class DeleteResource:
    """Forget a resource row (its physical resource is already gone)."""

    resource_id: int


@dataclass(frozen=True, slots=True)
class AppendEvent:
    stack_id: str
    resource_name: str
    resource_type: str
    physical_resource_id: str | None
    action: str
    status: str
    reason: str

    @classmethod
    def about(cls, row: ResourceRecord, action: str, status: str, reason: str) -> AppendEvent:
        """An event of resource ``row``, with the type as the template wrote it."""
        return cls(row.stack_id, row.name, row.shown_type, row.physical_id, action, status, reason)


@dataclass(frozen=True, slots=True)
class UpdateNode:
    traversal_id: str
    key: str
    fields: JSONDict


@dataclass(frozen=True, slots=True)
class FenceNode:
    """Write the rest of this batch only if the node is still running under
    ``owner`` at ``attempt``; else the whole batch is refused with
    :class:`StaleNode`. A worker puts one in every write of its job, so a
    worker that lost its lease (paused, partitioned) cannot write over the
    node's re-run: the check and the write are one transaction, and the
    row stays locked until it commits."""

    traversal_id: str
    key: str
    attempt: int
    owner: str


@dataclass(frozen=True, slots=True)
class FenceTraversal:
    """Write the rest of this batch only if ``owner`` still holds the
    traversal's lease; else the whole batch is refused with
    :class:`LostLease`. An engine puts one in every batch it writes for a
    traversal it runs, so an engine that was held up past its lease (paused,
    partitioned) and found its traversal taken up elsewhere cannot write
    over the new engine's work, its facts included, before it notices."""

    traversal_id: str
    owner: str


#: Notice channels: new work for engines (a traversal started, a timer due
#: now), and a job's end (payload ``traversal_id key``) for its engine.
WORK_CHANNEL = "convection_work"
DONE_CHANNEL = "convection_done"


@dataclass(frozen=True, slots=True)
class Notice:
    """``NOTIFY channel, payload`` when the batch commits (PostgreSQL; a
    no-op on SQLite and in memory, where one process does everything)."""

    channel: str
    payload: str = ""


@dataclass(frozen=True, slots=True)
class ReleaseSuccessors:
    """Decrement each successor's ``pending``; those reaching 0 become ready."""

    traversal_id: str
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AddNodes:
    """Insert nodes into a running traversal (a workflow's next tasks are
    known only when the task before them ends). Each node's ``traversal_id``
    must be ``traversal_id``; a taken key fails the batch."""

    traversal_id: str
    nodes: tuple[NodeRecord, ...]


@dataclass(frozen=True, slots=True)
class AddTimer:
    traversal_id: str
    node_key: str
    due_at: datetime
    purpose: str = "poll"


@dataclass(frozen=True, slots=True)
class DeleteTimers:
    traversal_id: str
    node_key: str


@dataclass(frozen=True, slots=True)
class TakeTimer:
    """Delete one timer row by id, and fail the batch if it is gone.

    Firing a timer is this change plus what the timer causes, in one
    batch: when two engines read the same due timer, only the batch whose
    delete removed the row commits; the other raises ``NotFound`` and
    applies nothing, so a node is never woken twice by one timer."""

    timer_id: int
    traversal_id: str
    node_key: str


@dataclass(frozen=True, slots=True)
class UpdateTraversal:
    traversal_id: str
    fields: JSONDict


@dataclass(frozen=True, slots=True)
class ConsumeSignal:
    signal_id: int


Change = (
    UpdateStack
    | UpdateResource
    | DeleteResource
    | AppendEvent
    | UpdateNode
    | ReleaseSuccessors
    | AddNodes
    | AddTimer
    | DeleteTimers
    | TakeTimer
    | UpdateTraversal
    | ConsumeSignal
    | UpdateExecution
    | AddTaskExecution
    | UpdateTaskExecution
    | AddActionExecution
    | UpdateActionExecution
    | FenceNode
    | FenceTraversal
    | Notice
)


@dataclass(frozen=True, slots=True, kw_only=True)
class NewStack:
    """A stack created and started at once (:meth:`Store.start_stacks`).

    A group's members are hundreds of child stacks started in one engine
    turn; written one call at a time, each cost ten transactions. The
    stack's ``template_id`` is ignored: the store stores ``template``,
    ``environment`` and ``files`` and points the stack at them. The stack
    already carries its ``traversal_id``, action and status. A node whose
    ``resource_id`` is None gets the id of the new row of its resource."""

    stack: StackRecord
    template: JSONDict
    environment: JSONDict
    files: dict[str, str]
    resources: Sequence[ResourceRecord]
    traversal: TraversalRecord
    nodes: Sequence[NodeRecord]
    events: Sequence[AppendEvent]


@dataclass(frozen=True, slots=True, kw_only=True)
class TraversalStart:
    """One :meth:`Store.start_traversal` and its events, for
    :meth:`Store.start_traversals` (a group's members deleted at once)."""

    traversal: TraversalRecord
    nodes: Sequence[NodeRecord]
    stack_fields: JSONDict
    events: Sequence[AppendEvent]


@dataclass(frozen=True, slots=True)
class StartedStack:
    """What :meth:`Store.start_stacks` allocated for one :class:`NewStack`."""

    template_id: int
    #: The ids of its ``resources``, in order.
    resource_ids: list[int]


class StaleTraversal(Exception):
    """The traversal was superseded or cancelled while a batch was pending."""


class LostLease(StaleTraversal):
    """A :class:`FenceTraversal` failed: another engine took the traversal
    up. A stale traversal to its writer (it stops), but nothing of the
    batch is written, not even its facts."""

    def __init__(self, traversal_id: str, owner: str) -> None:
        super().__init__(f"traversal {traversal_id}: its lease is no longer {owner}'s")
        self.traversal_id = traversal_id
        self.owner = owner


class StaleNode(Exception):
    """A :class:`FenceNode` failed: the node was re-run (its lease lapsed
    and another attempt claimed it), so this writer's outcome is refused."""

    def __init__(self, traversal_id: str, key: str, attempt: int) -> None:
        super().__init__(f"traversal {traversal_id}: node {key} is no longer at attempt {attempt}")
        self.traversal_id = traversal_id
        self.key = key
        self.attempt = attempt


class StackExists(Conflict):
    """A live stack of that name already exists in the project.

    Raised by ``create_stack``; the unique index, not a prior read, decides,
    so two concurrent creates cannot both win.
    """

    def __init__(self, project: str, name: str) -> None:
        self.project = project
        self.name = name
        super().__init__(f"The Stack ({name}) already exists.")


class Store(Protocol):
    """Every method is one short transaction."""

    #: Heat's software configs and deployments (:mod:`convection.store.software`).
    software: SoftwareStore
    #: Workflow definitions and executions (:mod:`convection.store.workflows`).
    workflows: WorkflowStore
    #: Stored environments and cron triggers (:mod:`convection.store.scheduling`).
    schedules: ScheduleStore

    # stacks and templates
    def create_stack(self, stack: StackRecord) -> None: ...

    def get_stack(self, project: str, name_or_id: str) -> StackRecord | None:
        """The stack of ``project`` with that id (deleted or not, as Heat's
        show by id), else the live stack with that name."""
        ...

    def get_stack_by_id(self, stack_id: str) -> StackRecord | None: ...

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
        """Stacks of ``project`` (``None``: every project), as Heat lists them.

        ``show_nested=False`` keeps top-level stacks only; ``parent_id`` keeps
        the children of one stack. Sorting is on :data:`STACK_SORT_KEYS`
        (strings compare by code point on every backend), filters on
        :data:`STACK_FILTER_KEYS`; ``marker`` is the id of the last stack of
        the previous page. Unknown keys raise ``ValueError``."""
        ...

    def purge_stack(self, stack_id: str) -> None:
        """Hard-delete a stack, its nested stacks and everything they own
        (resources, traversals, nodes, timers, events, signals), and their
        templates no other stack uses. Deleting a stack is ``UpdateStack``
        with ``deleted_at``; purging is what ``stack purge-deleted`` does."""
        ...

    def reserve_resources(self, root_id: str, delta: int, limit: int) -> bool:
        """Atomically add ``delta`` to the root's ``nested_resources`` if the
        tree's total (the root's ``resource_count`` plus that) stays within
        ``limit`` (-1: no limit) or ``delta`` is not positive; False, and
        nothing changed, otherwise (or for an unknown root)."""
        ...

    def put_template(
        self, template: JSONDict, environment: JSONDict, files: dict[str, str]
    ) -> int: ...

    def start_stacks(self, new: Sequence[NewStack], *, limit: int) -> list[StartedStack] | None:
        """Create and start every stack of ``new`` in one transaction: their
        templates, stack rows, resource rows, traversals, nodes and events,
        each root's ``nested_resources`` raised by its new stacks'
        ``resource_count`` (as :meth:`reserve_resources`). None, and nothing
        written, when a root would pass ``limit`` (-1: no limit); raises
        :class:`StackExists` on a name clash, nothing written."""
        ...

    def get_template(self, template_id: int) -> TemplateRecord:
        """Raise ``convection.common.errors.NotFound`` for an unknown id."""
        ...

    # resources
    def add_resource(self, resource: ResourceRecord) -> int:
        """Insert a new resource version and return its id (``id`` is ignored)."""
        ...

    def add_resources(self, resources: Sequence[ResourceRecord]) -> list[int]:
        """Insert many resource versions in one transaction; ids in order.

        One transaction for a whole stack's rows instead of one per row."""
        ...

    def get_resource(self, resource_id: int) -> ResourceRecord | None: ...

    def list_resources(
        self, stack_id: str, *, current_only: bool = False, names: Collection[str] | None = None
    ) -> list[ResourceRecord]:
        """The stack's rows (every version), by id; ``names``: of those only."""
        ...

    # traversals
    def start_traversal(
        self, traversal: TraversalRecord, nodes: Sequence[NodeRecord], stack_fields: JSONDict
    ) -> None:
        """Atomically: insert the traversal and its nodes, point its owner at
        it (with ``stack_fields``: the stack's fields, or for a ``workflow``
        traversal the execution's), and mark any previous running traversal
        of the owner SUPERSEDED."""
        ...

    def start_traversals(self, starts: Sequence[TraversalStart]) -> None:
        """Every :meth:`start_traversal` of ``starts``, and their events, in
        one transaction; all or nothing."""
        ...

    def get_traversal(self, traversal_id: str) -> TraversalRecord | None: ...

    def active_traversals(self) -> list[TraversalRecord]:
        """Traversals IN_PROGRESS whose owner (stack or workflow execution)
        still points at them: the work an engine must take up when it
        starts."""
        ...

    def scan_active(
        self, owner: str, kinds: Collection[str] | None = None
    ) -> tuple[list[str], list[TraversalRecord]]:
        """:meth:`active_traversals` split for an engine's scan: the ids of
        those ``owner`` holds the lease of (it runs them: their records
        would only be thrown away, a thousand at a time when a group's
        members run), and the records of the others; only traversals of
        ``kinds`` (None: every kind)."""
        ...

    def take_traversal(
        self, traversal_id: str, owner: str, lease_until: datetime, now: datetime
    ) -> bool:
        """Atomically make ``owner`` the engine of an IN_PROGRESS traversal,
        if no other engine holds it (no owner, a released or lapsed lease,
        or ``owner`` already). Whether it was taken."""
        ...

    def renew_traversals(
        self, traversal_ids: Sequence[str], owner: str, lease_until: datetime
    ) -> set[str]:
        """Extend ``owner``'s leases; the ids it still holds. A lapsed lease
        no other engine took is renewed (nobody else worked on it); one
        another engine took is not, and its old owner must drop the run."""
        ...

    def release_traversals(self, traversal_ids: Sequence[str], owner: str) -> None:
        """End ``owner``'s leases now (a clean stop, a finished traversal):
        another engine may take them up at once. The owner is kept, so
        :meth:`renew_traversals` tells whether someone took them since."""
        ...

    def list_nodes(self, traversal_id: str) -> list[NodeRecord]: ...

    def get_node(self, traversal_id: str, key: str) -> NodeRecord | None: ...

    def get_nodes(self, traversal_id: str, keys: Sequence[str]) -> list[NodeRecord]:
        """The nodes of ``keys`` that exist, in one read (a group's owner
        traversal gets hundreds of wakes per pass)."""
        ...

    def claim_ready(
        self, traversal_id: str, owner: str, limit: int, lease_until: datetime
    ) -> list[NodeRecord]:
        """Atomically move up to ``limit`` ready nodes to running under ``owner``.

        Each claim increments ``attempt`` (so a reclaimed node knows it is a
        retry). Nothing is claimed once the owner (stack or execution) no
        longer points at the traversal: its results could never be applied."""
        ...

    def claim_many(
        self, wanted: Sequence[tuple[str, int]], owner: str, lease_until: datetime
    ) -> dict[str, list[NodeRecord]]:
        """:meth:`claim_ready` for several (traversal id, limit) in one
        transaction: an engine running a group's members claims from
        hundreds of traversals per turn. Traversals that got nothing may
        be missing from the answer."""
        ...

    def reclaim_expired(self, now: datetime) -> int:
        """Running nodes whose lease expired (their engine died) become ready."""
        ...

    def count_unfinished(self, traversal_id: str) -> int:
        """Nodes of the traversal not done, failed or skipped (one indexed
        count: what an engine learns of a run whose jobs ran elsewhere)."""
        ...

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
        """A worker takes the lease of the node its job runs, if the node is
        still running at ``attempt`` and (``claimed_by``) still under that
        engine's claim; else the job is stale (delivered twice, or the node
        re-run): None."""
        ...

    def renew_nodes(self, owner: str, lease_until: datetime) -> set[tuple[str, str]]:
        """Renew every running node's lease ``owner`` holds; the (traversal,
        key) of each, so a worker learns which leases it lost."""
        ...

    def notify(self, channel: str, payload: str = "") -> None:
        """Wake listeners in other processes (PostgreSQL's NOTIFY)."""
        ...

    def due_timers(self, now: datetime, limit: int) -> list[TimerRecord]: ...

    def next_timer_due(self, traversal_id: str | None = None) -> datetime | None: ...

    # journal
    def apply(self, changes: Sequence[Change], *, traversal_id: str | None = None) -> None:
        """Apply changes atomically. With ``traversal_id``, raise
        :class:`StaleTraversal` (and apply nothing) if its owner (stack or
        workflow execution) no longer points at that traversal.

        The result is that of applying the changes in order. Any failing
        change fails the whole batch, and nothing is applied:
        ``convection.common.errors.NotFound`` when an update, event, timer or signal
        names a row that does not exist (a ``TakeTimer`` of a timer another
        engine took included); ``ValueError`` for an unknown field,
        a naive datetime, an unknown node state, or a ``ReleaseSuccessors``
        that would take ``pending`` below zero (a node released twice).
        ``DeleteResource`` and ``DeleteTimers`` of absent rows are no-ops.
        ``UpdateStack`` and ``UpdateResource`` set ``updated_at`` to now
        unless the fields give it."""
        ...

    def apply_many(self, batches: Sequence[tuple[str | None, Sequence[Change]]]) -> list[bool]:
        """Several :meth:`apply` batches (traversal id, changes) in one
        transaction: the journal's entries of one event-loop turn span many
        traversals when a group's members run. A batch whose traversal is
        no longer current is left out, and its flag in the answer is True
        (the caller decides what to do with its changes); any other failure
        raises and applies nothing."""
        ...

    # events and signals
    def list_events(
        self,
        stack_id: str,
        *,
        resource_name: str | None = None,
        after_id: int | None = None,
        limit: int | None = None,
    ) -> list[EventRecord]: ...

    def last_events(self, stack_id: str, limit: int) -> list[EventRecord]:
        """The stack's ``limit`` newest events, newest first: where a live
        view starts following, and what its timeline shows (O(limit))."""
        ...

    def add_signal(self, stack_id: str, resource_name: str, data: JSONDict) -> int: ...

    def pending_signals(self, stack_id: str, resource_name: str) -> list[SignalRecord]: ...

    # -- API tokens (convection.tokens._tokens is the only caller) ------------------------
    def add_token(self, token: TokenRecord) -> None: ...

    def find_token(self, secret_hash: str) -> TokenRecord | None:
        """The token with this hash, revoked or not (the caller judges)."""
        ...

    def list_tokens(self, project: str | None = None) -> list[TokenRecord]:
        """Tokens, oldest first, optionally of one project."""
        ...

    def revoke_tokens(
        self, now: datetime, *, token_id: str | None = None, stack_id: str | None = None
    ) -> int:
        """Revoke one token, or every token scoped to a stack; the count."""
        ...

    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        ...

    # -- running processes and what operators count (convection status, /metrics) ---------
    def beat(self, record: ProcessRecord) -> None:
        """Upsert the process's row by ``record.id``; ``heartbeat_at`` is
        the store's now, whatever the record says (:mod:`.processes`)."""
        ...

    def list_processes(self) -> list[ProcessRecord]:
        """Every process row, stale or not, by kind, host and id."""
        ...

    def forget_process(self, process_id: str) -> None:
        """Remove a process's row (a clean stop); absent is not an error."""
        ...

    def leases_held(self) -> dict[str, tuple[int, int]]:
        """Lease owner -> (traversals whose unexpired lease it holds,
        running nodes it leases); owners holding neither are absent."""
        ...

    def count_by_state(self) -> dict[str, dict[str, int]]:
        """``{"traversal:stack": {status: n}, "traversal:workflow": {...},
        "execution": {state: n}}``, over every row."""
        ...

    def queue_depths(self) -> dict[str, dict[str, int]]:
        """Queue name -> {"todo": n, "doing": n} from procrastinate's
        ``procrastinate_jobs`` on PostgreSQL; {} without that table, on
        SQLite and in memory."""
        ...
