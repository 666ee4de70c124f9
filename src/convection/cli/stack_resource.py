"""``convection stack resource ...``: list, show, mark-unhealthy, signal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from convection.cli.context import Invocation, invocation
from convection.cli.output import Format, emit
from convection.cli.stack_common import FormatOpt, StackArg, print_table, show_fields
from convection.common import InvalidInput

app = typer.Typer(help="A stack's resources.", no_args_is_help=True)

ResourceArg = Annotated[str, typer.Argument(metavar="RESOURCE", help="Name of the resource.")]

#: ``--filter`` keys, as Heat's resource list takes them.
FILTER_KEYS = ("name", "status", "type", "action", "id", "physical_resource_id")


def parse_filters(items: list[str] | None) -> dict[str, set[str]]:
    """``key=value`` pairs; a repeated key matches any of its values."""
    out: dict[str, set[str]] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or key not in FILTER_KEYS:
            known = ", ".join(FILTER_KEYS)
            raise InvalidInput.single(
                f"Malformed filter ({item}): use KEY=VALUE, KEY one of {known}"
            )
        out.setdefault(key, set()).add(value)
    return out


def _facets(r: dict[str, Any]) -> dict[str, str]:
    action, _, status = str(r["resource_status"]).partition("_")
    return {
        "name": r["resource_name"],
        "status": status,
        "type": r["resource_type"],
        "action": action,
        "id": r["physical_resource_id"],
        "physical_resource_id": r["physical_resource_id"],
    }


def matches(r: dict[str, Any], filters: dict[str, set[str]]) -> bool:
    """Heat's status filter takes ``COMPLETE``; the full ``CREATE_COMPLETE``
    is accepted too."""
    facets = _facets(r)
    for key, values in filters.items():
        if facets[key] not in values and not (key == "status" and r["resource_status"] in values):
            return False
    return True


def collect(inv: Invocation, stack: str, depth: int) -> list[dict[str, Any]]:
    """The stack's resources, then those of its nested stacks to ``depth``."""
    return inv.reads.resources(inv.project, stack, nested_depth=depth)


@app.command("list")
def list_resources(
    ctx: typer.Context,
    stack: StackArg,
    nested_depth: Annotated[
        int, typer.Option("-n", "--nested-depth", min=0, help="Depth of nested stacks to show.")
    ] = 0,
    filters: Annotated[
        list[str] | None,
        typer.Option("--filter", metavar="KEY=VALUE", help="name, status, type, action, id."),
    ] = None,
    long: Annotated[bool, typer.Option("--long", help="Also show the stack name.")] = False,
    fmt: FormatOpt = Format.table,
) -> int:
    """List a stack's resources."""
    inv = invocation(ctx)
    wanted = parse_filters(filters)
    rows = [r for r in collect(inv, stack, nested_depth) if matches(r, wanted)]
    columns = [
        "resource_name",
        "physical_resource_id",
        "resource_type",
        "resource_status",
        "updated_time",
    ]
    if nested_depth or long:
        columns.append("stack_name")
    if nested_depth:
        columns.append("parent_resource")
    emit(rows, fmt, lambda: print_table(columns, [[r.get(c) for c in columns] for r in rows]))
    return 0


@app.command("show")
def show_resource(
    ctx: typer.Context,
    stack: StackArg,
    resource: ResourceArg,
    with_attr: Annotated[
        list[str] | None,
        typer.Option("--with-attr", metavar="ATTRIBUTE", help="Show only these attributes."),
    ] = None,
    fmt: FormatOpt = Format.table,
) -> int:
    """Show a resource, with its attributes (secret ones masked)."""
    inv = invocation(ctx)
    body = inv.reads.resource(inv.project, stack, resource)
    if with_attr:
        attrs = body.get("attributes") or {}
        body["attributes"] = {k: attrs.get(k) for k in with_attr}
    emit(body, fmt, lambda: show_fields(body))
    return 0


@app.command("mark-unhealthy")
def mark_unhealthy(
    ctx: typer.Context,
    stack: StackArg,
    resource: ResourceArg,
    reason: Annotated[str, typer.Argument(help="Why (shown as the status reason).")] = "",
    reset: Annotated[bool, typer.Option("--reset", help="Mark it healthy again.")] = False,
) -> int:
    """Mark a resource unhealthy (CHECK_FAILED): the next update replaces it."""
    inv = invocation(ctx)
    inv.stacks.mark_unhealthy(inv.project, stack, resource, reason, unhealthy=not reset)
    return 0


def signal_data(data: str | None, data_file: Path | None) -> dict[str, Any]:
    """``--data`` or ``--data-file``: a JSON object, as heatclient requires."""
    if data is not None and data_file is not None:
        raise InvalidInput.single("Should only specify one of data or data-file")
    if data_file is not None:
        try:
            data = data_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput.single(f"cannot read {data_file}: {exc}") from None
    if data is None:
        return {}
    try:
        parsed = json.loads(data)
    except ValueError as exc:
        raise InvalidInput.single(f"Data should be in JSON format: {exc}") from None
    if not isinstance(parsed, dict):
        raise InvalidInput.single("Data should be a JSON dict")
    return parsed


@app.command("signal")
def signal(
    ctx: typer.Context,
    stack: StackArg,
    resource: ResourceArg,
    data: Annotated[str | None, typer.Option("--data", help="JSON object to send.")] = None,
    data_file: Annotated[
        Path | None, typer.Option("--data-file", help="File holding the JSON object.")
    ] = None,
) -> int:
    """Send a signal to a resource; its plugin reads it when next polled."""
    inv = invocation(ctx)
    inv.stacks.signal(inv.project, stack, resource, signal_data(data, data_file))
    return 0
