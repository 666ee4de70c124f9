"""``convection cron-trigger ...``: Mistral's cron triggers, as
python-mistralclient's ``openstack cron trigger create|list|show|delete``
handles them.

A trigger starts a workflow on a cron pattern, from a first time, or both
(``docs/workflows.md``, "Cron triggers and environments"); any engine that
runs workflows fires it. The commands call the invocation's
:class:`~convection.cli.workflow_service.WorkflowService` (the store's
operations, or a server's ``/v2/cron_triggers`` with ``--url``), so output
and exit codes are the same in both modes. Tables have
python-mistralclient's columns; JSON and YAML carry Mistral's REST bodies.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any, Final

import typer

from convection.cli.execution import fields_table, json_mapping, rows_table
from convection.cli.output import Format, emit, print_diagnostics
from convection.cli.workflow import (
    FormatOpt,
    LimitOpt,
    MarkerOpt,
    SortDirOpt,
    SortKeysOpt,
    each_name,
    filter_options,
    page_rows,
    service,
)
from convection.common import InvalidInput

app = typer.Typer(
    help="Cron triggers: start a workflow on a schedule; create, list, show and delete them.",
    no_args_is_help=True,
)

FilterOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--filter",
        help="KEY=VALUE (id, name, workflow_name, workflow_id, pattern, "
        "remaining_executions); may repeat.",
    ),
]

#: python-mistralclient's ``CronTriggerFormatter`` columns, list and show alike.
COLUMNS: Final = (
    ("id", "ID"),
    ("name", "Name"),
    ("workflow_name", "Workflow"),
    ("workflow_params", "Params"),
    ("pattern", "Pattern"),
    ("next_execution_time", "Next execution time"),
    ("remaining_executions", "Remaining executions"),
    ("created_at", "Created at"),
    ("updated_at", "Updated at"),
)
#: ``--first-time``'s format, the API's ``first_execution_time``.
FIRST_TIME: Final = "%Y-%m-%d %H:%M"


def _shown(trigger: dict[str, Any]) -> dict[str, Any]:
    """The row a table prints: Params as the JSON text python-mistralclient
    shows (the API's string), not as a structure."""
    return {**trigger, "workflow_params": json.dumps(trigger["workflow_params"])}


def _utc(first_time: str | None, utc: bool) -> str | None:
    """``--first-time`` as the API takes it (UTC): python-mistralclient reads
    it as this machine's local time unless ``--utc`` is given."""
    if first_time is None or utc:
        return first_time
    try:
        local = datetime.strptime(first_time, FIRST_TIME)
    except ValueError as exc:  # the operation's words for a bad time
        raise InvalidInput.single(str(exc)) from None
    return local.astimezone(UTC).strftime(FIRST_TIME)


def _int_filters(filters: dict[str, Any]) -> dict[str, Any]:
    """``remaining_executions`` is a number; the store compares it as one."""
    given = filters.get("remaining_executions")
    if given is None:
        return filters
    try:
        counts = [int(v) for v in given]
    except ValueError:
        raise InvalidInput.single(f"Invalid remaining_executions filter: {given!r}") from None
    return {**filters, "remaining_executions": counts}


@app.command("create")
def trigger_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Cron trigger name.")],
    workflow: Annotated[
        str, typer.Argument(metavar="WORKFLOW_IDENTIFIER", help="Workflow name or ID.")
    ],
    workflow_input: Annotated[
        str | None,
        typer.Argument(
            metavar="[WORKFLOW_INPUT]", help="The workflow's input: a JSON object, or a file."
        ),
    ] = None,
    params: Annotated[
        str | None,
        typer.Option("--params", metavar="JSON|@FILE", help="Workflow params (env, namespace...)."),
    ] = None,
    pattern: Annotated[
        str | None, typer.Option("--pattern", metavar="'* * * * *'", help="Cron pattern.")
    ] = None,
    first_time: Annotated[
        str | None,
        typer.Option(
            "--first-time",
            metavar="'YYYY-MM-DD HH:MM'",
            help="Date and time of the first execution; local time unless --utc.",
        ),
    ] = None,
    count: Annotated[
        int | None, typer.Option("--count", help="How many executions (then it is deleted).")
    ] = None,
    utc: Annotated[bool, typer.Option("--utc", help="--first-time is UTC.")] = False,
    fmt: FormatOpt = Format.table,
) -> int:
    """Create a cron trigger: WORKFLOW_IDENTIFIER runs on --pattern, from
    --first-time, or both. The input is checked against the workflow now."""
    workflows, project = service(ctx)
    try:
        made = workflows.create_cron_trigger(
            project,
            name,
            workflow,
            workflow_input=json_mapping(workflow_input, "WORKFLOW_INPUT"),
            workflow_params=json_mapping(params, "--params"),
            pattern=pattern,
            first_time=_utc(first_time, utc),
            count=count,
        )
    except InvalidInput as exc:
        print_diagnostics(exc.diagnostics, fmt)
        return 1
    emit(made, fmt, lambda: fields_table(COLUMNS, _shown(made)))
    return 0


@app.command("list")
def trigger_list(
    ctx: typer.Context,
    filters: FilterOpt = None,
    limit: LimitOpt = None,
    marker: MarkerOpt = None,
    sort_keys: SortKeysOpt = "created_at",
    sort_dirs: SortDirOpt = "asc",
    fmt: FormatOpt = Format.table,
) -> int:
    """List the project's cron triggers and the public ones."""
    workflows, project = service(ctx)
    chosen = _int_filters(filter_options(filters))
    items = page_rows(
        workflows.list_cron_triggers, project, filters=chosen,
        sort_keys=sort_keys, sort_dirs=sort_dirs, limit=limit, marker=marker,
    )  # fmt: skip
    emit(items, fmt, lambda: rows_table(COLUMNS, [_shown(i) for i in items]))
    return 0


@app.command("show")
def trigger_show(
    ctx: typer.Context,
    trigger: Annotated[str, typer.Argument(metavar="CRON_TRIGGER", help="Name or ID.")],
    fmt: FormatOpt = Format.table,
) -> int:
    """Show one cron trigger, with when it fires next."""
    workflows, project = service(ctx)
    found = workflows.get_cron_trigger(project, trigger)
    emit(found, fmt, lambda: fields_table(COLUMNS, _shown(found)))
    return 0


@app.command("delete")
def trigger_delete(
    ctx: typer.Context,
    triggers: Annotated[list[str], typer.Argument(metavar="CRON_TRIGGER...", help="Names or IDs.")],
) -> int:
    """Delete cron triggers; executions they started stay."""
    workflows, project = service(ctx)
    remove = workflows.delete_cron_trigger
    return each_name(triggers, lambda t: remove(project, t), "cron trigger")
