"""``convection deploy``: make a stack match a template, whatever its state.

Terraform's ``apply`` in Heat's words: create the stack if it does not
exist, update it otherwise, run the engine here with progress until the
operation ends, then print the outputs. Exit 1 if it failed (a rollback
counts as a failure: the template was not reached).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from convection.cli.context import Invocation, invocation
from convection.cli.output import Format, emit, print_diagnostics, stderr, stdout
from convection.cli.progress import EventFeed, Target, wait_for
from convection.cli.stack import RequiredTemplateOpt, emit_preview, report
from convection.cli.stack_common import (
    EnvOpt,
    ParamFileOpt,
    ParamOpt,
    TagsOpt,
    TimeoutOpt,
    cell,
    load_inputs,
    print_table,
    split_tags,
)
from convection.common import InvalidInput, NotFound

if TYPE_CHECKING:
    from convection.model import StackInputs


def _live_id(inv: Invocation, name: str) -> str | None:
    try:
        return str(inv.stacks.show(inv.project, name)["id"])
    except NotFound:
        return None


def _start(
    inv: Invocation,
    name: str,
    inputs: StackInputs,
    *,
    rollback: bool | None,
    timeout: int | None,
    tags: list[str] | None,
) -> tuple[Target, dict[str, EventFeed]]:
    """Create or update; what to wait for, and where its events start."""
    stacks = inv.stacks
    stack_id = _live_id(inv, name)
    if stack_id is None:
        created = stacks.create(
            inv.project,
            name,
            inputs,
            timeout_mins=timeout,
            enable_rollback=bool(rollback),
            tags=tags or (),
        )
        return Target(created["id"], name, "CREATE_COMPLETE"), {}
    feeds = {stack_id: EventFeed(stacks, inv.project, stack_id).skip_existing()}
    stacks.update(inv.project, name, inputs, rollback=rollback, timeout_mins=timeout, tags=tags)
    return Target(stack_id, name, "UPDATE_COMPLETE"), feeds


def emit_outputs(outputs: list[dict[str, Any]], fmt: Format) -> None:
    """The outputs' values: a table for people, Heat's output dicts as data."""

    def table() -> None:
        rows = []
        for o in outputs:
            value = o.get("output_value")
            if o.get("output_error"):
                value = f"error: {o['output_error']}"
            rows.append((o["output_key"], cell(value)))
        print_table(("Output", "Value"), rows)

    emit(outputs, fmt, table)


def deploy(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the stack.")],
    template: RequiredTemplateOpt,
    environment: EnvOpt = None,
    parameter: ParamOpt = None,
    parameter_file: ParamFileOpt = None,
    timeout: TimeoutOpt = None,
    rollback: Annotated[
        bool | None,
        typer.Option(
            "--enable-rollback/--disable-rollback",
            help="Roll back on failure (default: off for a new stack, as before for an update).",
            show_default=False,
        ),
    ] = None,
    tags: TagsOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change; change nothing.")
    ] = False,
    fmt: Annotated[Format, typer.Option("-f", "--format", help="Format of the outputs.")] = (
        Format.table
    ),
) -> int:
    """Create the stack if absent, update it otherwise, wait with progress,
    then print its outputs. Exit 1 if the operation failed."""
    inv = invocation(ctx)
    console = stdout if fmt is Format.table else stderr
    try:
        inputs = load_inputs(inv, template, environment, parameter, parameter_file)
        if dry_run:
            return _dry_run(inv, name, inputs, fmt)
        target, feeds = _start(
            inv, name, inputs, rollback=rollback, timeout=timeout, tags=split_tags(tags)
        )
    except InvalidInput as exc:
        print_diagnostics(exc.diagnostics, fmt)
        return 1
    result = wait_for(inv.stacks, inv.project, [target], console, feeds=feeds)
    report(inv, result)
    if result.exit_code():
        return result.exit_code()
    emit_outputs(result.stacks[0].get("outputs") or [], fmt)
    return 0


def _dry_run(inv: Invocation, name: str, inputs: StackInputs, fmt: Format) -> int:
    if _live_id(inv, name) is None:
        emit_preview(inv.stacks.preview_create(inv.project, name, inputs), fmt)
    else:
        emit_preview(inv.stacks.preview_update(inv.project, name, inputs), fmt)
    return 0
