"""Checks and conversions both stores share, so they fail the same way.

A journal change names record fields in a plain dict; a typo there would
otherwise turn into a silent no-op in one store and an SQL error in the
other. Checking here, before any write, keeps the two stores' behaviour
identical and the error readable.
"""

from __future__ import annotations

import dataclasses
import json
import json.encoder
import json.scanner
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from convection.store import workflows as wf
from convection.store._time import aware
from convection.store.api import (
    NODE_STATES,
    STACK,
    STACK_FILTER_KEYS,
    STACK_SORT_KEYS,
    TRAVERSAL_KINDS,
    AddNodes,
    AddTimer,
    Change,
    JSONDict,
    NodeRecord,
    ResourceRecord,
    StackRecord,
    TraversalRecord,
    UpdateNode,
    UpdateResource,
    UpdateStack,
    UpdateTraversal,
)


def _names(record: type[Any], *fixed: str) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(record)) - set(fixed)


#: Fields a change may set, per record: all but the identity.
STACK_FIELDS = _names(StackRecord, "id")
RESOURCE_FIELDS = _names(ResourceRecord, "id", "stack_id")
NODE_FIELDS = _names(NodeRecord, "traversal_id", "key")
TRAVERSAL_FIELDS = _names(TraversalRecord, "id", "stack_id", "kind", "execution_id")

#: Record fields held as tuples in memory and JSON lists in SQL.
TUPLE_FIELDS = frozenset({"requires", "successors"})

#: Compact, strict JSON: NaN and Infinity are not JSON and PostgreSQL refuses
#: them, so both stores refuse them up front. One encoder, built once:
#: ``json.dumps`` with options builds a new one per call, which dominated
#: the cost of inserting thousands of rows.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_encode_text: Callable[[str], str] = cast(Any, json.encoder).encode_basestring
#: The C encoder ``JSONEncoder.encode`` builds on every call, built once;
#: without the circular-reference check (values come from JSON and YAML
#: documents, which the loader bounds in depth; a cycle would still end in
#: RecursionError). Calling it directly is 2.5x faster for the small
#: documents a large stack writes tens of thousands of.
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_one_shot: Callable[[Any, int], Sequence[str]] | None = (
    None
    if _c_make_encoder is None
    else _c_make_encoder(None, _ENCODER.default, _encode_text, None, ":", ",", False, False, False)
)


def json_dumps(value: Any) -> str:
    """Compact, strict JSON of ``value`` (what ``_ENCODER.encode`` gives)."""
    if isinstance(value, str):
        return _encode_text(value)
    if _one_shot is None:  # an interpreter without the C accelerator
        return _ENCODER.encode(value)
    return "".join(_one_shot(value, 0))


_scan: Callable[[str, int], tuple[Any, int]] = cast(Any, json.scanner).make_scanner(
    json.JSONDecoder()
)


def json_loads(text: str | bytes) -> Any:
    """``json.loads`` for what :data:`json_dumps` wrote, about 3x faster.

    Reading 10,000 nodes decodes 20,000 small documents, mostly ``{}`` and
    ``[]``; the general ``loads`` spends more time in its wrappers (a regex
    for surrounding whitespace) than in the C scanner, which is called
    directly here. Anything else (whitespace, trailing text) goes the
    general way, which also raises the usual errors."""
    if isinstance(text, bytes):  # psycopg hands JSON over undecoded
        text = text.decode()
    if text == "{}":
        return {}
    if text == "[]":
        return []
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


def check_fields(what: str, fields: Mapping[str, Any], allowed: frozenset[str]) -> None:
    """Refuse unknown fields, naive datetimes and unknown node states."""
    if not fields.keys() <= allowed:
        unknown = sorted(set(fields) - allowed)
        raise ValueError(f"{what}: unknown or read-only fields {unknown}")
    for name, value in fields.items():
        if isinstance(value, datetime):
            aware(value, f"{what}.{name}")
    state = fields.get("state")
    if allowed is NODE_FIELDS and state is not None and state not in NODE_STATES:
        raise ValueError(f"{what}: unknown node state {state!r}")


def check_traversal(
    traversal: TraversalRecord, nodes: Sequence[NodeRecord], stack_fields: Mapping[str, Any]
) -> None:
    """A traversal about to start: one owner as its kind says; its nodes
    are its own, unique, in known states."""
    check_owner(traversal)
    if traversal.kind == STACK:
        check_fields("start_traversal stack_fields", stack_fields, STACK_FIELDS)
    else:
        wf.check_update(wf.EXECUTIONS, stack_fields)
    for name in ("deadline", "started_at", "finished_at"):
        value = getattr(traversal, name)
        if value is not None:
            aware(value, f"traversal {traversal.id}.{name}")
    keys: set[str] = set()
    for node in nodes:
        if node.traversal_id != traversal.id:
            raise ValueError(f"node {node.key} belongs to traversal {node.traversal_id}")
        if node.state not in NODE_STATES:
            raise ValueError(f"node {node.key}: unknown state {node.state!r}")
        if node.lease_until is not None:
            aware(node.lease_until, f"node {node.key}.lease_until")
        keys.add(node.key)
    if len(keys) != len(nodes):
        raise ValueError(f"traversal {traversal.id}: duplicate node keys")


def check_added(change: AddNodes) -> None:
    """Nodes added to a running traversal: its own, in known states."""
    for node in change.nodes:
        if node.traversal_id != change.traversal_id:
            raise ValueError(f"node {node.key} belongs to traversal {node.traversal_id}")
        if node.state not in NODE_STATES:
            raise ValueError(f"node {node.key}: unknown state {node.state!r}")


def check_owner(traversal: TraversalRecord) -> None:
    """The owner fields its kind needs, and not the other one."""
    kind = traversal.kind
    if kind not in TRAVERSAL_KINDS:
        raise ValueError(f"traversal {traversal.id}: unknown kind {kind!r}")
    stack, execution = bool(traversal.stack_id), bool(traversal.execution_id)
    if (stack, execution) != ((True, False) if kind == STACK else (False, True)):
        raise ValueError(
            f"traversal {traversal.id} of kind {kind!r} needs exactly its "
            f"{'stack_id' if kind == STACK else 'execution_id'}"
        )


def check_stack_traversals(traversals: Sequence[TraversalRecord]) -> None:
    """The bulk starts (a group's members) are of stacks only."""
    for traversal in traversals:
        if traversal.kind != STACK:
            raise ValueError(f"traversal {traversal.id}: a bulk start takes stack traversals")


def with_updated_at(fields: Mapping[str, Any], now: datetime) -> JSONDict:
    """``fields`` plus ``updated_at=now`` unless given: what an ORM's onupdate does."""
    out = dict(fields)
    out.setdefault("updated_at", now)
    return out


def check_stack_query(
    filters: Mapping[str, str | Sequence[str]] | None, sort_keys: Sequence[str], sort_dir: str
) -> dict[str, list[str]]:
    """Validate list_stacks options; return filters as lists of accepted values."""
    bad_sort = [k for k in sort_keys if k not in STACK_SORT_KEYS]
    if bad_sort:
        raise ValueError(f"cannot sort stacks by {bad_sort}; allowed: {list(STACK_SORT_KEYS)}")
    if sort_dir not in ("asc", "desc"):
        raise ValueError(f"sort_dir must be 'asc' or 'desc', not {sort_dir!r}")
    out: dict[str, list[str]] = {}
    for key, value in (filters or {}).items():
        if key not in STACK_FILTER_KEYS:
            raise ValueError(f"cannot filter stacks on {key!r}; allowed: {list(STACK_FILTER_KEYS)}")
        out[key] = [value] if isinstance(value, str) else list(value)
    return out


#: Fields a change of each update kind may set.
_ALLOWED: dict[type[Any], frozenset[str]] = {
    UpdateStack: STACK_FIELDS,
    UpdateResource: RESOURCE_FIELDS,
    UpdateNode: NODE_FIELDS,
    UpdateTraversal: TRAVERSAL_FIELDS,
}


def check_changes(changes: Sequence[Change]) -> None:
    """Refuse a malformed batch before anything is written."""
    for change in changes:
        kind = type(change)
        allowed = _ALLOWED.get(kind)
        if allowed is not None:
            check_fields(kind.__name__, change.fields, allowed)  # type: ignore[union-attr]
        elif isinstance(change, AddTimer):
            aware(change.due_at, "AddTimer.due_at")
        elif (update := wf.UPDATES.get(kind)) is not None:
            wf.check_update(update[0], change.fields)  # type: ignore[union-attr]
        elif (insert := wf.INSERTS.get(kind)) is not None:
            wf.check_record(insert[0], getattr(change, insert[1]))
