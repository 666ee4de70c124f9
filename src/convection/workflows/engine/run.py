"""A workflow execution as one engine runs it: the kernel's :class:`Run`
plus what the tasks' jobs read.

The store holds the truth (the execution row, its task and action
execution rows, the traversal's nodes). This is the engine's copy, rebuilt
from those rows on take-up (:func:`frontend.WorkflowFrontEnd.take_up`).
Jobs of one run all execute on the engine's event loop, and each job
updates this copy *before* it yields its outcome to the journal
(``remember``), so two tasks ending in the same turn each see the
other: a ``join`` counts both arrivals, never neither.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from convection.kernel import Run
from convection.store import ExecutionRecord, NodeRecord, TaskExecutionRecord, TraversalRecord
from convection.workflows.engine.states import COMPLETED
from convection.workflows.lang import WorkflowGraph, WorkflowSpec


@dataclass(slots=True)
class TaskMemory:
    """One task execution as the engine keeps it: its row, and the results
    of its accepted action runs (by with-items index; a single action's is
    index 0), which ``task(name).result`` reads."""

    record: TaskExecutionRecord
    results: dict[int, Any] = field(default_factory=dict)
    #: The errors of its failed action runs, by index.
    errors: dict[int, Any] = field(default_factory=dict)
    #: Its outbound context (inbound overlaid with what it published),
    #: built once when a later task first needs it.
    outbound: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def state(self) -> str:
        return self.record.state

    @property
    def completed(self) -> bool:
        return self.record.state in COMPLETED

    def result(self, with_items: bool) -> Any:
        """The task's result as Mistral gives it: the list by index for
        with-items, the one result otherwise."""
        if with_items:
            return [self.results[i] for i in sorted(self.results)]
        return self.results.get(0)


class ExecutionRun(Run):
    """One workflow execution's traversal, run here."""

    __slots__ = (
        "_by_name", "actions", "ended", "execution", "graph", "items", "joins", "refreshed",
        "spec", "tasks",
    )  # fmt: skip

    def __init__(
        self,
        traversal: TraversalRecord,
        execution: ExecutionRecord,
        spec: WorkflowSpec,
        graph: WorkflowGraph,
    ) -> None:
        super().__init__(traversal)
        self.execution = execution
        self.spec = spec
        self.graph = graph
        #: Task executions by id, in the order they were made.
        self.tasks: dict[str, TaskMemory] = {}
        self._by_name: dict[str, list[str]] = {}
        #: A waiting join's task id, by task name (one per name, as Mistral's
        #: ``join-task-<execution>-<task>`` key).
        self.joins: dict[str, str] = {}
        #: The workflow ended at once (``fail``, ``succeed``, a force-fail):
        #: (state, state_info) for its finish.
        self.ended: tuple[str, str | None] | None = None
        #: Evaluated with-items variables per task id (evaluated again
        #: after a take-up).
        self.items: dict[str, list[dict[str, Any]]] = {}
        #: Actions resolved by name (an ad-hoc lookup is a read per name).
        self.actions: dict[str, Any] = {}
        #: When the execution's state was last read (``job.refresh``).
        self.refreshed = 0.0

    # -- the tasks ------------------------------------------------------------------
    def add(self, memory: TaskMemory) -> None:
        self.tasks[memory.id] = memory
        self._by_name.setdefault(memory.name, []).append(memory.id)
        spec = self.spec.tasks.get(memory.name)
        if spec is not None and spec.join is not None and not memory.completed:
            self.joins[memory.name] = memory.id

    def update(self, task_id: str, **fields: Any) -> TaskMemory:
        """Change the copy of a task row (the journal writes the row)."""
        memory = self.tasks[task_id]
        memory.record = replace(memory.record, **fields)
        if memory.completed and self.joins.get(memory.name) == task_id:
            del self.joins[memory.name]
        return memory

    def named(self, name: str) -> list[TaskMemory]:
        return [self.tasks[i] for i in self._by_name.get(name, ())]

    def last(self, name: str) -> TaskMemory | None:
        ids = self._by_name.get(name)
        return self.tasks[ids[-1]] if ids else None

    def all(self) -> Iterator[TaskMemory]:
        return iter(self.tasks.values())

    # -- the kernel's questions -----------------------------------------------------------
    def queue(self, node: NodeRecord) -> str:
        """A task's ``target`` (Mistral's executor target) names the queue
        whose workers run its action. An expression target is not
        evaluated yet: such a task goes to ``default``."""
        spec = self.spec.tasks.get(str(node.payload.get("name", node.resource_name)))
        target = None if spec is None else spec.target
        if target and "<%" not in target and "{{" not in target:
            return target
        return super().queue(node)

    def dormant(self) -> bool:
        """Paused with nothing running: only a resume goes on."""
        return self.execution.state == "PAUSED" and self.tally.inflight == 0

    def failure_of(self, node: Any) -> tuple[str, str]:
        memory = self.tasks.get(str(node.payload.get("task", "")))
        info = memory.record.state_info if memory is not None else None
        return "RUN", info or f"task {node.resource_name} failed"
