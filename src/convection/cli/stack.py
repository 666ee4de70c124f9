"""``convection stack ...``: ``openstack stack ...`` on the embedded engine.

Create, update and delete record the operation and return at once, as
Heat's API does; the work happens when an engine runs: ``convection
engine``, or any command given ``--wait``, which runs the engine in its own
process and shows progress until the operation (and any rollback) ends.
With ``--url`` a server runs the engine and ``--wait`` only watches.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convection.cli import (
    stack_event,
    stack_hook,
    stack_list,
    stack_output,
    stack_resource,
    stack_stored,
)
from convection.cli.context import Invocation, StackService, invocation
from convection.cli.output import Format, emit, print_diagnostics, stderr, stdout
from convection.cli.progress import (
    EventFeed,
    Target,
    WaitResult,
    in_progress,
    resume_hint,
    rewatch_hint,
    wait_for,
)
from convection.cli.stack_common import (
    EnvOpt,
    FormatOpt,
    ParamFileOpt,
    ParamOpt,
    StackArg,
    StacksArg,
    TagsOpt,
    TemplateOpt,
    TimeoutOpt,
    emit_stack,
    emit_stack_rows,
    existing_patch,
    load_inputs,
    print_table,
    split_tags,
    with_hooks,
)
from convection.common import InvalidInput, NotFound

if TYPE_CHECKING:
    from convection.model import StackInputs
    from convection.service import StackPatch

_LATER = (
    " Without --wait the operation is recorded and this returns at once; the work is done"
    " by `convection engine` or by any command run with --wait (with --url, by the server)."
)

app = typer.Typer(help="Stacks: create, update, delete, inspect.", no_args_is_help=True)
app.add_typer(stack_resource.app, name="resource")
app.add_typer(stack_event.app, name="event")
app.add_typer(stack_output.app, name="output")
app.add_typer(stack_hook.app, name="hook")
app.add_typer(stack_stored.template_app, name="template")
app.add_typer(stack_stored.environment_app, name="environment")
app.add_typer(stack_stored.file_app, name="file")
app.command("list")(stack_list.list_stacks)

RequiredTemplateOpt = Annotated[Path, typer.Option("-t", "--template", help="Template file.")]
WaitOpt = Annotated[
    bool,
    typer.Option(
        "--wait",
        help="Show progress until the operation ends (running the engine here; "
        "with --url the server runs it).",
    ),
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Show what would change; change nothing.")
]
ExistingOpt = Annotated[
    bool,
    typer.Option(
        "--existing",
        help="Reuse the stack's template, environment and parameters; what is given "
        "patches over them (Heat's PATCH update).",
    ),
]
PreCreateOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--pre-create",
        metavar="RESOURCE",
        help="Set a pre-create hook on a resource (nested/path and wildcards allowed); "
        "repeat for more.",
    ),
]
PreUpdateOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--pre-update",
        metavar="RESOURCE",
        help="Set a pre-update hook on a resource (nested/path and wildcards allowed); "
        "repeat for more.",
    ),
]
ClearOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--clear-parameter", metavar="PARAMETER", help="With --existing: drop a stored value."
    ),
]


class Rollback(enum.StrEnum):
    enabled = "enabled"
    disabled = "disabled"
    keep = "keep"


def _console(fmt: Format) -> Any:
    """Progress goes where it does not corrupt JSON/YAML on stdout."""
    return stdout if fmt is Format.table else stderr


def settle(
    inv: Invocation,
    fmt: Format,
    targets: Sequence[Target],
    *,
    wait: bool,
    feeds: dict[str, EventFeed] | None = None,
    rows: bool = False,
) -> int:
    """After an operation started: print the stacks, waiting first if asked.

    ``rows`` prints them as ``stack list`` rows (what the openstack client's
    cancel, check, suspend and resume print) instead of one stack's fields."""
    if not wait:
        bodies = [inv.stacks.show(inv.project, t.stack_id) for t in targets]
        _emit_settled(bodies, fmt, rows)
        return 0
    result = wait_for(inv.stacks, inv.project, targets, _console(fmt), feeds=feeds)
    _emit_settled(result.stacks, fmt, rows)
    report(inv, result)
    return result.exit_code()


def _emit_settled(bodies: list[dict[str, Any]], fmt: Format, rows: bool) -> None:
    if rows:
        emit_stack_rows(bodies, fmt)
    elif bodies:
        emit_stack(bodies[0], fmt, short=True)


def report(inv: Invocation, result: WaitResult) -> None:
    """After a wait, on stderr: how to resume, or why each failure failed."""
    if result.interrupted:
        hint = rewatch_hint if inv.remote else resume_hint
        stderr.print(hint(result, inv.command()), markup=False, highlight=False)
        return
    expected = {t.stack_id: t.expect for t in result.targets}
    for s in result.failed():
        line = failure_line(inv, s, expected[s["id"]])
        stderr.print(f"error: {line}", markup=False, highlight=False)


def failure_line(inv: Invocation, stack: dict[str, Any], expect: str) -> str:
    """Why a stack did not end ``expect``; after a rollback, the cause is the
    reason of the stack's last ``<ACTION>_FAILED`` event."""
    name, status = stack["stack_name"], str(stack["stack_status"])
    if in_progress(stack):
        return f"Stack {name} is still {status}: no engine could make progress."
    if not status.startswith("ROLLBACK") or expect.startswith("ROLLBACK"):
        return f"Stack {name} {status}: {stack.get('stack_status_reason') or ''}"
    action = expect.split("_", 1)[0]
    events = inv.stacks.events(inv.project, stack["id"], resource_name=name)
    causes = [e for e in events if e["resource_status"] == f"{action}_FAILED"]
    cause = causes[-1]["resource_status_reason"] if causes else "see stack event list"
    return f"Stack {name} {action} failed and was rolled back ({status}): {cause}"


def _marked_feed(inv: Invocation, stack_id: str, wait: bool) -> dict[str, EventFeed]:
    """Before an operation: remember where its events will start."""
    if not wait:
        return {}
    return {stack_id: EventFeed(inv.stacks, inv.project, stack_id).skip_existing()}


def _invalid(exc: InvalidInput, fmt: Format) -> int:
    print_diagnostics(exc.diagnostics, fmt)
    return 1


@app.command("create", help="Create a stack." + _LATER)
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the new stack.")],
    template: RequiredTemplateOpt,
    environment: EnvOpt = None,
    parameter: ParamOpt = None,
    parameter_file: ParamFileOpt = None,
    timeout: TimeoutOpt = None,
    enable_rollback: Annotated[
        bool, typer.Option("--enable-rollback", help="Roll back if the create fails.")
    ] = False,
    wait: WaitOpt = False,
    tags: TagsOpt = None,
    pre_create: PreCreateOpt = None,
    dry_run: DryRunOpt = False,
    fmt: FormatOpt = Format.table,
) -> int:
    inv = invocation(ctx)
    try:
        inputs = load_inputs(inv, template, environment, parameter, parameter_file)
        inputs = with_hooks(inputs, pre_create, "pre-create")
        if dry_run:
            emit_preview(inv.stacks.preview_create(inv.project, name, inputs), fmt)
            return 0
        created = inv.stacks.create(
            inv.project,
            name,
            inputs,
            timeout_mins=timeout,
            enable_rollback=enable_rollback,
            tags=split_tags(tags) or (),
        )
    except InvalidInput as exc:
        return _invalid(exc, fmt)
    return settle(inv, fmt, [Target(created["id"], name, "CREATE_COMPLETE")], wait=wait)


def update_inputs(
    inv: Invocation,
    template: Path | None,
    environment: list[Path] | None,
    parameter: list[str] | None,
    parameter_file: list[str] | None,
    existing: bool,
) -> StackInputs | StackPatch:
    """What an update is given: files read from disk, or (``--existing``
    without ``-t``) new environments and parameters for the service to
    merge over the stored ones."""
    if template is not None:
        return load_inputs(inv, template, environment, parameter, parameter_file)
    if existing:
        return existing_patch(inv, environment, parameter, parameter_file)
    raise InvalidInput.single("Need a template (-t) unless the update is --existing.")


@app.command("update", help="Update a stack." + _LATER)
def update(
    ctx: typer.Context,
    stack: StackArg,
    template: TemplateOpt = None,
    environment: EnvOpt = None,
    parameter: ParamOpt = None,
    parameter_file: ParamFileOpt = None,
    existing: ExistingOpt = False,
    clear_parameter: ClearOpt = None,
    rollback: Annotated[
        Rollback, typer.Option("--rollback", help="Rollback on failure: enabled, disabled, keep.")
    ] = Rollback.keep,
    timeout: TimeoutOpt = None,
    tags: TagsOpt = None,
    pre_update: PreUpdateOpt = None,
    dry_run: DryRunOpt = False,
    wait: WaitOpt = False,
    fmt: FormatOpt = Format.table,
) -> int:
    inv = invocation(ctx)
    stacks = inv.stacks
    try:
        inputs = update_inputs(inv, template, environment, parameter, parameter_file, existing)
        inputs = with_hooks(inputs, pre_update, "pre-update")
        clear = tuple(clear_parameter or ())
        if dry_run:
            body = stacks.preview_update(
                inv.project, stack, inputs, existing=existing, clear_parameters=clear
            )
            emit_preview(body, fmt)
            return 0
        stack_id = stacks.show(inv.project, stack)["id"]
        feeds = _marked_feed(inv, stack_id, wait)
        done = stacks.update(
            inv.project,
            stack,
            inputs,
            existing=existing,
            clear_parameters=clear,
            rollback=None if rollback is Rollback.keep else rollback is Rollback.enabled,
            timeout_mins=timeout,
            tags=split_tags(tags),
        )
    except InvalidInput as exc:
        return _invalid(exc, fmt)
    target = Target(stack_id, done["stack_name"], "UPDATE_COMPLETE")
    return settle(inv, fmt, [target], wait=wait, feeds=feeds)


@app.command("preview")
def preview(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the stack.")],
    template: RequiredTemplateOpt,
    environment: EnvOpt = None,
    parameter: ParamOpt = None,
    parameter_file: ParamFileOpt = None,
    existing: ExistingOpt = False,
    clear_parameter: ClearOpt = None,
    fmt: FormatOpt = Format.table,
) -> int:
    """Show what a create would do, or, when the stack exists, what an update
    would change (the same as create/update --dry-run)."""
    inv = invocation(ctx)
    stacks = inv.stacks
    try:
        inputs = load_inputs(inv, template, environment, parameter, parameter_file)
        try:
            stacks.show(inv.project, name)
        except NotFound:
            body = stacks.preview_create(inv.project, name, inputs)
        else:
            clear = tuple(clear_parameter or ())
            body = stacks.preview_update(
                inv.project, name, inputs, existing=existing, clear_parameters=clear
            )
    except InvalidInput as exc:
        return _invalid(exc, fmt)
    emit_preview(body, fmt)
    return 0


#: Preview buckets in the order a reader wants them, and their plan verbs.
_BUCKETS = (
    ("added", "to add"),
    ("updated", "to update"),
    ("replaced", "to replace"),
    ("deleted", "to delete"),
    ("unchanged", "unchanged"),
)


def emit_preview(body: dict[str, list[dict[str, Any]]], fmt: Format) -> None:
    """Heat's ``preview_update`` body as ``{"resource_changes": ...}``; as a
    table, one row per resource and a Terraform-style count."""

    def table() -> None:
        rows = [
            (bucket, r["resource_name"], r["resource_type"], r.get("reason", ""))
            for bucket, _ in _BUCKETS
            for r in body.get(bucket, [])
        ]
        print_table(("State", "Resource Name", "Resource Type", "Reason"), rows)
        counts = ", ".join(f"{len(body.get(b, []))} {verb}" for b, verb in _BUCKETS)
        stdout.print(f"Plan: {counts}.", highlight=False)

    emit({"resource_changes": body}, fmt, table)


@app.command(
    "delete",
    help="Delete stacks. Asks for confirmation when stdin is a terminal (-y skips it);"
    " in a script it does not ask, as the openstack client." + _LATER,
)
def delete(
    ctx: typer.Context,
    names: StacksArg,
    yes: Annotated[bool, typer.Option("-y", "--yes", help="Do not ask for confirmation.")] = False,
    wait: WaitOpt = False,
    fmt: FormatOpt = Format.table,
) -> int:
    inv = invocation(ctx)
    if not yes and sys.stdin.isatty() and not _confirm():
        stderr.print("User did not confirm stack delete so taking no action.")
        return 1
    targets, feeds, missing = [], {}, 0
    for name in names:
        try:
            body = inv.stacks.show(inv.project, name)
            feeds.update(_marked_feed(inv, body["id"], wait))
            inv.stacks.delete(inv.project, name)
        except NotFound:
            stderr.print(f"Stack not found: {name}", markup=False, highlight=False)
            missing += 1
            continue
        targets.append(Target(body["id"], body["stack_name"], "DELETE_COMPLETE"))
    code = 0
    if wait and targets:
        result = wait_for(inv.stacks, inv.project, targets, _console(fmt), feeds=feeds)
        code = result.exit_code()
        report(inv, result)
        missing += 0 if result.interrupted else len(result.failed())
    if missing:
        stderr.print(f"Unable to delete {missing} of the {len(names)} stacks.")
        return code or 1
    return code


def _confirm() -> bool:
    sys.stdout.write("Are you sure you want to delete this stack(s) [y/N]? ")
    sys.stdout.flush()
    try:
        return sys.stdin.readline().strip().lower().startswith("y")
    except (KeyboardInterrupt, EOFError):
        return False


@app.command("show")
def show(ctx: typer.Context, stack: StackArg, fmt: FormatOpt = Format.table) -> int:
    """Show a stack's details (a deleted one too, by ID)."""
    inv = invocation(ctx)
    emit_stack(inv.reads.show(inv.project, stack), fmt, short=False)
    return 0


def _act(
    ctx: typer.Context,
    names: Sequence[str],
    start: Callable[[Invocation, str], str],
    *,
    wait: bool,
    fmt: Format,
) -> int:
    """Start an action on each stack (``start`` returns the status that
    counts as success), then print them as rows, waiting if asked."""
    inv = invocation(ctx)
    targets, feeds = [], {}
    for name in names:
        body = inv.stacks.show(inv.project, name)
        feeds.update(_marked_feed(inv, body["id"], wait))
        expect = start(inv, name)
        targets.append(Target(body["id"], body["stack_name"], expect))
    return settle(inv, fmt, targets, wait=wait, feeds=feeds, rows=True)


@app.command("cancel")
def cancel(
    ctx: typer.Context,
    names: StacksArg,
    no_rollback: Annotated[
        bool,
        typer.Option("--no-rollback", help="Stop starting new work, without rolling back."),
    ] = False,
    wait: WaitOpt = False,
    fmt: FormatOpt = Format.table,
) -> int:
    """Cancel an update in progress and roll it back (or, with
    --no-rollback, also a create: the stack ends FAILED)."""

    def start(inv: Invocation, name: str) -> str:
        action = str(inv.stacks.show(inv.project, name)["stack_status"]).split("_", 1)[0]
        inv.stacks.cancel_update(inv.project, name, rollback=not no_rollback)
        return f"{action}_FAILED" if no_rollback else "ROLLBACK_COMPLETE"

    return _act(ctx, names, start, wait=wait, fmt=fmt)


def _whole_stack(
    action: str, method: Callable[[StackService, str, str], None]
) -> Callable[[Invocation, str], str]:
    def start(inv: Invocation, name: str) -> str:
        method(inv.stacks, inv.project, name)
        return f"{action}_COMPLETE"

    return start


@app.command("check")
def check(
    ctx: typer.Context, names: StacksArg, wait: WaitOpt = False, fmt: FormatOpt = Format.table
) -> int:
    """Check that every resource still exists as recorded."""
    return _act(
        ctx, names, _whole_stack("CHECK", lambda s, p, n: s.check(p, n)), wait=wait, fmt=fmt
    )


@app.command("suspend")
def suspend(
    ctx: typer.Context, names: StacksArg, wait: WaitOpt = False, fmt: FormatOpt = Format.table
) -> int:
    """Suspend every resource of the stacks."""
    return _act(
        ctx, names, _whole_stack("SUSPEND", lambda s, p, n: s.suspend(p, n)), wait=wait, fmt=fmt
    )


@app.command("resume")
def resume(
    ctx: typer.Context, names: StacksArg, wait: WaitOpt = False, fmt: FormatOpt = Format.table
) -> int:
    """Resume suspended stacks."""
    return _act(
        ctx, names, _whole_stack("RESUME", lambda s, p, n: s.resume(p, n)), wait=wait, fmt=fmt
    )


@app.command("wait")
def wait_cmd(ctx: typer.Context, names: StacksArg, fmt: FormatOpt = Format.table) -> int:
    """Run the engine here until the stacks' operations end, with progress:
    how to resume after Ctrl-C, or to do the work of a create, update or
    delete started without --wait. Exit 1 if any ended FAILED."""

    def start(inv: Invocation, name: str) -> str:
        body = inv.stacks.show(inv.project, name)
        status = str(body["stack_status"])
        if in_progress(body):
            return status.replace("_IN_PROGRESS", "_COMPLETE")
        return status if status.endswith("_COMPLETE") else f"{status} (not COMPLETE)"

    return _act(ctx, names, start, wait=True, fmt=fmt)
