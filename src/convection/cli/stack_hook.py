"""``convection stack hook clear|poll``: breakpoints, as the openstack client
drives them (heatclient's ``StackHookClear``, ``StackHookPoll``).

A resource stops at a hook set in the environment (``resource_registry:
resources: NAME: {hooks: pre-create}``, or ``stack create --pre-create
NAME``); ``hook poll`` lists those waiting and ``hook clear`` lets them go
on. Without a hook type flag, the type follows the stack's action, as in
heatclient (CREATE: pre-create, UPDATE: pre-update, DELETE: pre-delete).

A resource in a nested stack is named by a path, as in heatclient: the
owning resources down the tree, then the resource (``web/3`` is member 3
of group ``web``). Any element may be a wildcard (``web-*``, ``*/web/3``):
those waiting at the hook are cleared, the others left alone (heatclient
signals every match and fails on the first that is not waiting).
``hook poll --nested-depth N`` lists the hooks of nested stacks too, each
with its path.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Annotated, Any

import typer

from convection.cli.context import Invocation, invocation
from convection.cli.output import Format, emit, stderr
from convection.cli.stack_common import FormatOpt, StackArg, print_table
from convection.common import InvalidInput

app = typer.Typer(help="Hooks (breakpoints) of a stack's resources.", no_args_is_help=True)

#: `openstack stack hook poll` columns, and the fields they show.
POLL_COLUMNS = (
    ("Resource Name", "resource_name"),
    ("ID", "id"),
    ("Resource Status Reason", "resource_status_reason"),
    ("Resource Status", "resource_status"),
    ("Event Time", "event_time"),
)

#: With ``--nested-depth``: heatclient's Stack Name, and the path to clear.
NESTED_COLUMNS = (("Stack Name", "stack_name"), ("Resource Path", "resource_path"))

#: heatclient's hook type by stack action.
_BY_ACTION = {"CREATE": "pre-create", "UPDATE": "pre-update", "DELETE": "pre-delete"}


def _flag(name: str) -> Any:
    return typer.Option(f"--{name}", help=f"Clear {name} hooks.")


def hook_type_of(inv: Invocation, stack: str) -> str:
    """heatclient's ``get_hook_type_via_status``."""
    status = str(inv.stacks.show(inv.project, stack)["stack_status"])
    if not status.endswith("_IN_PROGRESS"):
        raise InvalidInput.single(f"Stack status {status} not IN_PROGRESS")
    hook = _BY_ACTION.get(status.split("_", 1)[0])
    if hook is None:
        raise InvalidInput.single(
            f"Unexpected stack status {status}, only create, update and delete supported"
        )
    return hook


def _chosen(flags: dict[str, bool]) -> str | None:
    chosen = [name for name, given in flags.items() if given]
    if len(chosen) > 1:
        raise InvalidInput.single("Give at most one hook type: " + ", ".join(chosen))
    return chosen[0] if chosen else None


def clear_matching(inv: Invocation, stack: str, pattern: str, hook: str) -> list[str]:
    """Clear ``hook`` on the resources ``pattern`` (a name or a path, with
    wildcards or not) names; returns their paths."""
    parts = [p for p in pattern.split("/") if p]
    path = "/".join(parts)
    if not any(c in path for c in "*?["):
        inv.stacks.hook_clear(inv.project, stack, path or pattern, hook)
        return [path]
    waiting = [
        str(p["resource_path"])
        for p in inv.stacks.hook_poll(inv.project, stack, nested_depth=len(parts) - 1)
        if p["hook_type"] == hook and _matches(str(p["resource_path"]).split("/"), parts)
    ]
    for found in waiting:
        inv.stacks.hook_clear(inv.project, stack, found, hook)
    if not waiting:
        stderr.print(f"No resource matching {path} waits at {hook}.", markup=False)
    return waiting


def _matches(names: list[str], patterns: list[str]) -> bool:
    return len(names) == len(patterns) and all(map(fnmatchcase, names, patterns))


@app.command("clear")
def clear(
    ctx: typer.Context,
    stack: StackArg,
    resources: Annotated[
        list[str],
        typer.Argument(
            metavar="RESOURCE...",
            help="Resource names; in nested stacks a path (web/3); wildcards allowed.",
        ),
    ],
    pre_create: Annotated[bool, _flag("pre-create")] = False,
    pre_update: Annotated[bool, _flag("pre-update")] = False,
    pre_delete: Annotated[bool, _flag("pre-delete")] = False,
    post_create: Annotated[bool, _flag("post-create")] = False,
    post_update: Annotated[bool, _flag("post-update")] = False,
    post_delete: Annotated[bool, _flag("post-delete")] = False,
) -> int:
    """Let resources waiting at a hook go on (Heat's signal {unset_hook})."""
    inv = invocation(ctx)
    flags = {
        "pre-create": pre_create,
        "pre-update": pre_update,
        "pre-delete": pre_delete,
        "post-create": post_create,
        "post-update": post_update,
        "post-delete": post_delete,
    }
    hook = _chosen(flags) or hook_type_of(inv, stack)
    for pattern in resources:
        clear_matching(inv, stack, pattern, hook)
    return 0


@app.command("poll")
def poll(
    ctx: typer.Context,
    stack: StackArg,
    nested_depth: Annotated[
        int,
        typer.Option(
            "--nested-depth", "-n", min=0, help="Depth of nested stacks to list hooks of."
        ),
    ] = 0,
    fmt: FormatOpt = Format.table,
) -> int:
    """List the resources waiting at a hook, with the event that paused them."""
    inv = invocation(ctx)
    status = str(inv.reads.show(inv.project, stack)["stack_status"])
    if not status.endswith("_IN_PROGRESS"):
        raise InvalidInput.single(f"Stack status {status} not IN_PROGRESS")
    pending = inv.reads.hook_poll(inv.project, stack, nested_depth=nested_depth)
    columns = POLL_COLUMNS + (NESTED_COLUMNS if nested_depth else ())
    emit(
        pending,
        fmt,
        lambda: print_table(
            [c for c, _ in columns], [[p.get(k) for _, k in columns] for p in pending]
        ),
    )
    return 0
