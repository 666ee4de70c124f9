"""What one job of a workflow node decides, gathered before it is written.

A job's decisions (task rows, new nodes, the execution's context, an end
of the workflow) are collected in a :class:`Step` while the run's memory
is updated at once (see ``run.py``), then handed to the kernel as one
outcome, which the journal writes in one transaction with the node's own
state.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from convection.store import (
    AddNodes,
    AddTaskExecution,
    Change,
    NodeRecord,
    TaskExecutionRecord,
    UpdateExecution,
    UpdateNode,
    UpdateTaskExecution,
)
from convection.workflows.engine.run import ExecutionRun, TaskMemory

#: The purpose of a timer that wakes a parked node from outside (a resume,
#: a completion, a child's end, a deadline): ``WorkflowFrontEnd.fire_timer``
#: wakes the node only if it is still parked.
WAKE = "wake"

#: Why a node is parked (``payload["parked"]``): what wakes it.
PARKED_PAUSE = "pause"
PARKED_JOIN = "join"
PARKED_ASYNC = "async"
PARKED_CHILD = "subworkflow"


def new_id() -> str:
    return str(uuid.uuid4())


@dataclass(slots=True)
class Step:
    run: ExecutionRun
    now: datetime
    #: Task rows, new nodes and execution updates (the run's progress).
    changes: list[Change] = field(default_factory=list)
    #: Action execution rows: what happened outside (kept even when the
    #: traversal is superseded).
    facts: list[Change] = field(default_factory=list)
    #: The workflow ends now with this (state, state_info): ``fail``,
    #: ``succeed`` or a force-fail.
    end: tuple[str, str | None] | None = None
    #: New ready nodes this engine may run at once (``Outcome.eager``).
    eager: list[str] = field(default_factory=list)

    def task(self, memory: TaskMemory, **fields: Any) -> None:
        """Change a task row, in memory now and in the store with the step."""
        self.run.update(memory.id, **fields)
        self.changes.append(UpdateTaskExecution(memory.id, dict(fields)))

    def execution(self, **fields: Any) -> None:
        self.run.execution = replace(self.run.execution, **fields)
        self.changes.append(UpdateExecution(self.run.execution.id, dict(fields)))

    def new_task(
        self, name: str, predecessors: list[str], *, state: str, node_state: str = "ready",
        parked: str | None = None, state_info: str | None = None,
    ) -> TaskMemory:  # fmt: skip
        """A task execution and the node that runs it."""
        run = self.run
        spec = run.spec.tasks[name]
        task_id = new_id()
        record = TaskExecutionRecord(
            id=task_id,
            execution_id=run.execution.id,
            project=run.execution.project,
            name=name,
            node_key=task_id,
            state=state,
            state_info=state_info,
            type=spec.type,
            predecessors=predecessors,
            created_at=self.now,
            started_at=self.now if state == "RUNNING" else None,
        )
        memory = TaskMemory(record)
        run.add(memory)
        # A fact: the task's action runs (facts too) refer to its row.
        self.facts.append(AddTaskExecution(record))
        payload: dict[str, Any] = {"task": task_id}
        if parked is not None:
            payload["parked"] = parked
        self.node(task_id, name, payload, state=node_state)
        if node_state == "ready":
            self.eager.append(task_id)
        return memory

    def node(
        self, key: str, name: str, payload: dict[str, Any], *, state: str = "sleeping",
        kind: str = "task",
    ) -> None:  # fmt: skip
        """A node of this run; ``sleeping`` with no timer is parked."""
        node = NodeRecord(
            traversal_id=self.run.id, key=key, kind=kind, resource_name=name,
            state=state, payload=payload,
        )  # fmt: skip
        self.changes.append(AddNodes(self.run.id, (node,)))

    def wake(self, memory: TaskMemory) -> None:
        """Make a parked node ready (a join satisfied or failed)."""
        fields = {"state": "ready", "payload": {"task": memory.id}}
        self.changes.append(UpdateNode(self.run.id, memory.id, fields))
