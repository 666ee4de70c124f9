"""Firing due cron triggers: the engine's periodic check (a kernel sweep,
``Kernel.add_sweep``), exactly once per due time.

Each firing is one store transaction (``store.schedules.fire_cron_trigger``):
the trigger moves on by compare-and-set on the ``next_execution_time`` it
was read with, and the execution it starts is written with its traversal
and first nodes. So two engines on one store, or an engine restarted after
a crash, start one execution per due time: a loser's compare-and-set
matches nothing and writes nothing. The execution's id is derived from the
trigger's id and the due time, so even a replayed firing names the same
execution.

As Mistral (``advance_cron_trigger``, ``mistral/services/periodic.py``):
the remaining count goes down by one, and the trigger is deleted when it
reaches 0; the next time is the pattern's next one after the later of now
and the due time, so a trigger that was due while no engine ran fires once
for what it missed and then keeps to its pattern; a trigger whose workflow
cannot start (deleted, its input no longer valid) still moves on, and the
failure is logged. The execution is Mistral's: the trigger's input and
params, its description a JSON text naming the trigger.

The check reads only the due rows (an index on ``next_execution_time``),
at most :data:`BATCH` per scan, and never holds a worker.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from convection.common import ConvectionError
from convection.store import CronFire, CronTriggerRecord, ExecutionRecord, Store
from convection.workflows.engine.cron_triggers import next_time
from convection.workflows.engine.launch import start_of
from convection.workflows.engine.operations import new_execution
from convection.workflows.lang import WorkflowSpec

_log = logging.getLogger(__name__)

#: Triggers fired per scan at most; the rest are due at the next scan.
BATCH: Final = 100
_IDS: Final = uuid.UUID("5f0c3e36-8a9e-4c53-9d62-0c3a7f1b2e10")


def execution_id(trigger_id: str, due: datetime) -> str:
    """The execution a trigger starts at ``due``: the same id on a replay."""
    return str(uuid.uuid5(_IDS, f"{trigger_id}@{due.astimezone(UTC).isoformat()}"))


def _description(trigger: CronTriggerRecord) -> str:
    return json.dumps(
        {
            "description": f"Workflow execution created by cron trigger '({trigger.id})'.",
            "triggered_by": {"type": "cron_trigger", "id": trigger.id, "name": trigger.name},
        }
    )


def _advance(trigger: CronTriggerRecord, now: datetime) -> tuple[datetime | None, int | None]:
    """(next time, remaining); a None time: this is the trigger's last run."""
    remaining = trigger.remaining_executions
    if remaining is not None and remaining > 0:
        remaining -= 1
    if remaining == 0 or not trigger.pattern:
        return None, 0
    return next_time(trigger.pattern, max(now, trigger.next_execution_time)), remaining


def _execution(
    store: Store, trigger: CronTriggerRecord, now: datetime
) -> tuple[ExecutionRecord, WorkflowSpec]:
    """The execution the trigger starts now (Mistral's ``start_workflow``)."""
    params = dict(trigger.workflow_params)
    namespace = str(params.pop("namespace", None) or trigger.workflow_namespace)
    found = store.workflows.get_workflow(trigger.project, trigger.workflow_id, namespace)
    if found is None:
        raise ConvectionError(f"workflow {trigger.workflow_name} ({trigger.workflow_id}) is gone")
    return new_execution(
        store, trigger.project, found, execution_id(trigger.id, trigger.next_execution_time),
        input=trigger.workflow_input, params=params, namespace=namespace,
        description=_description(trigger), now=now,
    )  # fmt: skip


def _firing(store: Store, trigger: CronTriggerRecord, now: datetime) -> CronFire:
    when, remaining = _advance(trigger, now)
    fire = CronFire(trigger.id, trigger.next_execution_time, when, remaining)
    try:
        execution, spec = _execution(store, trigger, now)
        traversal, nodes = start_of(execution, spec, now)
    except (ConvectionError, ValueError) as exc:
        _log.warning("cron trigger %s (%s): cannot start: %s", trigger.name, trigger.id, exc)
        return fire
    return CronFire(fire.trigger_id, fire.due, when, remaining, execution, traversal, nodes)


def fire_due(
    store: Store, now: datetime, *, started: Callable[[str], None] | None = None
) -> list[str]:
    """Fire every trigger due at ``now`` (at most :data:`BATCH`); the ids of
    the executions this call started. ``started`` is told each one's
    traversal, so this engine runs it without waiting for its next scan."""
    made: list[str] = []
    for trigger in store.schedules.due_cron_triggers(now, BATCH):
        fire = _firing(store, trigger, now)
        try:
            won = store.schedules.fire_cron_trigger(fire)
        except (ConvectionError, ValueError) as exc:
            _log.warning("cron trigger %s (%s): not fired: %s", trigger.name, trigger.id, exc)
            continue
        if not won or fire.execution is None:
            continue
        made.append(fire.execution.id)
        if started is not None and fire.traversal is not None:
            started(fire.traversal.id)
    return made


def cron_sweep(store: Store, started: Callable[[str], None]) -> Callable[[datetime], None]:
    """The kernel sweep of an engine that runs workflows."""

    def sweep(now: datetime) -> None:
        fire_due(store, now, started=started)

    return sweep
