"""Group attributes, computed from the members' stored values.

The engine stores one value per attribute *name*; ``get_attr`` then walks
any further path into it. Heat's ``attributes`` (ResourceGroup,
ResourceChain) and ``outputs``/``outputs_list`` (AutoScalingGroup) are
path-driven: ``[group, outputs_list, name]`` is each member's ``name``. So
they are stored transposed, by member attribute first
(``{name: [v0, v1]}``), and selecting the first path key gives Heat's
answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from convection.types import JSON


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
