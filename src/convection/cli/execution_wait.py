"""``execution create --wait``: run the embedded engine here and show the
execution's progress, as ``stack create --wait`` does for a stack; against
a server (``--url``), which runs the engine, only watch it.

The loop is :func:`convection.cli.progress.watch`'s (the engine on this
process's event loop, a poll a few times a second, Ctrl-C once to stop the
engine with running jobs recording their outcome, twice to abandon them;
with a server, a :class:`~convection.cli.remote.watch.ServerWatch` in the
engine's place, polls that back off, and Ctrl-C stops only the watching);
what it polls and draws is here: the execution's state and its tasks
(``list_tasks``, of the store or the server), by state, those in flight by
name, the failed ones with their ``state_info``, and the time elapsed.

On a terminal the display is live (Rich); anywhere else it prints one line
per task state change (``TIME [task]: STATE  state_info``), which reads
well in CI logs, then ``Execution WORKFLOW ID STATE``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from convection.cli.progress import SHOWN_IN_FLIGHT, watch

if TYPE_CHECKING:
    from convection.cli.workflow_service import WorkflowService

#: Execution states in which the engine still has work (Mistral's).
ACTIVE = frozenset({"RUNNING", "IDLE"})
#: Task states shown as in flight.
IN_FLIGHT = ("RUNNING", "DELAYED", "WAITING")
#: Exit code after Ctrl-C (the stack commands').
INTERRUPTED = 130


@dataclass(slots=True)
class ExecutionFrame:
    """What one poll saw."""

    elapsed: float
    execution: dict[str, Any]
    tasks: list[dict[str, Any]]
    #: The tasks whose state changed since the previous poll (new ones too).
    changes: list[dict[str, Any]] = field(default_factory=list)
    stopping: bool = False


@dataclass(frozen=True, slots=True)
class ExecutionWaitResult:
    #: The execution as ``get_execution`` returns it, at the end.
    execution: dict[str, Any]
    tasks: list[dict[str, Any]]
    interrupted: bool

    @property
    def state(self) -> str:
        return str(self.execution["state"])

    def failed_tasks(self) -> list[dict[str, Any]]:
        return [t for t in self.tasks if t["state"] == "ERROR"]

    def exit_code(self) -> int:
        """0 on SUCCESS; 1 on ERROR, CANCELLED or PAUSED; 130 after Ctrl-C."""
        if self.interrupted:
            return INTERRUPTED
        return 0 if self.state == "SUCCESS" else 1


class ExecutionReads(Protocol):
    """What a poll reads (a :class:`~convection.cli.workflow_service.WorkflowService`)."""

    def get_execution(self, project: str, execution_id: str) -> dict[str, Any]: ...

    def list_tasks(
        self, project: str, *, execution_id: str | None = None
    ) -> list[dict[str, Any]]: ...


class ExecutionPoller:
    """One execution and its tasks, read from the store or the server."""

    def __init__(self, reads: ExecutionReads, project: str, execution_id: str) -> None:
        self.reads = reads
        self.project = project
        self.execution_id = execution_id
        self._seen: dict[str, str] = {}

    def poll(self, elapsed: float, stopping: bool) -> ExecutionFrame:
        execution = self.reads.get_execution(self.project, self.execution_id)
        tasks = self.reads.list_tasks(self.project, execution_id=self.execution_id)
        changes = [t for t in tasks if self._seen.get(t["id"]) != t["state"]]
        self._seen = {t["id"]: t["state"] for t in tasks}
        return ExecutionFrame(elapsed, execution, tasks, changes, stopping)

    def settled(self, frame: ExecutionFrame) -> bool:
        """Ended, or paused: a paused execution waits for a resume."""
        return frame.execution["state"] not in ACTIVE

    def changed(self, frame: ExecutionFrame) -> bool:
        return bool(frame.changes)


class ExecutionView(Protocol):
    def show(self, frame: ExecutionFrame) -> None: ...

    def close(self, frame: ExecutionFrame) -> None: ...

    def abort(self) -> None: ...


def _first_line(text: Any) -> str:
    return str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""


def task_line(task: dict[str, Any]) -> str:
    """One task's state change, as an event log line."""
    when = task.get("finished_at") or task.get("started_at") or task.get("created_at") or ""
    info = _first_line(task.get("state_info"))
    return f"{when} [{task['name']}]: {task['state']}  {info}".rstrip()


def verdict(execution: dict[str, Any]) -> str:
    return f"Execution {execution['workflow_name']} {execution['id']} {execution['state']}"


class PlainExecutionView:
    """A line per task state change, then the execution's state."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._told_stop = False

    def show(self, frame: ExecutionFrame) -> None:
        for t in frame.changes:
            self._console.print(task_line(t), markup=False, highlight=False)
        if frame.stopping and not self._told_stop:
            self._told_stop = True
            self._console.print("Stopping: running tasks finish recording their outcome.")

    def abort(self) -> None:
        pass

    def close(self, frame: ExecutionFrame) -> None:
        self._console.print(verdict(frame.execution), markup=False, highlight=False)
        for failure in failures(frame.tasks):
            self._console.print(failure)


class LiveExecutionView:
    """A live summary redrawn on every poll; a final summary stays behind."""

    def __init__(self, console: Console) -> None:
        self._console = console
        from rich.live import Live

        self._live = Live(console=console, auto_refresh=False, transient=True)
        self._live.start()

    def show(self, frame: ExecutionFrame) -> None:
        self._live.update(Group(*live_parts(frame)), refresh=True)

    def abort(self) -> None:
        self._live.stop()

    def close(self, frame: ExecutionFrame) -> None:
        self._live.stop()
        e = frame.execution
        self._console.print(
            Text.assemble(
                (f"Execution {e['workflow_name']} ", "bold"),
                f"{e['id']} ",
                (str(e["state"]), _style(str(e["state"]))),
                f"  ({frame.elapsed:.1f}s)",
            )
        )
        for failure in failures(frame.tasks):
            self._console.print(failure)


def live_parts(frame: ExecutionFrame) -> list[RenderableType]:
    e = frame.execution
    state = str(e["state"])
    parts: list[RenderableType] = [
        Text.assemble(
            (f"{e['workflow_name']} ", "bold"),
            f"{e['id']} ",
            (state, _style(state)),
            f"  {frame.elapsed:.1f}s",
        )
    ]
    counts = Counter(str(t["state"]) for t in frame.tasks)
    summary = " · ".join(f"{k} {n}" for k, n in sorted(counts.items())) or "no task yet"
    parts.append(Text("  " + summary))
    flight = [t for t in frame.tasks if t["state"] in IN_FLIGHT]
    if flight:
        table = Table("Task", "State", "Started at", box=None, padding=(0, 2))
        for t in flight[:SHOWN_IN_FLIGHT]:
            table.add_row(str(t["name"]), str(t["state"]), str(t.get("started_at") or ""))
        if len(flight) > SHOWN_IN_FLIGHT:
            table.add_row(f"... and {len(flight) - SHOWN_IN_FLIGHT} more", "", "")
        parts.append(table)
    parts.extend(failures(frame.tasks))
    if frame.stopping:
        parts.append(Text("Stopping: running tasks finish (Ctrl-C again to abandon them)."))
    return parts


def _style(state: str) -> str:
    if state in ("ERROR", "CANCELLED"):
        return "red"
    return "green" if state == "SUCCESS" else "yellow"


def failures(tasks: Sequence[dict[str, Any]]) -> list[Text]:
    """Each failed task and why (its whole ``state_info``, indented)."""
    out = []
    for t in tasks:
        if t["state"] != "ERROR":
            continue
        info = str(t.get("state_info") or "").strip().replace("\n", "\n    ")
        out.append(Text.assemble(("  ✗ ", "red"), (str(t["name"]), "bold"), ": ", info))
    return out


def make_execution_view(console: Console) -> ExecutionView:
    if console.is_terminal:
        return LiveExecutionView(console)
    return PlainExecutionView(console)


def wait_here(
    workflows: WorkflowService, project: str, execution_id: str, console: Console
) -> ExecutionWaitResult:
    """Until the execution ends (or pauses), or Ctrl-C: the engine runs here,
    or (a server's service) the server runs it and this only watches."""
    poller = ExecutionPoller(workflows, project, execution_id)
    view = make_execution_view(console)
    frame, interrupted = watch(workflows.engine, poller, view)
    view.close(frame)
    return ExecutionWaitResult(frame.execution, frame.tasks, interrupted)


def resume_hint(result: ExecutionWaitResult, command: str, *, remote: bool = False) -> str:
    """After Ctrl-C: the execution is still running in the store (or on
    the server, which goes on with it)."""
    execution_id = result.execution["id"]
    if remote:
        lines = ["Stopped watching. The server goes on with the execution."]
        if result.state in ACTIVE:
            lines += [
                "To see where it is:",
                f"  {command} execution show {execution_id}",
                "To stop it instead:",
                f"  {command} execution cancel {execution_id}",
            ]
        return "\n".join(lines)
    lines = ["Interrupted. What was running has been recorded."]
    if result.state in ACTIVE:
        lines += [
            f"The execution is still {result.state} and resumes where it stopped. To resume it:",
            f"  {command} engine --until-idle",
            "To stop it instead:",
            f"  {command} execution cancel {execution_id}",
        ]
    return "\n".join(lines)


def failure_line(result: ExecutionWaitResult, command: str, *, remote: bool = False) -> str:
    """Why the execution did not end SUCCESS."""
    e = result.execution
    head = f"Execution {e['id']} ({e['workflow_name']}) {e['state']}"
    if result.state == "PAUSED" and remote:
        return f"{head}: resume it with `{command} execution resume {e['id']}`."
    if result.state == "PAUSED":
        return (
            f"{head}: resume it with `{command} execution resume {e['id']}`, then run "
            f"`{command} engine --until-idle`."
        )
    if result.state in ACTIVE:
        return f"{head}: no engine could make progress."
    info = str(e.get("state_info") or "").strip()
    return f"{head}: {info}" if info else head
