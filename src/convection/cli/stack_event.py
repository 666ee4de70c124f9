"""``convection stack event list``: a stack's events, or a live tail of them.

The default format is heatclient's event log (``TIME [RESOURCE]: STATUS
REASON``), as ``openstack stack event list`` prints it; ``--format``
table, json and yaml work as everywhere else.
"""

from __future__ import annotations

import enum
import time
from typing import Annotated, Any, Literal

import typer

from convection.cli.context import invocation
from convection.cli.output import Format, emit, stdout
from convection.cli.progress import EventFeed, event_line, in_progress
from convection.cli.stack_common import StackArg, print_table
from convection.common import InvalidInput

app = typer.Typer(help="A stack's events.", no_args_is_help=True)

#: How often ``--follow`` looks for new events (seconds).
FOLLOW_POLL = 0.5

#: `openstack stack event list` table columns.
COLUMNS = (
    "resource_name",
    "id",
    "resource_status",
    "resource_status_reason",
    "event_time",
    "physical_resource_id",
    "logical_resource_id",
)


class EventFormat(enum.StrEnum):
    log = "log"
    table = "table"
    json = "json"
    yaml = "yaml"


def _print_log(events: list[dict[str, Any]]) -> None:
    for e in events:
        stdout.print(event_line(e), markup=False, highlight=False)


@app.command("list")
def list_events(
    ctx: typer.Context,
    stack: StackArg,
    resource: Annotated[
        str | None, typer.Option("--resource", help="Only this resource's events.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most this many (the oldest).")
    ] = None,
    marker: Annotated[
        str | None, typer.Option("--marker", metavar="ID", help="Only events after this one.")
    ] = None,
    sort: Annotated[
        str | None,
        typer.Option(
            "--sort", metavar="[event_time:]asc|desc", help="Oldest (asc) or newest first."
        ),
    ] = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            help="Keep printing new events until the stack's operation ends "
            "(at most its timeout); Ctrl-C stops.",
        ),
    ] = False,
    nested_depth: Annotated[
        int,
        typer.Option("-n", "--nested-depth", min=0, help="Depth of nested stacks to include."),
    ] = 0,
    fmt: Annotated[
        EventFormat, typer.Option("-f", "--format", help="log, table, json or yaml.")
    ] = EventFormat.log,
) -> int:
    """List a stack's events, oldest first (Heat's paging: --marker, --limit)."""
    inv = invocation(ctx)
    if nested_depth:
        return _nested_events(ctx, stack, nested_depth, limit, sort, fmt)
    if follow:
        if fmt is not EventFormat.log:
            raise InvalidInput.single("--follow can only be specified with --format log")
        return follow_events(ctx, stack, resource)
    events = inv.reads.events(
        inv.project,
        stack,
        resource_name=resource,
        limit=limit,
        marker=marker,
        sort_dir=sort_direction(sort),
    )
    if fmt is EventFormat.log:
        _print_log(events)
        return 0
    emit(
        events,
        Format(fmt.value),
        lambda: print_table(COLUMNS, [[e.get(c) for c in COLUMNS] for e in events]),
    )
    return 0


def _nested_events(
    ctx: typer.Context,
    stack: str,
    depth: int,
    limit: int | None,
    sort: str | None,
    fmt: EventFormat,
) -> int:
    """Events of the stack and its nested stacks, by time; the log names
    each nested event's stack, as heatclient does."""
    inv = invocation(ctx)
    events = inv.reads.events(
        inv.project, stack, limit=limit, sort_dir=sort_direction(sort), nested_depth=depth
    )
    top = inv.reads.show(inv.project, stack)["stack_name"]
    if fmt is EventFormat.log:
        for e in events:
            if e["stack_name"] != top:  # heatclient: [stack.resource]
                e = {**e, "resource_name": f"{e['stack_name']}.{e['resource_name']}"}
            stdout.print(event_line(e), markup=False, highlight=False)
        return 0
    columns = (*COLUMNS, "stack_name")
    emit(
        events,
        Format(fmt.value),
        lambda: print_table(columns, [[e.get(c) for c in columns] for e in events]),
    )
    return 0


def sort_direction(spec: str | None) -> Literal["asc", "desc"]:
    """heatclient's ``--sort event_time:desc``; events sort by time only."""
    key, _, direction = (spec or "asc").rpartition(":")
    if key not in ("", "event_time") or direction not in ("asc", "desc"):
        raise InvalidInput.single(f"Events sort by event_time, asc or desc; not {spec!r}")
    return "asc" if direction == "asc" else "desc"


def follow_events(ctx: typer.Context, stack: str, resource: str | None) -> int:
    """Print events as they come until the stack settles, its timeout
    passes, or Ctrl-C (which is how a tail ends, so it exits 0).

    It only watches: the work is done by whichever engine runs it."""
    inv = invocation(ctx)
    body = inv.reads.show(inv.project, stack)
    feed = EventFeed(inv.reads, inv.project, body["id"], resource=resource)
    deadline = time.monotonic() + 60 * float(body.get("timeout_mins") or 60)
    try:
        while True:
            settled = not in_progress(inv.reads.show(inv.project, body["id"]))
            _print_log(feed.poll())
            if settled or time.monotonic() > deadline:
                return 0
            time.sleep(FOLLOW_POLL)
    except KeyboardInterrupt:
        return 0
