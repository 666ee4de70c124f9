"""Group members: names, per-member definitions, removal policies, and the
members of each rolling-update batch.

A member definition is plain data, ``{"type", "properties", "metadata"}``
(the keys of ResourceGroup's ``resource_def``), so "has this member the new
definition?" is dict equality, as Heat compares its ResourceDefinitions.

Names: a ResourceGroup names its members ``"0"``, ``"1"``, ... skipping every
name on its blacklist (removal policies), so a removed name is never reused.
An AutoScalingGroup names new members with short random ids; here they are
derived from a seed so that a re-run after a crash picks the same names.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from convection.common import JSON

#: ``(name, definition)`` in the order Heat keeps them.
MemberDefinitions = list[tuple[str, dict[str, Any]]]
DEFAULT_INDEX_VAR = "%index%"
REMOVAL_APPEND, REMOVAL_UPDATE = "append", "update"


@dataclass(frozen=True, slots=True)
class Member:
    """A member the group has now, as its child stack recorded it."""

    name: str
    definition: Mapping[str, Any]
    failed: bool = False
    #: Creation order; Heat sorts members by ``created_time``.
    order: int = 0
    reference_id: JSON = None


def substitute_index(value: Any, index_var: str, name: str) -> Any:
    """Heat's ``_handle_repl_val``: replace ``index_var`` with the member's
    name in every string, however deeply nested; other values are kept."""
    if isinstance(value, str):
        return value.replace(index_var, name)
    if isinstance(value, Mapping):
        return {k: substitute_index(v, index_var, name) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [substitute_index(v, index_var, name) for v in value]
    return value


def member_definition(resource_def: Mapping[str, Any], name: str, index_var: str) -> dict[str, Any]:
    """One ResourceGroup member: ``resource_def`` with the index substituted
    in its properties (Heat substitutes in properties only, not metadata).
    Properties whose value is null are left out, as Heat's ``_clean_props``
    does, so an optional value that resolved to nothing is just not set."""
    props = resource_def.get("properties")
    out: dict[str, Any] = {"type": resource_def["type"]}
    if props:
        clean = {k: v for k, v in props.items() if v is not None}
        out["properties"] = substitute_index(clean, index_var, name)
    if resource_def.get("metadata") is not None:
        out["metadata"] = resource_def["metadata"]
    return out


def member_names(size: int, blacklist: Iterable[str] = ()) -> list[str]:
    """The first ``size`` names among "0", "1", ... not on ``blacklist``."""
    banned = frozenset(blacklist)
    candidates = (str(i) for i in itertools.count())
    return list(itertools.islice((n for n in candidates if n not in banned), size))


def new_blacklist_entries(
    removal_policies: Sequence[Mapping[str, Any]],
    current: Iterable[str],
    members: Iterable[str],
    refs_map: Mapping[str, JSON] | None,
    created: bool,
) -> Iterator[str]:
    """Names the removal policies ask to remove (``_get_new_blacklist_entries``).

    An entry is a member name (string or integer), a name already on the
    list, or, for a string, a member's reference id (``refs``). Before the
    group exists every entry is taken as a name. Unknown entries are
    ignored, as Heat ignores them.
    """
    known, names = frozenset(current), frozenset(members)
    for policy in removal_policies:
        for entry in policy.get("resource_list") or ():
            text = _text(entry)
            if text in known or not created or text in names:
                yield text
            elif isinstance(entry, str) and refs_map:
                found = next((n for n, ref in refs_map.items() if ref == entry), None)
                if found is not None:
                    yield found


def updated_blacklist(
    current: Iterable[str],
    mode: str,
    removal_policies: Sequence[Mapping[str, Any]],
    members: Iterable[str],
    refs_map: Mapping[str, JSON] | None,
    created: bool,
) -> list[str]:
    """The blacklist after an update (``_update_name_blacklist``): ``append``
    keeps every name removed before, ``update`` starts again from the names
    the policies list now. Sorted, as Heat stores it."""
    existing = list(current)
    start = set() if mode == REMOVAL_UPDATE else set(existing)
    found = new_blacklist_entries(removal_policies, existing, members, refs_map, created)
    return sorted(start | set(found))


def _text(entry: Any) -> str:
    """Heat's ``six.text_type(n)``, with Python's spelling of booleans."""
    return str(entry)


def ordered(members: Iterable[Member], *, include_failed: bool) -> list[Member]:
    """``grouputils.get_members``: failed members first (removed first),
    then by creation, then by name."""
    chosen = [m for m in members if include_failed or not m.failed]
    return sorted(chosen, key=lambda m: (not m.failed, m.order, m.name))


def member_definitions(
    old: Sequence[tuple[str, Mapping[str, Any]]],
    size: int,
    num_new: int,
    new_name: Callable[[], str],
    customise: Callable[[str], dict[str, Any]],
) -> MemberDefinitions:
    """``heat/scaling/template.py``: the members after one step.

    ``old`` lists the existing members in the order they should be removed
    or replaced. Members beyond ``size`` are dropped from its front; of the
    rest, up to ``num_new`` (counting the members created) take the new
    definition, in order, skipping members that have it already.
    """
    kept = list(old[-size:]) if size else []
    replace = num_new - (size - len(kept))
    out: MemberDefinitions = []
    for i in range(size):
        if i < len(kept):
            name, definition = kept[i]
            custom = customise(name)
            if dict(definition) != custom and replace > 0:
                replace -= 1
                out.append((name, custom))
            else:
                out.append((name, dict(definition)))
        else:
            name = new_name()
            out.append((name, customise(name)))
    return out


def rolling_members(
    existing: Iterable[Member],
    blacklist: Iterable[str],
    target: int,
    capacity: int,
    num_new: int,
    customise: Callable[[str], dict[str, Any]],
) -> tuple[MemberDefinitions, list[str]]:
    """One batch of a ResourceGroup rolling update
    (``_assemble_for_rolling_update``): returns the members and the names
    the group's outputs cover.

    Members no longer wanted go first (removed at once), then the members
    with the highest indices (updated first); temporary members beyond the
    target come last and are left alone.
    """
    banned = frozenset(blacklist)
    names = member_names(capacity, banned)
    position = {n: i for i, n in enumerate(names)}
    valid = [m for m in ordered(existing, include_failed=False) if m.name not in banned]

    def priority(member: Member) -> int:
        index = position.get(member.name)
        if index is None:
            return 0
        return target - index if index < target else capacity

    old = [(m.name, m.definition) for m in sorted(valid, key=priority)]
    present = {m.name for m in valid}
    fresh = (n for n in names if n not in present)
    return member_definitions(old, capacity, num_new, lambda: next(fresh), customise), names


def short_id(seed: str, n: int) -> str:
    """A 12-character lowercase name like Heat's ``short_id.generate_id``,
    derived from ``seed`` and ``n`` so a re-run names members the same way."""
    digest = hashlib.blake2b(f"{seed}:{n}".encode(), digest_size=8).digest()
    return base64.b32encode(digest).decode().lower().rstrip("=")[:12]
