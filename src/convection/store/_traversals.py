"""The kernel's own rows: traversals (of a stack or of a workflow
execution) and their nodes.

Apart from ``api`` so that ``workflows`` can name them without importing
``api``, which imports ``workflows`` for the ``Change`` union; ``api``
re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

JSONDict = dict[str, Any]

#: The kind of a workflow execution's traversals.
WORKFLOW = "workflow"
#: The kinds of traversal (``TraversalRecord.kind``): a stack's operation,
#: or a workflow execution's run.
STACK = "stack"
TRAVERSAL_KINDS = (STACK, WORKFLOW)


@dataclass(frozen=True, slots=True, kw_only=True)
class TraversalRecord:
    """One run of nodes by the kernel, owned by a stack (``kind`` 'stack',
    ``stack_id`` set) or by a workflow execution (``kind`` 'workflow',
    ``execution_id`` set). The other owner field is the empty string, never
    None, so stack code reads ``stack_id`` as a ``str`` as it always did; in
    SQL it is NULL (a CHECK holds exactly one owner per kind)."""

    id: str
    action: str
    stack_id: str = ""
    kind: str = STACK
    execution_id: str = ""
    status: str = "IN_PROGRESS"
    rollback_enabled: bool = False
    #: Absolute deadline (stack timeout); None for no timeout.
    deadline: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    #: The engine running the traversal, and until when (renewed while it
    #: runs): two engines never run one traversal at once (each counts and
    #: sees only its own commits). See :meth:`Store.take_traversal`.
    lease_owner: str | None = None
    lease_until: datetime | None = None


NODE_STATES = ("waiting", "ready", "running", "sleeping", "done", "failed", "skipped")


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeRecord:
    """One step of a traversal: 'update' a resource, or 'cleanup' an old one.

    ``pending`` counts unfinished predecessors; at zero the node is ready.
    ``payload`` is plan data the job needs (the action and its reason),
    so a job carries only ids and any worker can run it.
    """

    traversal_id: str
    key: str
    kind: str
    resource_name: str
    resource_id: int | None = None
    pending: int = 0
    state: str = "waiting"
    successors: tuple[str, ...] = ()
    payload: JSONDict = field(default_factory=dict)
    lease_owner: str | None = None
    lease_until: datetime | None = None
    attempt: int = 0
