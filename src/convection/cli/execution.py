"""``convection execution|task|action-execution ...``: Mistral's executions,
as python-mistralclient's ``openstack workflow execution``, ``openstack task
execution`` and ``openstack action execution`` handle them.

The operations are :mod:`convection.workflows.engine.operations`' on the
store (``--db``, ``--project``), or a server's Mistral API with ``--url``:
both are the invocation's :class:`~convection.cli.workflow_service.WorkflowService`,
so output and exit codes are the same. ``execution create`` records the
execution and returns at once, as Mistral's API does; the work happens when
an engine runs: ``convection engine``, or ``execution create --wait``, which
runs the engine in its own process and shows progress until the execution
ends (:mod:`convection.cli.execution_wait`); against a server, which runs
the engine, ``--wait`` only watches. Pause, resume and cancel change the
store; the engine that runs next acts on them.

Tables have python-mistralclient's columns; JSON and YAML carry Mistral's
REST bodies.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convection.cli.context import Invocation, invocation
from convection.cli.output import Format, emit, print_diagnostics, stderr, stdout
from convection.cli.stack_common import cell, print_table
from convection.cli.workflow import (
    LimitOpt,
    MarkerOpt,
    SortDirOpt,
    SortKeysOpt,
    each_name,
    page_rows,
    service,
)
from convection.common import InvalidInput

if TYPE_CHECKING:
    from rich.console import Console

    from convection.cli.execution_wait import ExecutionWaitResult

# The engine, the store and the language are imported by the commands that
# run: ``execution --help`` needs none of them.

_LATER = (
    " Without --wait the execution is recorded and this returns at once; the work is done"
    " by `convection engine` or by a command run with --wait (with --url, by the server)."
)

app = typer.Typer(
    help="Mistral v2 workflow executions: create, list, show, pause, resume, cancel, "
    "delete; their input and output.",
    no_args_is_help=True,
)
task_app = typer.Typer(
    help="Task executions: list, show, rerun and skip them; their result and published variables.",
    no_args_is_help=True,
)
action_execution_app = typer.Typer(
    help="Action executions of tasks: list and show them; their output.",
    no_args_is_help=True,
)

FormatOpt = Annotated[Format, typer.Option("-f", "--format", help="Output format.")]
ExecutionArg = Annotated[str, typer.Argument(metavar="ID", help="Workflow execution ID.")]
TaskArg = Annotated[str, typer.Argument(metavar="ID", help="Task execution ID.")]
ActionArg = Annotated[str, typer.Argument(metavar="ID", help="Action execution ID.")]
StateOpt = Annotated[
    str | None,
    typer.Option("--state", help="Only those in this state (RUNNING, SUCCESS, ERROR...)."),
]

#: python-mistralclient's ``ExecutionFormatter`` columns (without the
#: computed Duration).
EXECUTION_COLUMNS = (
    ("id", "ID"),
    ("workflow_id", "Workflow ID"),
    ("workflow_name", "Workflow name"),
    ("workflow_namespace", "Workflow namespace"),
    ("description", "Description"),
    ("task_execution_id", "Task Execution ID"),
    ("root_execution_id", "Root Execution ID"),
    ("state", "State"),
    ("state_info", "State info"),
    ("created_at", "Created at"),
    ("updated_at", "Updated at"),
)
#: ``TaskFormatter``'s.
TASK_COLUMNS = (
    ("id", "ID"),
    ("name", "Name"),
    ("workflow_name", "Workflow name"),
    ("workflow_namespace", "Workflow namespace"),
    ("workflow_execution_id", "Workflow Execution ID"),
    ("state", "State"),
    ("state_info", "State info"),
    ("created_at", "Created at"),
    ("started_at", "Started at"),
    ("finished_at", "Finished at"),
)
#: ``ActionExecutionFormatter``'s; its list leaves out State info.
ACTION_COLUMNS = (
    ("id", "ID"),
    ("name", "Name"),
    ("workflow_name", "Workflow name"),
    ("workflow_namespace", "Workflow namespace"),
    ("task_name", "Task name"),
    ("task_execution_id", "Task ID"),
    ("state", "State"),
    ("state_info", "State info"),
    ("accepted", "Accepted"),
    ("created_at", "Created at"),
    ("updated_at", "Updated at"),
)
ACTION_LIST_COLUMNS = tuple(c for c in ACTION_COLUMNS if c[0] != "state_info")

#: How much of a State info a list shows (python-mistralclient's ``cut``).
CUT = 25


# -- shared -----------------------------------------------------------------------------
def _cell(value: Any) -> str:
    """A table cell: ``<none>`` for nothing, never read as Rich markup
    (a State info holds ``[task_ex_id=...]``)."""
    from rich.markup import escape

    return escape(cell("<none>" if value is None or value == "" else value))


def _cut(value: Any) -> Any:
    text = value if isinstance(value, str) else None
    return f"{text[:CUT]}..." if text and len(text) > CUT else value


def rows_table(columns: Sequence[tuple[str, str]], items: list[dict[str, Any]]) -> None:
    """A listing with python-mistralclient's columns (``(key, label)``);
    the other Mistral groups (cron triggers, environments) print with it too."""
    print_table(
        [label for _, label in columns],
        [[_cell(_cut(i[k]) if k == "state_info" else i[k]) for k, _ in columns] for i in items],
    )


def fields_table(columns: Sequence[tuple[str, str]], item: dict[str, Any], **extra: Any) -> None:
    """One resource as osc's ``ShowOne`` prints it: a Field/Value table."""
    rows = [(label, _cell(item[k])) for k, label in columns]
    rows += [(label, _cell(value)) for label, value in extra.items()]
    print_table(("Field", "Value"), rows)


def _dumped(value: Any) -> None:
    """What ``openstack workflow execution output show`` prints: the JSON
    indented by 4, or an empty line for nothing."""
    if value is None or value == "":
        sys.stdout.write("\n")
        return
    sys.stdout.write(json.dumps(value, indent=4, default=str) + "\n")


def json_mapping(value: str | None, option: str) -> dict[str, Any] | None:
    """A JSON object given inline, as ``@FILE``, or (as python-mistralclient
    accepts it) as the path of a file; a file may also be YAML."""
    if value is None:
        return None
    path = Path(value[1:]) if value.startswith("@") else None
    if path is None:
        try:
            data = json.loads(value)
        except json.JSONDecodeError as exc:
            if not Path(value).is_file():
                raise InvalidInput.single(
                    f"{option}: not valid JSON ({exc.msg}: line {exc.lineno} column "
                    f"{exc.colno}); give a JSON object, or @FILE to read one from a file"
                ) from None
            path = Path(value)
    return mapping_file(path, option) if path is not None else _object(data, option)


def mapping_file(path: Path, option: str) -> dict[str, Any]:
    """A file holding one JSON or YAML object (python-mistralclient's
    ``load_content``), as an environment file or ``@FILE`` gives it."""
    return _object(_file_content(path, option), option)


def _object(data: Any, option: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InvalidInput.single(f"{option}: expected a JSON object, not {_kind(data)}")
    return data


def _file_content(path: Path, option: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput.single(f"{option}: cannot read {path}: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidInput.single(f"{option}: {path} is neither JSON nor YAML: {exc}") from None


def _kind(data: Any) -> str:
    names = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(data), "a number")


def _params(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``--param KEY=VALUE``: a VALUE that is JSON is decoded (``env={...}``),
    any other is a string."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise InvalidInput.single(f"--param {pair!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def _filters(**given: str | None) -> dict[str, Any]:
    return {k: v for k, v in given.items() if v is not None}


def _console(fmt: Format) -> Console:
    """Progress goes where it does not corrupt JSON/YAML on stdout."""
    return stdout if fmt is Format.table else stderr


def _show_execution(body: dict[str, Any], fmt: Format, **extra: Any) -> None:
    emit(body, fmt, lambda: fields_table(EXECUTION_COLUMNS, body, **extra))


# -- executions --------------------------------------------------------------------------
@app.command("create", help="Start a workflow: create an execution of it." + _LATER)
def execution_create(
    ctx: typer.Context,
    workflow: Annotated[str, typer.Argument(metavar="WORKFLOW", help="Workflow name or ID.")],
    workflow_input: Annotated[
        str | None,
        typer.Option(
            "--input", "-i", metavar="JSON|@FILE", help="The workflow's input: a JSON object."
        ),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            metavar="KEY=VALUE",
            help="An execution parameter (env, task_name...); a JSON VALUE is decoded. May repeat.",
        ),
    ] = None,
    namespace: Annotated[str, typer.Option("--namespace", help="The workflow's namespace.")] = "",
    description: Annotated[
        str, typer.Option("-d", "--description", help="Execution description.")
    ] = "",
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="Run the engine here (with --url, watch the server run it) and show "
            "progress until the execution ends; exit 1 unless it ends SUCCESS. Ctrl-C stops "
            "waiting and leaves it running.",
        ),
    ] = False,
    fmt: FormatOpt = Format.table,
) -> int:
    inv = invocation(ctx)
    workflows, project = service(ctx)
    try:
        given = json_mapping(workflow_input, "--input")
        params = _params(param)
        created = workflows.create_execution(
            project,
            workflow,
            input=given,
            params=params,
            namespace=namespace,
            description=description,
        )
    except InvalidInput as exc:
        print_diagnostics(exc.diagnostics, fmt)
        return 1
    if not wait:
        _show_execution(created, fmt)
        return 0
    from convection.cli.execution_wait import wait_here

    result = wait_here(workflows, project, created["id"], _console(fmt))
    # What it was run for; a failure's output is its State info again.
    output = result.execution["output"] if result.state == "SUCCESS" else None
    _show_execution(result.execution, fmt, **({"Output": output} if output else {}))
    _report(inv, result)
    return result.exit_code()


def _report(inv: Invocation, result: ExecutionWaitResult) -> None:
    """After a wait, on stderr: how to resume, or why it failed."""
    from convection.cli.execution_wait import failure_line, resume_hint

    if result.interrupted:
        hint = resume_hint(result, inv.command(), remote=inv.remote)
        stderr.print(hint, markup=False, highlight=False)
    elif result.state != "SUCCESS":
        line = failure_line(result, inv.command(), remote=inv.remote)
        stderr.print(f"error: {line}", markup=False, highlight=False)


@app.command("list")
def execution_list(
    ctx: typer.Context,
    workflow: Annotated[
        str | None, typer.Option("--workflow", help="Only executions of this workflow (name).")
    ] = None,
    state: StateOpt = None,
    limit: LimitOpt = None,
    marker: MarkerOpt = None,
    sort_keys: SortKeysOpt = "created_at",
    sort_dirs: SortDirOpt = "asc",
    fmt: FormatOpt = Format.table,
) -> int:
    """List the project's workflow executions."""
    workflows, project = service(ctx)
    items = page_rows(
        workflows.list_executions, project, filters=_filters(workflow_name=workflow, state=state),
        sort_keys=sort_keys, sort_dirs=sort_dirs, limit=limit, marker=marker,
    )  # fmt: skip
    emit(items, fmt, lambda: rows_table(EXECUTION_COLUMNS, items))
    return 0


@app.command("show")
def execution_show(
    ctx: typer.Context, execution: ExecutionArg, fmt: FormatOpt = Format.table
) -> int:
    """Show one workflow execution."""
    workflows, project = service(ctx)
    _show_execution(workflows.get_execution(project, execution), fmt)
    return 0


def _set_state(
    ctx: typer.Context, execution: str, state: str, fmt: Format, info: str | None
) -> int:
    workflows, project = service(ctx)
    body = workflows.update_execution(project, execution, state=state, state_info=info)
    _show_execution(body, fmt)
    return 0


@app.command("pause")
def execution_pause(
    ctx: typer.Context, execution: ExecutionArg, fmt: FormatOpt = Format.table
) -> int:
    """Pause a running execution (and its sub-workflows): running tasks finish,
    none starts until it is resumed."""
    return _set_state(ctx, execution, "PAUSED", fmt, None)


@app.command("resume")
def execution_resume(
    ctx: typer.Context, execution: ExecutionArg, fmt: FormatOpt = Format.table
) -> int:
    """Resume a paused execution; the next engine (`convection engine`) carries on."""
    return _set_state(ctx, execution, "RUNNING", fmt, None)


@app.command("cancel")
def execution_cancel(
    ctx: typer.Context,
    execution: ExecutionArg,
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="Why: the execution's state_info.")
    ] = None,
    fmt: FormatOpt = Format.table,
) -> int:
    """Cancel an execution (and its sub-workflows): it ends CANCELLED."""
    return _set_state(ctx, execution, "CANCELLED", fmt, message)


@app.command("delete")
def execution_delete(
    ctx: typer.Context,
    executions: Annotated[
        list[str], typer.Argument(metavar="ID...", help="Workflow execution IDs.")
    ],
    force: Annotated[
        bool,
        typer.Option("--force", help="Delete executions that have not ended too."),
    ] = False,
) -> int:
    """Delete executions that have ended, with their tasks and action executions."""
    workflows, project = service(ctx)
    return each_name(
        executions,
        lambda e: workflows.delete_execution(project, e, force=force),
        "execution",
    )


@app.command("input")
def execution_input(ctx: typer.Context, execution: ExecutionArg) -> int:
    """Print an execution's input as JSON."""
    workflows, project = service(ctx)
    _dumped(workflows.get_execution(project, execution)["input"])
    return 0


@app.command("output")
def execution_output(ctx: typer.Context, execution: ExecutionArg) -> int:
    """Print an execution's output as JSON (an error's is {"result": why})."""
    workflows, project = service(ctx)
    _dumped(workflows.get_execution(project, execution)["output"])
    return 0


# -- tasks -------------------------------------------------------------------------------------
@task_app.command("list")
def task_list(
    ctx: typer.Context,
    execution: Annotated[
        str | None,
        typer.Argument(metavar="[EXECUTION]", help="Only the tasks of this workflow execution."),
    ] = None,
    state: StateOpt = None,
    limit: LimitOpt = None,
    marker: MarkerOpt = None,
    sort_keys: SortKeysOpt = "created_at",
    sort_dirs: SortDirOpt = "asc",
    fmt: FormatOpt = Format.table,
) -> int:
    """List task executions: the project's, or one execution's."""
    workflows, project = service(ctx)
    items = page_rows(
        workflows.list_tasks, project, execution_id=execution, filters=_filters(state=state),
        sort_keys=sort_keys, sort_dirs=sort_dirs, limit=limit, marker=marker,
    )  # fmt: skip
    emit(items, fmt, lambda: rows_table(TASK_COLUMNS, items))
    return 0


def _show_task(body: dict[str, Any], fmt: Format) -> None:
    emit(body, fmt, lambda: fields_table(TASK_COLUMNS, body))


@task_app.command("show")
def task_show(ctx: typer.Context, task: TaskArg, fmt: FormatOpt = Format.table) -> int:
    """Show one task execution."""
    workflows, project = service(ctx)
    _show_task(workflows.get_task(project, task), fmt)
    return 0


@task_app.command("rerun")
def task_rerun(
    ctx: typer.Context,
    task: TaskArg,
    no_reset: Annotated[
        bool,
        typer.Option(
            "--no-reset", help="With-items: run only the items that failed, keep the others."
        ),
    ] = False,
    env: Annotated[
        str | None,
        typer.Option(
            "--env", "-e", metavar="JSON|@FILE", help="Merge into the execution's env first."
        ),
    ] = None,
    fmt: FormatOpt = Format.table,
) -> int:
    """Run a failed task again; its execution is RUNNING again and the next
    engine (`convection engine`) carries on."""
    workflows, project = service(ctx)
    try:
        extra = json_mapping(env, "--env")
    except InvalidInput as exc:
        print_diagnostics(exc.diagnostics, fmt)
        return 1
    _show_task(workflows.rerun_task(project, task, reset=not no_reset, env=extra), fmt)
    return 0


@task_app.command("skip")
def task_skip(ctx: typer.Context, task: TaskArg, fmt: FormatOpt = Format.table) -> int:
    """Skip a failed task: it ends SKIPPED and the workflow goes on by
    on-skip (or on-success); the next engine carries on."""
    workflows, project = service(ctx)
    _show_task(workflows.skip_task(project, task), fmt)
    return 0


def _task_field(ctx: typer.Context, task: str, key: str) -> int:
    workflows, project = service(ctx)
    _dumped(workflows.get_task(project, task)[key])
    return 0


@task_app.command("result")
def task_result(ctx: typer.Context, task: TaskArg) -> int:
    """Print a task's result as JSON (a with-items task's: a list)."""
    return _task_field(ctx, task, "result")


@task_app.command("published")
def task_published(ctx: typer.Context, task: TaskArg) -> int:
    """Print the variables a task published, as JSON."""
    return _task_field(ctx, task, "published")


# -- action executions --------------------------------------------------------------------------
@action_execution_app.command("list")
def action_execution_list(
    ctx: typer.Context,
    task: Annotated[
        str | None,
        typer.Argument(metavar="[TASK]", help="Only the action executions of this task."),
    ] = None,
    limit: LimitOpt = None,
    marker: MarkerOpt = None,
    sort_keys: SortKeysOpt = "created_at",
    sort_dirs: SortDirOpt = "asc",
    fmt: FormatOpt = Format.table,
) -> int:
    """List action executions: the project's, or one task's."""
    workflows, project = service(ctx)
    items = page_rows(
        workflows.list_action_executions, project, task_execution_id=task,
        sort_keys=sort_keys, sort_dirs=sort_dirs, limit=limit, marker=marker,
    )  # fmt: skip
    emit(items, fmt, lambda: rows_table(ACTION_LIST_COLUMNS, items))
    return 0


def _action_execution(ctx: typer.Context, action: str) -> dict[str, Any]:
    workflows, project = service(ctx)
    return workflows.get_action_execution(project, action)


@action_execution_app.command("show")
def action_execution_show(
    ctx: typer.Context, action: ActionArg, fmt: FormatOpt = Format.table
) -> int:
    """Show one action execution."""
    body = _action_execution(ctx, action)
    emit(body, fmt, lambda: fields_table(ACTION_COLUMNS, body))
    return 0


@action_execution_app.command("output")
def action_execution_output(ctx: typer.Context, action: ActionArg) -> int:
    """Print an action execution's output as JSON ({"result": ...})."""
    _dumped(_action_execution(ctx, action)["output"])
    return 0
