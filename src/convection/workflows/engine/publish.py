"""What a completed task publishes (``data_flow.publish_variables``).

Branch values go to the task's row (``published``) and travel with the
branch through the tasks' contexts; ``global`` values are merged into the
execution's context. Both are evaluated against the task's inbound
context, where ``task()`` is the task itself with its result. An error
here force-fails the task (Mistral's behaviour).
"""

from __future__ import annotations

from typing import Any, cast

from convection.store import UpdateActionExecution
from convection.workflows.engine import states
from convection.workflows.engine.data import GLOBAL, Host, evaluated, expression_context
from convection.workflows.engine.dispatch import with_items_names
from convection.workflows.engine.run import TaskMemory
from convection.workflows.engine.step import Step

PUBLISHED = "published"


def publish(step: Step, memory: TaskMemory) -> None:
    _publish(step, memory)
    _drop_result(step, memory)


def _drop_result(step: Step, memory: TaskMemory) -> None:
    """``keep-result: false``: once published, the action results are
    emptied (Mistral sets each action execution's output to ``{}``)."""
    from convection.workflows.engine import policies
    from convection.workflows.engine.items import action_id, generation

    spec = step.run.spec.tasks[memory.name]
    if spec.keep_result is True or (not memory.results and not memory.errors):
        return
    if policies.flag(step.run, memory, spec.keep_result, after=True):
        return
    rc = memory.record.runtime_context
    retry, gen = int(rc.get("retry_no", 0)), generation(rc)
    for index in [*memory.results, *memory.errors]:
        aid = action_id(memory.id, retry, index, gen)
        step.facts.append(UpdateActionExecution(aid, {"output": {}}))
    memory.results.clear()
    memory.errors.clear()


def _publish(step: Step, memory: TaskMemory) -> None:
    run = step.run
    rc = {**memory.record.runtime_context, PUBLISHED: True}
    spec = run.spec.tasks[memory.name]
    state = memory.state
    found = (
        spec.publish_for(cast("Any", state))
        if state in (states.SUCCESS, states.ERROR, states.SKIPPED)
        else None
    )
    if found is None or (not found.branch and not found.global_):
        step.task(memory, runtime_context=rc)
        return
    host = Host(run, memory, with_items_names(run))
    ctx = expression_context(run, memory)
    branch = evaluated(dict(found.branch), ctx, host) if found.branch else {}
    glob = evaluated(dict(found.global_), ctx, host) if found.global_ else {}
    step.task(memory, published=branch, runtime_context=rc)
    memory.outbound = None
    if glob:
        context = dict(run.execution.context)
        context[GLOBAL] = {**context.get(GLOBAL, {}), **glob}
        step.execution(context=context)
