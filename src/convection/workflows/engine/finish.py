"""The end of a workflow execution (``Workflow.check_and_complete``).

Once nothing of its traversal is left to run (or ``fail``/``succeed``
ended it at once), the execution's state follows Mistral's rules:

1. any CANCELLED task: CANCELLED, ``Cancelled tasks: a, b``;
2. no unhandled error (direct: ERROR tasks whose ``on-error`` did not
   fire; reverse: any ERROR task): SUCCESS, with ``output`` evaluated
   over the final context (the context itself when there is no output);
3. otherwise ERROR, with Mistral's aggregate message, and ``output``
   ``{"result": message}`` merged with ``output-on-error``.

The execution's row, its traversal's end and the wake of the parent
task's node (a sub-workflow) are one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from convection.store import AddTimer, Change, Store, UpdateExecution, UpdateTraversal
from convection.workflows.engine import states
from convection.workflows.engine.data import EXPRESSION_LIMITS, final_context
from convection.workflows.engine.dispatch import NEXT_TASKS
from convection.workflows.engine.items import action_id, generation
from convection.workflows.engine.run import ExecutionRun, TaskMemory
from convection.workflows.engine.step import WAKE
from convection.workflows.lang import EvaluationError, evaluate

JSONDict = dict[str, Any]


def ending(run: ExecutionRun) -> tuple[str, str | None]:
    if run.ended is not None:
        return run.ended
    tasks = list(run.all())
    cancelled = sorted(t.name for t in tasks if t.state == states.CANCELLED)
    if cancelled:
        return states.CANCELLED, f"Cancelled tasks: {', '.join(cancelled)}"
    failed = [t for t in tasks if t.state == states.ERROR and not _handled(run, t)]
    if not failed:
        return states.SUCCESS, None
    return states.ERROR, failure_message(failed)


def _handled(run: ExecutionRun, task: TaskMemory) -> bool:
    return run.spec.type == "direct" and task.record.error_handled


def failure_message(failed: Sequence[TaskMemory]) -> str:
    """Mistral's ``_build_fail_info_message``: each failed task, then its
    failed action runs (or sub-workflows) with their index and error."""
    ordered = sorted(failed, key=lambda t: t.name)
    text = f"Failure caused by error in tasks: {', '.join(t.name for t in ordered)}\n"
    for task in ordered:
        text += f"\n  {task.name} [task_ex_id={task.id}] -> {task.record.state_info}\n"
        rc = task.record.runtime_context
        children = rc.get("children", {})
        for index in sorted(task.errors):
            error = task.errors[index]
            if str(index) in children:
                text += f"    [wf_ex_id={children[str(index)]}, idx={index}]: {error}\n"
            else:
                aid = action_id(task.id, int(rc.get("retry_no", 0)), index, generation(rc))
                text += f"    [action_ex_id={aid}, idx={index}]: {error}\n"
    return text


def ends_of(run: ExecutionRun) -> list[TaskMemory]:
    """The tasks the run ended with: completed, with no next tasks."""
    return [
        t for t in run.all()
        if t.completed and not t.record.runtime_context.get(NEXT_TASKS)
    ]  # fmt: skip


def output(run: ExecutionRun, state: str, info: str | None) -> tuple[str, str | None, JSONDict]:
    """The end's (state, state_info, output), as Mistral's ``_succeed_workflow``
    and ``_fail_workflow`` write them: an ``output`` that cannot be evaluated
    fails the workflow (Mistral's "Failed to check and complete"), an
    ``output-on-error`` that cannot be evaluated says so in the message."""
    ctx = final_context(run, ends_of(run))
    spec = run.spec
    if state == states.SUCCESS:
        if not spec.output:  # Mistral: the whole final context
            merged = {**ctx.maps[2], **ctx.maps[0]}
            return state, info, {k: v for k, v in merged.items() if not k.startswith("__")}
        try:
            return state, info, dict(evaluate(dict(spec.output), ctx, limits=EXPRESSION_LIMITS))
        except EvaluationError as exc:
            execution = run.execution
            info = (
                f"Failed to check and complete [wf_ex_id={execution.id}, "
                f"wf_name={execution.workflow_name}]: {exc.message}"
            )
            state = states.ERROR
    extra: JSONDict = {}
    if spec.output_on_error:
        try:
            extra = dict(evaluate(dict(spec.output_on_error), ctx, limits=EXPRESSION_LIMITS))
        except EvaluationError as exc:
            info = (
                "Failed to evaluate expression in output-on-error! "
                f"(output-on-error: '{dict(spec.output_on_error)}', exception: "
                f"'{exc.message}' Cause: '{info}'"
            )
    return state, info, {"result": info, **extra}


def finish(store: Store, run: ExecutionRun, now: datetime) -> bool:
    """Write the end of ``run``; whether a parent's node got a wake."""
    state, info = ending(run)
    execution = run.execution
    if execution.state in states.TERMINAL and run.ended is None:
        state, info = execution.state, execution.state_info  # cancelled or forced meanwhile
        out = execution.output
    else:
        state, info, out = output(run, state, info)
    changes: list[Change] = [
        UpdateExecution(execution.id, {"state": state, "state_info": info, "output": out}),
        UpdateTraversal(
            run.id,
            {"status": "COMPLETE" if state == states.SUCCESS else "FAILED", "finished_at": now},
        ),
    ]
    woke = _wake_parent(store, run, now, changes)
    store.apply(changes)
    return woke


def _wake_parent(store: Store, run: ExecutionRun, now: datetime, changes: list[Change]) -> bool:
    parent_task = run.execution.task_execution_id
    if parent_task is None:
        return False
    task = store.workflows.get_task(parent_task)
    if task is None:
        return False
    parent = store.workflows.get_execution(task.execution_id)
    if parent is None or parent.traversal_id is None or task.node_key is None:
        return False
    node = store.get_node(parent.traversal_id, task.node_key)
    if node is None or node.state in ("done", "failed", "skipped"):
        return False
    changes.append(AddTimer(parent.traversal_id, task.node_key, now, WAKE))
    return True
