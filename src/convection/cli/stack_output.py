"""``convection stack output ...``: a stack's outputs, as Heat computed them."""

from __future__ import annotations

from typing import Annotated

import typer

from convection.cli.context import invocation
from convection.cli.output import Format, emit
from convection.cli.stack_common import FormatOpt, StackArg, cell, print_table, show_fields
from convection.common import ConvectionError, InvalidInput

app = typer.Typer(help="A stack's outputs.", no_args_is_help=True)


@app.command("list")
def list_outputs(ctx: typer.Context, stack: StackArg, fmt: FormatOpt = Format.table) -> int:
    """List the outputs (key and description; values with -f json/yaml)."""
    inv = invocation(ctx)
    outputs = inv.reads.outputs(inv.project, stack)
    columns = ("output_key", "description")
    emit(
        outputs,
        fmt,
        lambda: print_table(columns, [[o.get(c) for c in columns] for o in outputs]),
    )
    return 0


@app.command("show")
def show_output(
    ctx: typer.Context,
    stack: StackArg,
    output: Annotated[
        str | None, typer.Argument(metavar="[OUTPUT]", help="Name of the output.")
    ] = None,
    all_outputs: Annotated[bool, typer.Option("--all", help="Show every output.")] = False,
    fmt: FormatOpt = Format.table,
) -> int:
    """Show one output's value, or every output with --all. An output whose
    value could not be computed is an error (exit 1), as in heatclient."""
    if all_outputs == (output is not None):
        raise InvalidInput.single("Give either OUTPUT or --all, not both or neither.")
    inv = invocation(ctx)
    if output is None:
        outputs = inv.reads.outputs(inv.project, stack)
        emit(
            outputs,
            fmt,
            lambda: show_fields({o["output_key"]: cell(o) for o in outputs}),
        )
        return 0
    body = inv.reads.output(inv.project, stack, output)
    if body.get("output_error"):
        raise ConvectionError(f"Output error: {body['output_error']}")
    emit(body, fmt, lambda: show_fields(body))
    return 0
