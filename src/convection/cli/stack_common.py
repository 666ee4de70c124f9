"""What the ``stack`` commands share: options, reading inputs, rendering.

Options are spelled as python-openstackclient spells them (``-t``, ``-e``,
``--parameter``, ``--wait``...), so a Heat user's muscle memory works.
Tables mirror the openstack client's columns; JSON and YAML are the dicts
:class:`~convection.stacks.Stacks` returns, with Heat's API field names.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console
from rich.table import Table

from convection.cli.context import Invocation
from convection.cli.output import Format, emit, stdout
from convection.compiler import StackInputs
from convection.errors import InvalidInput
from convection.hot.loader import Document, SourceMap, load
from convection.limits import Limits
from convection.sources import parse_parameter_args, read_inputs

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
    return read_inputs(
        template,
        environments or [],
        parameters or [],
        parameter_files or [],
        limits=inv.settings.limits(),
    )


def existing_inputs(
    inv: Invocation,
    stack: str,
    environments: Sequence[Path] | None,
    parameters: Sequence[str] | None,
    parameter_files: Sequence[str] | None,
) -> StackInputs | None:
    """``update --existing`` without ``-t``: the stored template, with the
    given environments and parameters patched over the stored ones.

    ``Stacks.update(existing=True)`` reuses the stored template only when no
    inputs are given at all, so new parameters need a StackInputs whose
    template is the stored one. Files named by the new environments are not
    collected (only those already stored are available)."""
    if not (environments or parameters or parameter_files):
        return None
    limits = inv.settings.limits()
    data = stored_template(inv, stack)
    template = Document("<existing template>", data, SourceMap("<existing template>"))
    envs = tuple(_load_file(p, limits) for p in environments or ())
    params = parse_parameter_args(parameters or [])
    params.update(_parameter_files(parameter_files or ()))
    return StackInputs(template, envs, {}, params)


def _load_file(path: Path, limits: Limits) -> Document:
    try:
        return load(path.read_bytes(), str(path), limits=limits)
    except OSError as exc:
        raise InvalidInput.single(f"cannot read environment file {path}: {exc.strerror}") from None


def _parameter_files(args: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in args:
        key, sep, name = item.partition("=")
        if not sep:
            raise InvalidInput.single(f"Malformed parameter-file({item}). Use the key=path format.")
        try:
            out[key] = Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput.single(f"cannot read parameter file {name}: {exc}") from None
    return out


def stored_template(inv: Invocation, stack: str) -> dict[str, Any]:
    """The template a stack converges to (Heat's ``GET .../template``).

    ``Stacks`` has no read for it yet, so this asks its store, after
    ``Stacks.show`` has checked the stack exists in this project."""
    stacks = inv.stacks
    stack_id = stacks.show(inv.project, stack)["id"]
    record = stacks.store.get_stack_by_id(stack_id)
    if record is None or record.template_id is None:
        raise InvalidInput.single(f"The stack {stack} has no stored template")
    return dict(stacks.store.get_template(record.template_id).template)


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
