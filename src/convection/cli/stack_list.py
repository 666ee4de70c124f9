"""``convection stack list``: ``openstack stack list`` and its options.

Filtering, tags, paging and sorting are done by the service
(:meth:`convection.service.stacks.Stacks.list`, Heat's ``GET /stacks``), so
``--limit`` and ``--marker`` page through what the filters keep. heatclient
sorts ``--sort`` on the client; here one direction for every key is sent
to the service, and mixed directions are sorted here, as heatclient does.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import typer

from convection.cli.context import invocation
from convection.cli.output import Format, emit
from convection.cli.stack_common import LIST_COLUMNS, FormatOpt, print_table, split_tags
from convection.common import InvalidInput


class TagMode(enum.StrEnum):
    any = "any"
    not_ = "not"
    not_any = "not-any"


#: ``--sort`` keys: heatclient sorts on the listed fields.
SORT_FIELDS = ("stack_name", "stack_status", "creation_time", "updated_time")


def parse_sort(specs: Sequence[str]) -> list[tuple[str, Literal["asc", "desc"]]]:
    """``key[:dir]`` items (repeated or comma-separated); asc by default."""
    out: list[tuple[str, Literal["asc", "desc"]]] = []
    for spec in (part for item in specs for part in item.split(",") if part):
        key, _, direction = spec.partition(":")
        if key not in SORT_FIELDS:
            raise InvalidInput.single(
                f"Cannot sort by {key!r}; use one of {', '.join(SORT_FIELDS)}"
            )
        if direction not in ("", "asc", "desc"):
            raise InvalidInput.single(f"Sort direction must be asc or desc, not {direction!r}")
        out.append((key, "desc" if direction == "desc" else "asc"))
    return out


def parse_properties(items: Sequence[str]) -> dict[str, list[str]]:
    """``--property KEY=VALUE``: Heat's stack filters; a repeated key
    matches any of its values."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidInput.single(f"Malformed property ({item}): use KEY=VALUE")
        out.setdefault(key, []).append(value)
    return out


def sort_rows(rows: list[dict[str, Any]], order: Sequence[tuple[str, str]]) -> None:
    """A stable sort per key, last key first: mixed directions, as
    heatclient's ``sort_items`` allows."""
    for key, direction in reversed(order):
        rows.sort(key=lambda r: (r.get(key) is None, r.get(key) or ""), reverse=direction == "desc")


def tag_filters(tags: str | None, mode: TagMode | None) -> dict[TagMode | None, list[str]]:
    """``--tags`` under ``--tag-mode`` (None: every tag must be there)."""
    names = split_tags(tags) or []
    return {mode: names} if names else {}


PropertyOpt = Annotated[
    list[str] | None,
    typer.Option("--property", metavar="KEY=VALUE", help="Filter on id, name, status or action."),
]
TagsFilterOpt = Annotated[
    str | None, typer.Option("--tags", metavar="TAG1,TAG2", help="Stacks with these tags.")
]
TagModeOpt = Annotated[
    TagMode | None, typer.Option("--tag-mode", help="any, not or not-any (default: all the tags).")
]
LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="At most this many stacks.")]
MarkerOpt = Annotated[
    str | None, typer.Option("--marker", metavar="ID", help="Only stacks after this one.")
]
SortOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--sort",
        metavar="KEY[:DIR]",
        help="stack_name, stack_status, creation_time or updated_time; asc or desc.",
    ),
]
DeletedOpt = Annotated[bool, typer.Option("--deleted", help="Include deleted stacks.")]
NestedOpt = Annotated[
    bool, typer.Option("--nested", "--show-nested", help="Include nested stacks.")
]
AllProjectsOpt = Annotated[bool, typer.Option("--all-projects", help="Stacks of every project.")]
ShortOpt = Annotated[bool, typer.Option("--short", help="Fewer columns.")]


def list_stacks(
    ctx: typer.Context,
    deleted: DeletedOpt = False,
    nested: NestedOpt = False,
    prop: PropertyOpt = None,
    tags: TagsFilterOpt = None,
    tag_mode: TagModeOpt = None,
    limit: LimitOpt = None,
    marker: MarkerOpt = None,
    sort: SortOpt = None,
    all_projects: AllProjectsOpt = False,
    short: ShortOpt = False,
    fmt: FormatOpt = Format.table,
) -> int:
    """List the project's stacks (newest first unless --sort)."""
    inv = invocation(ctx)
    order = parse_sort(sort or [])
    directions = {d for _, d in order}
    wanted = tag_filters(tags, tag_mode)
    bodies = inv.reads.list(
        None if all_projects else inv.project,
        include_deleted=deleted,
        show_nested=nested,
        filters=parse_properties(prop or []),
        tags=wanted.get(None, ()),
        tags_any=wanted.get(TagMode.any, ()),
        not_tags=wanted.get(TagMode.not_, ()),
        not_tags_any=wanted.get(TagMode.not_any, ()),
        sort_keys=[k for k, _ in order],
        sort_dir=next(iter(directions)) if len(directions) == 1 else "desc",
        limit=limit,
        marker=marker,
    )
    if len(directions) > 1:
        sort_rows(bodies, order)
    columns = list(LIST_COLUMNS)
    if short:
        columns = columns[:-2]
    if all_projects:
        columns.insert(2, ("Project", "project"))
    if nested:
        columns.append(("Parent", "parent"))
    emit(
        bodies,
        fmt,
        lambda: print_table(
            [c for c, _ in columns], [[b.get(k) for _, k in columns] for b in bodies]
        ),
    )
    return 0
