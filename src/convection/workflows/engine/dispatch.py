"""What a completed task leads to (direct workflows): its transitions,
engine commands, and the joins it arrives at or rules out.

Mistral's rules (``mistral/workflow/direct_workflow.py``,
``mistral/engine/dispatcher.py``):

* clauses in order: ``on-error`` (ERROR), ``on-skip`` falling through to
  ``on-success`` when it yields nothing (SKIPPED), ``on-success``
  (SUCCESS), then ``on-complete`` for any completed state but CANCELLED
  and SKIPPED; an entry runs when its guard is empty or truthy, evaluated
  against the task's outbound context;
* an error is handled when an ``on-error`` entry fired, ``noop``
  included; ``on-complete`` never handles one;
* ``noop`` is dropped; a state command (``fail``, ``succeed``, ``pause``)
  runs after the entries before it; entries after ``fail``/``succeed`` are
  discarded, those after ``pause`` wait for the resume (a parked node);
* a join's inbound tasks each induce a state: triggered (it listed the
  join), waiting (it may still run), or error (it completed without
  triggering the join, or can no longer be reached). ``all`` runs when
  every one triggered and fails at the first error (``Failed by tasks:
  [...]``); ``N`` runs at N triggered and fails once errors exceed the
  inbound count minus N.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from convection.workflows.engine import states
from convection.workflows.engine.data import Host, evaluated, expression_context
from convection.workflows.engine.run import ExecutionRun, TaskMemory
from convection.workflows.engine.step import PARKED_JOIN, PARKED_PAUSE, Step
from convection.workflows.lang import Transition

#: Key in a task's ``runtime_context``: the (task, event) pairs it started.
NEXT_TASKS = "next_tasks"
#: Key in a task's ``runtime_context``: the (state, state_info) its
#: ``fail``/``succeed`` or force-fail ended the workflow with.
ENDED = "ended"
#: Key in a parked dispatch's ``runtime_context``: the entries left for the resume.
BACKLOG = "backlog"


def with_items_names(run: ExecutionRun) -> frozenset[str]:
    """The workflow's with-items tasks (their result is a list), once per spec."""
    found = _WITH_ITEMS.get(id(run.spec))
    if found is None or found[0] is not run.spec:
        names = frozenset(n for n, t in run.spec.tasks.items() if t.with_items)
        if len(_WITH_ITEMS) > 256:
            _WITH_ITEMS.clear()
        found = _WITH_ITEMS[id(run.spec)] = (run.spec, names)
    return found[1]


_WITH_ITEMS: dict[int, tuple[Any, frozenset[str]]] = {}


def evaluated_name(run: ExecutionRun, memory: TaskMemory, raw: str) -> str:
    """An ``action`` or ``workflow`` name, which may be an expression."""
    if "<%" not in raw and "{{" not in raw:
        return raw
    host = Host(run, memory, with_items_names(run))
    return str(evaluated(raw, expression_context(run, memory), host))


def truthy(run: ExecutionRun, memory: TaskMemory, condition: str | None) -> bool:
    if condition is None or condition == "":
        return True
    host = Host(run, memory, with_items_names(run))
    return bool(evaluated(condition, expression_context(run, memory, after=True), host))


def entries(run: ExecutionRun, memory: TaskMemory) -> tuple[list[tuple[Transition, str]], bool]:
    """The entries that fire, each with its event, and whether an error
    was handled."""
    spec = run.spec.tasks[memory.name]
    state = memory.state
    fired: list[tuple[Transition, str]] = []
    handled = False

    def take(event: Any) -> bool:
        got = [(t, str(event)) for t in spec.next(event) if truthy(run, memory, t.condition)]
        fired.extend(got)
        return bool(got)

    if state == states.ERROR:
        handled = take("error")
    elif state == states.SKIPPED:
        if not take("skip"):
            take("success")
    elif state == states.SUCCESS:
        take("success")
    if state not in (states.CANCELLED, states.SKIPPED):
        take("complete")
    return fired, handled


def dispatch(step: Step, memory: TaskMemory, backlog: Sequence[list[Any]] | None = None) -> None:
    """Run ``memory``'s transitions (or a resumed backlog of them) into ``step``."""
    run = step.run
    if backlog is None:
        fired, handled = entries(run, memory)
        todo = [(t.target, dict(t.params), event) for t, event in fired]
    else:
        handled = memory.record.error_handled
        todo = [(str(b[0]), dict(b[1]), str(b[2])) for b in backlog]
    started: list[list[str]] = list(memory.record.runtime_context.get(NEXT_TASKS, []))
    for i, (target, params, event) in enumerate(todo):
        if target == "noop":
            continue
        if target in ("fail", "succeed"):
            msg = _message(run, memory, params)
            step.end = (states.ERROR if target == "fail" else states.SUCCESS, msg)
            break
        if target == "pause":
            rest = [[t, p, e] for t, p, e in todo[i + 1 :]]
            _pause(step, memory, rest)
            break
        _schedule(step, memory, target)
        started.append([target, event])
    context = {**memory.record.runtime_context, NEXT_TASKS: started}
    if step.end is not None:
        context[ENDED] = list(step.end)  # a take-up after a crash ends it so too
    step.task(memory, processed=True, error_handled=handled, runtime_context=context)
    _check_joins(step, memory)


def _message(run: ExecutionRun, memory: TaskMemory, params: dict[str, Any]) -> str | None:
    msg = params.get("msg")
    if msg is None:
        return None
    host = Host(run, memory, with_items_names(run))
    value = evaluated(msg, expression_context(run, memory, after=True), host)
    return None if value is None else str(value)


def _pause(step: Step, memory: TaskMemory, rest: list[list[Any]]) -> None:
    """The ``pause`` command: the workflow pauses; what followed it waits
    in a parked dispatch node that the resume wakes."""
    if step.run.execution.state == states.RUNNING:
        step.execution(state=states.PAUSED)
    if rest:
        payload = {"task": memory.id, "parked": PARKED_PAUSE, BACKLOG: rest}
        step.node(f"{memory.id}:backlog", memory.name, payload, kind="dispatch")


# -- next tasks and joins --------------------------------------------------------------
def _schedule(step: Step, source: TaskMemory, target: str) -> None:
    run = step.run
    spec = run.spec.tasks[target]
    if spec.join is None:
        step.new_task(target, [source.id], state=states.RUNNING)
        return
    waiting = run.joins.get(target)
    if waiting is None:
        join = step.new_task(
            target, [source.id], state=states.WAITING, node_state="sleeping",
            parked=PARKED_JOIN, state_info=None,
        )  # fmt: skip
    else:
        join = run.tasks[waiting]
        step.task(join, predecessors=[*join.record.predecessors, source.id])
    _evaluate_join(step, join)


def _check_joins(step: Step, memory: TaskMemory) -> None:
    """A task that completed may rule out a waiting join it did not
    trigger (directly, or by being the last way to reach one)."""
    run = step.run
    for join_id in list(run.joins.values()):
        join = run.tasks[join_id]
        if memory.id not in join.record.predecessors:
            _evaluate_join(step, join)


def _evaluate_join(step: Step, join: TaskMemory) -> None:
    run = step.run
    if join.state != states.WAITING:
        return
    spec = run.spec.tasks[join.name]
    inbound = _inbound_names(run, join.name)
    arrived = {run.tasks[p].name for p in join.record.predecessors if p in run.tasks}
    needed = len(inbound) if spec.join == "all" else int(spec.join or 1)
    if len(arrived & inbound) >= needed:
        step.task(join, state=states.RUNNING, started_at=step.now, state_info=None)
        step.wake(join)
        return
    failed = sorted(n for n in inbound - arrived if not _may_arrive(run, n, join.name))
    if len(failed) > len(inbound) - needed:
        info = f"Failed by tasks: {failed}"
        step.task(join, state=states.ERROR, state_info=info, finished_at=step.now)
        step.wake(join)


def _inbound_names(run: ExecutionRun, name: str) -> set[str]:
    return {e.source for e in run.graph.incoming(name)}


def _may_arrive(run: ExecutionRun, source: str, join: str) -> bool:
    """Whether ``source`` may still trigger ``join``: one of its executions
    is unfinished, or it can still be reached."""
    for memory in run.named(source):
        if not memory.completed or not memory.record.processed:
            return True
    return _reachable(run, source, {join})


def _reachable(run: ExecutionRun, name: str, seen: set[str]) -> bool:
    """Whether a task named ``name`` may still be started: something that
    leads to it is unfinished, or reachable itself (cycles cut)."""
    if name in seen:
        return False
    seen.add(name)
    for edge in run.graph.incoming(name):
        for memory in run.named(edge.source):
            if not memory.completed or not memory.record.processed:
                return True
        if _reachable(run, edge.source, seen):
            return True
    return False
