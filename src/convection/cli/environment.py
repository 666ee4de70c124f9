"""``convection environment ...``: Mistral's stored environments, as
python-mistralclient's ``openstack workflow env create|list|show|update|delete``
handles them (not Heat's environment files, which ``stack`` takes with
``-e``).

An environment is a named set of variables that an execution uses as its
``env()`` when its ``env`` param names it (``execution create --param
env=NAME``). ``create`` and ``update`` read a JSON or YAML file of
``name, description, variables, scope``, as python-mistralclient does. The
commands call the invocation's
:class:`~convection.cli.workflow_service.WorkflowService` (the store's
operations, or a server's ``/v2/environments`` with ``--url``), so output
and exit codes are the same in both modes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Final

import typer

from convection.cli.execution import fields_table, mapping_file, rows_table
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
    help="Mistral environments: named variables for executions' env(); create, list, show, "
    "update and delete them.",
    no_args_is_help=True,
)

FileArg = Annotated[
    Path, typer.Argument(metavar="FILE", help="JSON or YAML: name, description, variables, scope.")
]
NameArg = Annotated[str, typer.Argument(metavar="ENVIRONMENT", help="Environment name.")]
FilterOpt = Annotated[
    list[str] | None,
    typer.Option("--filter", help="KEY=VALUE (id, name, description); may repeat."),
]

#: python-mistralclient's ``EnvironmentFormatter``: show's columns, and the
#: list's (without Variables).
COLUMNS: Final = (
    ("name", "Name"),
    ("description", "Description"),
    ("variables", "Variables"),
    ("scope", "Scope"),
    ("created_at", "Created at"),
    ("updated_at", "Updated at"),
)
LIST_COLUMNS: Final = tuple(c for c in COLUMNS if c[0] != "variables")


def _show(body: dict[str, Any], fmt: Format) -> None:
    """Variables as python-mistralclient shows them: JSON indented by 4."""
    shown = {**body, "variables": json.dumps(body["variables"], indent=4)}
    emit(body, fmt, lambda: fields_table(COLUMNS, shown))


def _from_file(path: Path, fmt: Format, send: Callable[[Mapping[str, Any]], dict[str, Any]]) -> int:
    """Read the file, send what it holds, print the environment; a refused
    file or body prints its errors (in ``fmt``, as the other uploads do)."""
    try:
        body = send(mapping_file(path, "FILE"))
    except InvalidInput as exc:
        print_diagnostics(exc.diagnostics, fmt)
        return 1
    _show(body, fmt)
    return 0


@app.command("create")
def environment_create(ctx: typer.Context, file: FileArg, fmt: FormatOpt = Format.table) -> int:
    """Create an environment from a file; its name must be new in the project."""
    workflows, project = service(ctx)
    return _from_file(file, fmt, lambda values: workflows.create_environment(project, values))


@app.command("update")
def environment_update(ctx: typer.Context, file: FileArg, fmt: FormatOpt = Format.table) -> int:
    """Update the environment the file's name says: its description,
    variables or scope (running executions keep the variables they started with)."""
    workflows, project = service(ctx)
    return _from_file(file, fmt, lambda values: workflows.update_environment(project, values))


@app.command("list")
def environment_list(
    ctx: typer.Context,
    filters: FilterOpt = None,
    limit: LimitOpt = None,
    marker: MarkerOpt = None,
    sort_keys: SortKeysOpt = "created_at",
    sort_dirs: SortDirOpt = "asc",
    fmt: FormatOpt = Format.table,
) -> int:
    """List the project's environments and the public ones."""
    workflows, project = service(ctx)
    chosen = filter_options(filters)
    items = page_rows(
        workflows.list_environments, project, filters=chosen,
        sort_keys=sort_keys, sort_dirs=sort_dirs, limit=limit, marker=marker,
    )  # fmt: skip
    emit(items, fmt, lambda: rows_table(LIST_COLUMNS, items))
    return 0


@app.command("show")
def environment_show(ctx: typer.Context, name: NameArg, fmt: FormatOpt = Format.table) -> int:
    """Show one environment with its variables."""
    workflows, project = service(ctx)
    _show(workflows.get_environment(project, name), fmt)
    return 0


@app.command("delete")
def environment_delete(
    ctx: typer.Context,
    names: Annotated[
        list[str], typer.Argument(metavar="ENVIRONMENT...", help="Environment names.")
    ],
) -> int:
    """Delete environments (executions that used one keep its variables)."""
    workflows, project = service(ctx)
    remove = workflows.delete_environment
    return each_name(names, lambda n: remove(project, n), "environment")
