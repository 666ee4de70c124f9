"""The loader's fast pass: a document's data from libyaml's events, without
source marks.

Kept apart from :mod:`convection.hot.loader`, whose marking builder remains
the one place that warns and reports; this pass hands it anything it would
say something about.
"""

from __future__ import annotations

from typing import Any

import yaml

from convection.common import Limits
from convection.hot._yaml_scalars import (
    MAP_TAG,
    SEQ_TAG,
    STANDARD_TAGS,
    STR_TAG,
    construct,
    plain_str,
    resolve_tag,
)

_ScalarEvent = yaml.ScalarEvent
_AliasEvent = yaml.AliasEvent
_MappingStartEvent = yaml.MappingStartEvent
_MappingEndEvent = yaml.MappingEndEvent
_SequenceStartEvent = yaml.SequenceStartEvent
_SequenceEndEvent = yaml.SequenceEndEvent


class NeedsBuilder(Exception):
    """The fast pass met something only the loader's marking builder handles."""


#: What an open container waits for in the fast pass: a mapping's next key,
#: or a sequence's next item. A mapping waiting for a value holds its key.
_KEY = object()
_ITEM = object()
_COLLECTION_TAGS = frozenset({None, "!", MAP_TAG, SEQ_TAG})


def _is_string(event: Any) -> bool:
    if event.implicit[0] and event.tag is None and plain_str(event.value):
        return True
    return resolve_tag(event) == STR_TAG


def _plain_scalar(event: Any) -> Any:
    tag = resolve_tag(event)
    if tag == STR_TAG:
        return event.value
    if tag not in STANDARD_TAGS:
        raise NeedsBuilder
    try:
        return construct(event, tag)
    except (yaml.YAMLError, ValueError):
        raise NeedsBuilder from None


def plain_data(parser: Any, limits: Limits) -> Any:
    """The data of a document in the part of YAML templates use, without marks.

    This builds what the loader's marking builder builds, without its
    bookkeeping of paths and marks for every node, and hands everything else
    to it by raising :class:`NeedsBuilder`: anchors and aliases, merge keys,
    explicit tags, keys that are not strings, duplicate keys, a second
    document, excessive depth and every error. So the builder stays the one
    place that warns and reports, and anything it would say sends a document
    to it.
    """
    get_event = parser.get_event
    containers: list[Any] = []
    waiting: list[Any] = []  # per open container: _KEY, _ITEM or a pending key
    root: Any = None
    documents = 0
    while True:
        event = get_event()
        cls = event.__class__
        if cls is _ScalarEvent:
            if event.anchor is not None:
                raise NeedsBuilder
            if waiting and waiting[-1] is _KEY:
                key = event.value
                if not _is_string(event) or key in containers[-1]:
                    raise NeedsBuilder  # typed and duplicate keys are warned about
                waiting[-1] = key
                continue
            if event.implicit[0] and event.tag is None and plain_str(event.value):
                value = event.value  # the common case, without resolving
            else:
                value = _plain_scalar(event)
        elif cls is _MappingEndEvent or cls is _SequenceEndEvent:
            waiting.pop()
            value = containers.pop()
        elif cls is _MappingStartEvent or cls is _SequenceStartEvent:
            if (
                event.anchor is not None
                or event.tag not in _COLLECTION_TAGS
                or (waiting and waiting[-1] is _KEY)
                or len(containers) >= limits.max_document_depth
            ):
                raise NeedsBuilder
            mapping = cls is _MappingStartEvent
            containers.append({} if mapping else [])
            waiting.append(_KEY if mapping else _ITEM)
            continue
        elif cls is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise NeedsBuilder
            continue
        elif cls is yaml.StreamEndEvent:
            return root
        elif cls is _AliasEvent:
            raise NeedsBuilder
        else:  # stream start, document end
            continue
        if not containers:
            root = value
        elif waiting[-1] is _ITEM:
            containers[-1].append(value)
        else:
            containers[-1][waiting[-1]] = value
            waiting[-1] = _KEY
