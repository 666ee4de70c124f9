"""How YAML scalars become the values Heat sees.

Shared by the loader's two passes (:mod:`convection.hot.loader` and
:mod:`convection.hot._yaml_fast`): YAML 1.1 implicit typing as PyYAML's
resolver does it, and construction as Heat's loader does it (timestamps stay
strings), without PyYAML's per-node machinery.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

STR_TAG = "tag:yaml.org,2002:str"
TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
MERGE_TAG = "tag:yaml.org,2002:merge"
MAP_TAG = "tag:yaml.org,2002:map"
BOOL_TAG = "tag:yaml.org,2002:bool"
SEQ_TAG = "tag:yaml.org,2002:seq"


class _Scalars(yaml.constructor.SafeConstructor):
    """Builds non-string scalars the way Heat's loader does (timestamps as str)."""


_Scalars.add_constructor(TIMESTAMP_TAG, _Scalars.construct_yaml_str)  # type: ignore[type-var]
SCALARS = _Scalars()
IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
STANDARD_TAGS = frozenset(
    "tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "null", "timestamp")
)


def json_key(key: Any) -> str:
    """The string ``json.dumps`` would make of a mapping key."""
    if isinstance(key, str):
        return key
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, float):
        return json.dumps(key)
    return str(key)


def resolve_tag(event: Any) -> str:
    """YAML 1.1 implicit typing, as PyYAML's resolver does it, without its
    per-scalar Python overhead (which dominates composing large templates)."""
    tag: str | None = event.tag
    if tag is not None and tag != "!":
        return tag
    if tag == "!" or not event.implicit[0]:
        return STR_TAG
    value: str = event.value
    for candidate, regexp in IMPLICIT.get(value[:1] if value else "", ()):
        if regexp.match(value):
            return str(candidate)
    return STR_TAG


MAYBE_TYPED = frozenset(IMPLICIT)


def construct(event: Any, tag: str) -> Any:
    """A scalar of a standard, non-string tag, as Heat's loader builds it;
    :class:`ValueError` with a message for people when it cannot be read.

    The tag's constructor is called directly: ``construct_object`` would keep
    every node it ever built in the one constructor this module shares.
    """
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark)
    try:
        value = _Scalars.yaml_constructors[tag](SCALARS, node)
        if value.__class__ is int:  # hex, octal and base 60 read past Python's digit limit,
            str(value)  # so fail now rather than when something prints the number
    except (ValueError, IndexError, KeyError):  # !!int abc, !!float "", !!bool x, 9 * 5000
        text: str = event.value
        shown = repr(text) if len(text) <= 20 else f"{text[:20]!r}... ({len(text)} characters)"
        raise ValueError(f"{shown} cannot be read as a YAML {tag.rpartition(':')[2]}") from None
    return value


def plain_str(value: str) -> bool:
    """True when no implicit resolver could claim this plain scalar."""
    return bool(value) and value[0] not in MAYBE_TYPED
