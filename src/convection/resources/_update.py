"""Heat's rule for applying a property change: in place, by replacement, or not at all.

From ``Resource.update_template_diff_properties``:

1. a change to an ``immutable`` property is refused;
2. otherwise, if every changed property is ``update_allowed``, the resource
   is updated in place;
3. otherwise it is replaced (a new one is created, then the old one removed).

Plugins may add their own replacement rule on top (Heat's
``needs_replace_with_prop_diff``); see ``ResourcePlugin.replace_reason``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from convection.hot import has_functions
from convection.resources._schema import PropertySchema


class UpdateAction(enum.Enum):
    NONE = "none"
    UPDATE = "update"
    REPLACE = "replace"
    #: The change is not allowed (an immutable property changed).
    ERROR = "error"


class UpdateDecision(NamedTuple):
    action: UpdateAction
    reason: str


def changed_properties(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    """Names whose value differs, sorted.

    A new value that still holds an unresolved function counts as changed:
    two equal ``get_attr`` calls may still resolve to different values, and
    the engine decides again once the value is known.
    """
    names = set(old) | set(new)
    return tuple(
        sorted(
            name for name in names if has_functions(new.get(name)) or old.get(name) != new.get(name)
        )
    )


def needs_replace(
    schema: Mapping[str, PropertySchema],
    old_props: Mapping[str, Any],
    new_props: Mapping[str, Any],
) -> UpdateDecision:
    """Decide how a change from ``old_props`` to ``new_props`` is applied.

    Both are validated property values (defaults applied), so a property set
    to its default is not a change. A name the schema does not know is never
    update_allowed.
    """
    changed = changed_properties(old_props, new_props)
    if not changed:
        return UpdateDecision(UpdateAction.NONE, "no property changed")
    immutable = [k for k in changed if k in schema and schema[k].immutable]
    if immutable:
        subject, verb = _subject(immutable)
        return UpdateDecision(
            UpdateAction.ERROR, f"{subject} {verb} immutable and cannot be changed"
        )
    fixed = [k for k in changed if k not in schema or not schema[k].update_allowed]
    if fixed:
        subject, _ = _subject(fixed)
        return UpdateDecision(UpdateAction.REPLACE, f"{subject} cannot be updated in place")
    subject, verb = _subject(changed)
    return UpdateDecision(UpdateAction.UPDATE, f"{subject} {verb} updated in place")


def _subject(names: Iterable[str]) -> tuple[str, str]:
    listed = list(names)
    if len(listed) == 1:
        return f"property {listed[0]}", "is"
    return f"properties {', '.join(listed)}", "are"
