"""What a stack was given, as stored: ``stack template show``, ``stack
environment show`` and ``stack file list`` (the openstack client's commands
for Heat's ``GET .../template``, ``.../environment`` and ``.../files``)."""

from __future__ import annotations

import typer

from convection.cli.context import invocation
from convection.cli.output import Format, emit
from convection.cli.stack_common import FormatOpt, StackArg, print_table

template_app = typer.Typer(help="A stack's stored template.", no_args_is_help=True)
environment_app = typer.Typer(help="A stack's stored environment.", no_args_is_help=True)
file_app = typer.Typer(help="A stack's stored files.", no_args_is_help=True)


def _structured(fmt: Format) -> Format:
    """Documents print as YAML unless JSON is asked for."""
    return Format.json if fmt is Format.json else Format.yaml


@template_app.command("show")
def template_show(ctx: typer.Context, stack: StackArg, fmt: FormatOpt = Format.yaml) -> int:
    """Print the template the stack converges to (YAML unless -f json)."""
    inv = invocation(ctx)
    emit(inv.stacks.template(inv.project, stack), _structured(fmt))
    return 0


@environment_app.command("show")
def environment_show(ctx: typer.Context, stack: StackArg, fmt: FormatOpt = Format.yaml) -> int:
    """Print the stack's merged environment, hidden values masked."""
    inv = invocation(ctx)
    emit(inv.stacks.environment(inv.project, stack), _structured(fmt))
    return 0


@file_app.command("list")
def file_list(ctx: typer.Context, stack: StackArg, fmt: FormatOpt = Format.table) -> int:
    """List the files stored with the stack (contents with -f json/yaml)."""
    inv = invocation(ctx)
    files = inv.stacks.files(inv.project, stack)
    emit(files, fmt, lambda: print_table(("File",), [(name,) for name in sorted(files)]))
    return 0
