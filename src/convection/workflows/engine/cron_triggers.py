"""Cron triggers (Mistral's ``/v2/cron_triggers``): create, list, show and
delete, with Mistral's checks and messages (``mistral/services/triggers.py``,
``mistral/api/controllers/v2/cron_trigger.py``); they fire in the engine
(``cron_fire``).

Mistral's rules:

* a pattern (cron syntax, croniter's) or a first execution time
  (``YYYY-MM-DD HH:MM``, UTC) is needed; a first time must be at least a
  minute ahead; a count above 1 needs a pattern; a first time alone means
  one run;
* the first run is at the first time, else at the pattern's next time
  after now;
* the workflow is found by id or name when the trigger is made, and the
  input is checked against it then; the trigger keeps the workflow's id;
* the unique key is (name, project); a trigger is found by name or id.

Bodies: ``id, name, pattern, first_execution_time, next_execution_time,
remaining_executions, workflow_name, workflow_id, workflow_input,
workflow_params, scope, project_id, created_at, updated_at`` with JSON
fields as values and times as Mistral writes them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

from croniter import croniter

from convection.common import Diagnostic, InvalidInput, NotFound
from convection.store import CronTriggerRecord, Store
from convection.workflows.definitions import _visible, workflow_not_found
from convection.workflows.engine.data import mistral_time
from convection.workflows.engine.launch import checked_input
from convection.workflows.engine.operations import spec_of
from convection.workflows.environments import checked_size

Body = dict[str, Any]
SortDir = Literal["asc", "desc"]

#: Mistral's column sizes: ``name`` String(200), ``pattern`` String(100).
MAX_NAME: Final = 200
MAX_PATTERN: Final = 100
#: Far beyond any real count, still an integer every database stores.
MAX_COUNT: Final = 2**31 - 1
FIRST_TIME_FORMAT: Final = "%Y-%m-%d %H:%M"


class CronTriggerNotFound(NotFound):
    """Mistral's ``DBEntityNotFoundError`` for a cron trigger (HTTP 404)."""

    def __init__(self, identifier: str) -> None:
        self.identifier = identifier
        Exception.__init__(self, f"Cron trigger not found [identifier={identifier}]")


def _bad(message: str, *path: str) -> InvalidInput:
    return InvalidInput([Diagnostic(message, path)])


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def next_time(pattern: str, after: datetime) -> datetime:
    """The pattern's first time after ``after`` (UTC, whole seconds)."""
    found = croniter(pattern, after).get_next(datetime)
    assert isinstance(found, datetime)
    return found.astimezone(UTC).replace(microsecond=0)


def cron_trigger_body(record: CronTriggerRecord) -> Body:
    return {
        "id": record.id,
        "name": record.name,
        "pattern": record.pattern,
        "first_execution_time": mistral_time(record.first_execution_time),
        "next_execution_time": mistral_time(record.next_execution_time),
        "remaining_executions": record.remaining_executions,
        "workflow_name": record.workflow_name,
        "workflow_id": record.workflow_id,
        "workflow_input": record.workflow_input,
        "workflow_params": record.workflow_params,
        "scope": record.scope,
        "project_id": record.project,
        "created_at": mistral_time(record.created_at),
        "updated_at": mistral_time(record.updated_at),
    }


def parse_first_time(value: str | datetime | None) -> datetime | None:
    """``YYYY-MM-DD HH:MM`` (UTC), as Mistral parses it."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if not isinstance(value, str):
        raise _bad(f"first_execution_time must be text, not {type(value).__name__}")
    try:
        parsed = datetime.strptime(value, FIRST_TIME_FORMAT)
    except ValueError as exc:
        raise _bad(str(exc)) from None
    return parsed.replace(tzinfo=UTC)


def validate_schedule(
    pattern: str | None, first_time: datetime | None, count: int | None, now: datetime
) -> None:
    """Mistral's ``validate_cron_trigger_input``, in its words."""
    if not (first_time or pattern):
        raise _bad("Pattern or first_execution_time must be specified.")
    if first_time:
        if now + timedelta(seconds=60) > first_time:
            raise _bad("first_execution_time must be at least 1 minute in the future.")
        if not pattern and count and count > 1:
            raise _bad("Pattern must be provided if count is superior to 1.")
    if pattern:
        if len(pattern) > MAX_PATTERN:
            raise _bad(f"pattern: at most {MAX_PATTERN} characters", "pattern")
        try:
            croniter(pattern)
        except (ValueError, KeyError):
            raise _bad(f"The specified pattern is not valid: {pattern}") from None


def _count(value: Any) -> int | None:
    """``remaining_executions``: WSME's ``IntegerType(minimum=1)``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(
            f"Invalid input for field/attribute remaining_executions. Value: '{value}'. "
            "unable to convert to int",
            "remaining_executions",
        )
    if not 1 <= value <= MAX_COUNT:
        raise _bad(
            f"Invalid input for field/attribute remaining_executions. Value: '{value}'. "
            "Value should be greater or equal to 1",
            "remaining_executions",
        )
    return int(value)


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_NAME:
        raise _bad(f"name: a cron trigger name is 1 to {MAX_NAME} characters", "name")
    return value


def create_cron_trigger(
    store: Store,
    project: str,
    name: str,
    *,
    workflow_name: str | None = None,
    workflow_id: str | None = None,
    workflow_input: Mapping[str, Any] | None = None,
    workflow_params: Mapping[str, Any] | None = None,
    pattern: str | None = None,
    first_time: str | datetime | None = None,
    count: int | None = None,
    now: datetime | None = None,
) -> Body:
    """Mistral's ``POST /v2/cron_triggers`` (``triggers.create_cron_trigger``)."""
    now = now or _now()
    name, count, first = _name(name), _count(count), parse_first_time(first_time)
    pattern = pattern or None
    validate_schedule(pattern, first, count, now)
    if first is not None:
        due = first
        if not (pattern or count):
            count = 1
    else:
        assert pattern is not None
        due = next_time(pattern, now)
    identifier = workflow_id or workflow_name
    if not identifier:
        raise _bad("Workflow ID or workflow name must be provided.")
    params = dict(workflow_params or {})
    namespace = str(params.get("namespace") or "")
    found = store.workflows.get_workflow(project, identifier, namespace)
    if found is None:
        raise workflow_not_found(identifier, namespace)
    given = dict(workflow_input or {})
    checked_input(spec_of(found.name, found.definition), given)
    checked_size(given, "workflow_input", "CronTrigger")
    checked_size(params, "workflow_params", "CronTrigger")
    record = CronTriggerRecord(
        id=str(uuid.uuid4()), project=project, name=name, pattern=pattern,
        first_execution_time=first, next_execution_time=due, remaining_executions=count,
        workflow_name=found.name, workflow_id=found.id, workflow_namespace=found.namespace,
        workflow_input=given, workflow_params=params,
    )  # fmt: skip
    store.schedules.create_cron_trigger(record)
    return cron_trigger_body(store.schedules.get_cron_trigger(record.id) or record)


def find_cron_trigger(store: Store, project: str, identifier: str) -> CronTriggerRecord:
    """By name (the project's own, else a public one) or by id."""
    found = store.schedules.get_cron_trigger_named(project, identifier)
    if found is None:
        by_id = store.schedules.get_cron_trigger(identifier)
        visible = by_id is not None and (by_id.project == project or by_id.scope == "public")
        found = by_id if visible else None
    if found is None:
        raise CronTriggerNotFound(identifier)
    return found


def get_cron_trigger(store: Store, project: str, identifier: str) -> Body:
    return cron_trigger_body(find_cron_trigger(store, project, identifier))


def delete_cron_trigger(store: Store, project: str, identifier: str) -> None:
    """Only the project's own (another's public one is not found here)."""
    found = find_cron_trigger(store, project, identifier)
    if found.project != project or not store.schedules.delete_cron_trigger(found.id):
        raise CronTriggerNotFound(identifier)


def list_cron_triggers(
    store: Store,
    project: str,
    *,
    filters: Mapping[str, Any] | None = None,
    sort_keys: Sequence[str] = ("created_at",),
    sort_dir: SortDir = "asc",
    limit: int | None = None,
    marker: str | None = None,
) -> list[Body]:
    """The project's cron triggers and the public ones, one keyset page."""
    lister = store.schedules.list_cron_triggers
    rows = _visible(lister, project, filters, sort_keys, sort_dir, limit, marker)
    return [cron_trigger_body(r) for r in rows]
