"""Group attributes, computed from the members' stored values.

The engine stores one value per attribute *name*. Heat's group
attributes are path-driven, though: a path applies to each member, not to
the group's value (``[group, attr, key]`` is every member's ``attr[key]``;
``[group, attributes, attr, key]`` maps each member name to its
``attr[key]``; ``[group, resource.N, attr]`` is member N's ``attr``). So
``attributes``, ``outputs`` and ``outputs_list`` are stored transposed, by
member attribute first (``{name: [v0, v1]}``), and :func:`path_value`
gives the resolver a :class:`~convection.hot.functions.refs.PathValue` that
applies the rest of the path member by member.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from convection.common import JSON
from convection.hot import PathValue, select_from_attribute

#: Heat's ResourceGroup-shaped types (ResourceChain shares its attributes).
RESOURCE_GROUPS = frozenset({"OS::Heat::ResourceGroup", "OS::Heat::ResourceChain"})
#: Heat's AutoScalingGroup.
SCALING_GROUPS = frozenset({"OS::Heat::AutoScalingGroup"})
#: Attributes whose path Heat applies to the value itself.
_WHOLE = frozenset(
    {"refs", "refs_map", "removed_rsrc_list", "current_size", "show", "OS::stack_id"}
)


class MemberNotFound(LookupError):
    """``resource.N`` names no member (Heat's text)."""

    def __init__(self, member: str, group: str) -> None:
        self.member = member
        self.group = group
        super().__init__(f"Member '{member}' not found in group resource '{group}'.")


@dataclass(frozen=True, slots=True)
class MemberView:
    """A member as its child stack stored it."""

    name: str
    reference_id: JSON = None
    attributes: Mapping[str, JSON] = field(default_factory=dict)


def _by_attribute(members: Sequence[MemberView], as_list: bool) -> dict[str, JSON]:
    names = sorted({a for m in members for a in m.attributes})
    if as_list:
        return {a: [m.attributes.get(a) for m in members] for a in names}
    return {a: {m.name: m.attributes.get(a) for m in members} for a in names}


def member_reference(
    key: str, members: Sequence[MemberView], group: str, *, by_index: bool
) -> tuple[MemberView, str | None]:
    """``resource.N`` or ``resource.N.attr``: the member and the attribute
    (``None`` for the reference id). AutoScalingGroup counts N as a position
    in its member list; the others use it as a member name."""
    parts = key.split(".", 2)
    wanted = parts[1] if len(parts) > 1 else ""
    attr = parts[2] if len(parts) > 2 else None
    if by_index:
        if wanted.isdigit() and int(wanted) < len(members):
            return members[int(wanted)], attr
    else:
        for m in members:
            if m.name == wanted:
                return m, attr
    raise MemberNotFound(wanted, group)


def resource_group_attribute(
    name: str, members: Sequence[MemberView], group: str, removed: Sequence[str] = ()
) -> JSON:
    """ResourceGroup (and ResourceChain): ``members`` in name order, one per
    wanted name (a missing member has no reference and no attributes)."""
    if name == "removed_rsrc_list":
        return list(removed)
    if name.startswith("resource."):
        member, attr = member_reference(name, members, group, by_index=False)
        return member.reference_id if attr is None else member.attributes.get(attr)
    if name == "refs":
        return [m.reference_id for m in members]
    if name == "refs_map":
        return {m.name: m.reference_id for m in members}
    if name == "attributes":
        return _by_attribute(members, as_list=False)
    return [m.attributes.get(name) for m in members]


def scaling_group_attribute(name: str, members: Sequence[MemberView], group: str) -> JSON:
    """AutoScalingGroup: ``members`` in Heat's order (oldest first)."""
    if name == "current_size":
        return len(members)
    if name == "refs":
        return [m.reference_id for m in members]
    if name == "refs_map":
        return {m.name: m.reference_id for m in members}
    if name == "outputs":
        return _by_attribute(members, as_list=False)
    if name == "outputs_list":
        return _by_attribute(members, as_list=True)
    if name.startswith("resource."):
        member, attr = member_reference(name, members, group, by_index=True)
        return member.reference_id if attr is None else member.attributes.get(attr)
    return None


class _EachMember(PathValue):
    """A member attribute's values in member order: a path selects in each."""

    __slots__ = ("_values",)

    def __init__(self, values: JSON) -> None:
        self._values = values

    def select(self, path: list[object]) -> JSON:
        if not path or not isinstance(self._values, list):
            return self._values if not path else None
        return [select_from_attribute(v, list(path)) for v in self._values]


class _ByMember(PathValue):
    """``attributes``/``outputs`` (``{attr: {member: v}}``) or
    ``outputs_list`` (``{attr: [v]}``): the path's first key picks the
    member attribute, the rest selects in each member's value."""

    __slots__ = ("_stored",)

    def __init__(self, stored: JSON) -> None:
        self._stored = stored

    def select(self, path: list[object]) -> JSON:
        if not path:
            return self._stored
        head, rest = path[0], list(path[1:])
        inner = self._stored.get(head) if isinstance(self._stored, dict) else None
        if isinstance(head, str) and isinstance(inner, dict):
            return {m: select_from_attribute(v, rest) for m, v in inner.items()}
        if isinstance(head, str) and isinstance(inner, list):
            return [select_from_attribute(v, rest) for v in inner]
        return None


class _Member(PathValue):
    """``resource.N``: the member's reference id; with a path, its
    attribute (stored under ``resource.N.attr``, see
    ``engine.attributes``) and the rest of the path in that."""

    __slots__ = ("_attributes", "_key")

    def __init__(self, key: str, attributes: Mapping[str, JSON]) -> None:
        self._key = key
        self._attributes = attributes

    def select(self, path: list[object]) -> JSON:
        if not path:
            return self._attributes.get(self._key)
        head = path[0]
        if not isinstance(head, str):
            return None
        return select_from_attribute(self._attributes.get(f"{self._key}.{head}"), list(path[1:]))


def path_value(type_name: str, name: str, attributes: Mapping[str, JSON]) -> JSON | PathValue:
    """A group's stored attribute ``name`` as ``get_attr`` should walk it
    (see the module docstring); any other type's value as stored.

    ``resource.NAME`` is walked as a member for every type: Heat's
    ``StackResource.get_attribute`` reads ``[owner, resource.NAME, ATTR]``
    as NAME's ``ATTR`` for template resources and nested stacks as for
    groups (``grouputils.get_nested_attrs``); no other type has such names.
    """
    value = attributes.get(name)
    if name.startswith("resource.") and name.count(".") == 1:
        return _Member(name, attributes)
    scaling = type_name in SCALING_GROUPS
    if not scaling and type_name not in RESOURCE_GROUPS:
        return value
    if name in _WHOLE:
        return value
    if name.startswith("resource."):
        return value
    if name in (("outputs", "outputs_list") if scaling else ("attributes",)):
        return _ByMember(value)
    return value if scaling else _EachMember(value)
