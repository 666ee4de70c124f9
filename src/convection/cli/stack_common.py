"""What the ``stack`` commands share: options, reading inputs, rendering.

Options are spelled as python-openstackclient spells them (``-t``, ``-e``,
``--parameter``, ``--wait``...), so a Heat user's muscle memory works.
Tables mirror the openstack client's columns; JSON and YAML are the dicts
:class:`~convection.service.stacks.Stacks` returns, with Heat's API field names.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from convection.cli.output import Format, emit, stdout

if TYPE_CHECKING:
    from convection.cli.context import Invocation
    from convection.model import StackInputs
    from convection.service import StackPatch

TemplateOpt = Annotated[
    Path | None, typer.Option("-t", "--template", help="Template file.", show_default=False)
]
EnvOpt = Annotated[
    list[Path] | None,
    typer.Option("-e", "--environment", help="Environment file; repeat to merge in order."),
]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option("--parameter", help="KEY=VALUE; repeat, or separate pairs with ';'."),
]
ParamFileOpt = Annotated[
    list[str] | None,
    typer.Option("--parameter-file", help="KEY=FILE: the file's content is the value."),
]
FormatOpt = Annotated[Format, typer.Option("-f", "--format", help="Output format.")]
StackArg = Annotated[str, typer.Argument(metavar="STACK", help="Name or ID of the stack.")]
StacksArg = Annotated[
    list[str], typer.Argument(metavar="STACK...", help="Names or IDs of the stacks.")
]
TimeoutOpt = Annotated[
    int | None, typer.Option("--timeout", min=1, help="Operation timeout in minutes.")
]
TagsOpt = Annotated[
    str | None, typer.Option("--tags", metavar="TAG1,TAG2", help="Tags for the stack.")
]

#: `openstack stack list` columns, and the API fields they show.
LIST_COLUMNS = (
    ("ID", "id"),
    ("Stack Name", "stack_name"),
    ("Stack Status", "stack_status"),
    ("Creation Time", "creation_time"),
    ("Updated Time", "updated_time"),
)

#: Width of tables written to a pipe or a file: wide enough never to cut.
UNCUT_WIDTH = 10_000

#: What `openstack stack create/update` print (``_show_stack(short=True)``).
SHORT_FIELDS = (
    "id",
    "stack_name",
    "description",
    "creation_time",
    "updated_time",
    "stack_status",
    "stack_status_reason",
)


def load_inputs(
    inv: Invocation,
    template: Path,
    environments: Sequence[Path] | None,
    parameters: Sequence[str] | None,
    parameter_files: Sequence[str] | None,
) -> StackInputs:
    """Read a template, its environments and files as heatclient does."""
    from convection.service import read_inputs

    return read_inputs(
        template,
        environments or [],
        parameters or [],
        parameter_files or [],
        limits=inv.settings.limits(),
    )


def existing_patch(
    inv: Invocation,
    environments: Sequence[Path] | None,
    parameters: Sequence[str] | None,
    parameter_files: Sequence[str] | None,
) -> StackPatch:
    """``update --existing`` without ``-t``: the new environment files (with
    every file they name) and parameters; the service reuses the stored
    template and files and merges these over the stored environment."""
    from convection.service import read_patch

    return read_patch(
        environments or [],
        parameters or [],
        parameter_files or [],
        limits=inv.settings.limits(),
    )


Given = TypeVar("Given", bound="StackInputs | StackPatch")


def with_hooks(given: Given, paths: Sequence[str] | None, hook: str) -> Given:
    """heatclient's ``--pre-create``/``--pre-update``: ``hook`` set on each
    resource path, in one more environment file after the given ones."""
    if not paths:
        return given
    from convection.service import hooks_environment

    extra = hooks_environment(given.environments, paths, hook)
    return dataclasses.replace(given, environments=(*given.environments, extra))


def split_tags(tags: str | None) -> list[str] | None:
    if tags is None:
        return None
    return [t.strip() for t in tags.split(",") if t.strip()]


def cell(value: Any) -> str:
    """A table cell: text as is, structures as YAML (the openstack client's
    ``yaml_formatter`` for tables)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    import yaml  # only a structured cell pays for PyYAML

    return yaml.safe_dump(value, sort_keys=False, default_flow_style=False).rstrip("\n")


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A table that is never cut: on a terminal it fits the screen (long
    cells wrap); into a pipe or a file it takes the width it needs, so
    ``stack list | grep`` sees whole IDs."""
    table = Table()
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(cell(v) for v in row))
    if stdout.is_terminal:
        stdout.print(table)
    else:
        Console(file=sys.stdout, width=UNCUT_WIDTH, soft_wrap=True).print(table)


def show_fields(body: dict[str, Any], fields: Sequence[str] | None = None) -> None:
    """A Field/Value table of ``body`` (``fields`` in that order)."""
    keys = list(fields) if fields is not None else list(body)
    print_table(("Field", "Value"), [(k, body.get(k)) for k in keys])


def emit_stack(body: dict[str, Any], fmt: Format, *, short: bool) -> None:
    """One stack: JSON/YAML carry all of ``Stacks.show``; the table shows what
    ``openstack stack show`` does, or (``short``) what create and update
    print, plus the outputs once there are some."""
    if short:
        fields = [*SHORT_FIELDS, *(["outputs"] if body.get("outputs") else [])]
    else:
        first = [*SHORT_FIELDS, "parameters", "outputs"]
        fields = first + [k for k in body if k not in first and k != "template_description"]
    emit(body, fmt, lambda: show_fields(body, fields))


def emit_stack_rows(bodies: Sequence[dict[str, Any]], fmt: Format) -> None:
    """Stacks as rows of ``openstack stack list`` (also what actions print)."""
    emit(
        list(bodies),
        fmt,
        lambda: print_table(
            [c for c, _ in LIST_COLUMNS], [[b.get(k) for _, k in LIST_COLUMNS] for b in bodies]
        ),
    )
