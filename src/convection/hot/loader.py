"""Text (YAML or JSON) to plain data plus a source map.

The data is exactly what Heat would see: Heat's API carries templates as JSON,
so YAML timestamps stay strings (``heat_template_version: 2016-10-14``) and
non-string mapping keys become the strings ``json.dumps`` would make. The
source map remembers where every mapping entry and list item starts, so every
later phase can say ``file:line:column`` for a document path.

A duplicate key keeps the last value, as Heat does, but is reported as a
warning naming both places: Heat's silence here hides real mistakes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from convection.diagnostics import Diagnostic, Diagnostics, Mark
from convection.errors import InvalidInput, LimitExceeded
from convection.limits import DEFAULT_LIMITS, Limits
from convection.types import JSON, Path

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_STR_TAG = "tag:yaml.org,2002:str"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_MAP_TAG = "tag:yaml.org,2002:map"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_ScalarEvent = yaml.ScalarEvent
_AliasEvent = yaml.AliasEvent
_MappingStartEvent = yaml.MappingStartEvent
_MappingEndEvent = yaml.MappingEndEvent
_SequenceStartEvent = yaml.SequenceStartEvent
_SequenceEndEvent = yaml.SequenceEndEvent
_SEQ_TAG = "tag:yaml.org,2002:seq"


@dataclass(slots=True)
class SourceMap:
    """Where each document path starts in its file.

    Lookups fall back to the nearest recorded ancestor, so a path produced by a
    later phase (``resources.web.properties.image``) still finds a line even
    when it names something the file never spelled out.
    """

    file: str
    #: path -> (line, column), both from 1; Mark objects are made on lookup,
    #: since a valid document never needs them.
    marks: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def mark(self, path: Path) -> Mark | None:
        for end in range(len(path), -1, -1):
            found = self.marks.get(path[:end])
            if found is not None:
                return Mark(self.file, found[0], found[1])
        return None

    def diagnostic(self, message: str, path: Path) -> Diagnostic:
        return Diagnostic(message, path, self.mark(path))


@dataclass(frozen=True, slots=True)
class Document:
    """A loaded file: its data, where each part came from, and load warnings."""

    name: str
    data: dict[str, JSON]
    source: SourceMap
    warnings: tuple[Diagnostic, ...] = ()


class _Scalars(yaml.constructor.SafeConstructor):
    """Builds non-string scalars the way Heat's loader does (timestamps as str)."""


_Scalars.add_constructor(_TIMESTAMP_TAG, _Scalars.construct_yaml_str)  # type: ignore[type-var]
_SCALARS = _Scalars()
_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
_STANDARD_TAGS = frozenset(
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


def _resolve_tag(event: Any) -> str:
    """YAML 1.1 implicit typing, as PyYAML's resolver does it, without its
    per-scalar Python overhead (which dominates composing large templates)."""
    tag: str | None = event.tag
    if tag is not None and tag != "!":
        return tag
    if tag == "!" or not event.implicit[0]:
        return _STR_TAG
    value: str = event.value
    for candidate, regexp in _IMPLICIT.get(value[:1] if value else "", ()):
        if regexp.match(value):
            return str(candidate)
    return _STR_TAG


_MAYBE_TYPED = frozenset(_IMPLICIT)


def _plain_str(value: str) -> bool:
    """True when no implicit resolver could claim this plain scalar."""
    return bool(value) and value[0] not in _MAYBE_TYPED


class _Frame:
    """A mapping or sequence under construction."""

    __slots__ = ("anchor", "first", "key", "merges", "path", "value")

    def __init__(self, value: Any, path: Path, anchor: str | None) -> None:
        self.value = value
        self.path = path
        self.anchor = anchor
        self.key: str | None = None  # pending mapping key
        self.first: dict[str, tuple[int, int]] | None = {} if isinstance(value, dict) else None
        self.merges: list[Any] = []


class _Builder:
    """One pass over libyaml's event stream: data and source marks together."""

    def __init__(self, name: str, limits: Limits) -> None:
        self.name = name
        self.limits = limits
        self.marks: dict[Path, tuple[int, int]] = {(): (1, 1)}
        self.diags = Diagnostics()
        self.anchors: dict[str, Any] = {}

    def mark(self, event: Any) -> Mark:
        m = event.start_mark
        return Mark(self.name, m.line + 1, m.column + 1)

    def fail(self, message: str, path: Path, event: Any) -> InvalidInput:
        return InvalidInput([Diagnostic(message, path, self.mark(event))])

    def scalar(self, event: Any, path: Path) -> Any:
        tag = _resolve_tag(event)
        if tag == _STR_TAG:
            return event.value
        if tag not in _STANDARD_TAGS:
            raise self.fail(f"unsupported YAML tag {tag!r}", path, event)
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark)
        try:
            return _SCALARS.construct_object(node)  # type: ignore[no-untyped-call]
        except yaml.YAMLError as exc:
            raise self.fail(str(exc).split("\n")[0], path, event) from None

    def run(self, parser: Any) -> Any:
        # Dispatch on the exact event class: this loop sees every node of the
        # document, and isinstance chains were its largest cost.
        stack: list[_Frame] = []
        root: Any = None
        documents = 0
        get_event = parser.get_event
        while True:
            event = get_event()
            cls = event.__class__
            parent = stack[-1] if stack else None
            if cls is _ScalarEvent:
                if parent is not None and parent.first is not None and parent.key is None:
                    self.take_key(parent, event)
                    continue
                if event.implicit[0] and event.tag is None and _plain_str(event.value):
                    value = event.value  # the common case, without resolving
                else:
                    value = self.scalar(event, self.child_path(parent))
                if event.anchor:
                    self.anchors[event.anchor] = value
            elif cls is _MappingEndEvent or cls is _SequenceEndEvent:
                frame = stack.pop()
                value = self.close(frame)
                if not stack:
                    root = value
                else:
                    self.attach(stack[-1], value, event, closing=True)
                continue
            elif cls is _MappingStartEvent or cls is _SequenceStartEvent:
                if parent is not None and parent.first is not None and parent.key is None:
                    raise self.fail("mapping keys must be scalars", parent.path, event)
                self.open(stack, parent, event)
                continue
            elif cls is _AliasEvent:
                if parent is not None and parent.first is not None and parent.key is None:
                    raise self.fail("aliases cannot be mapping keys", parent.path, event)
                path = self.child_path(parent)
                if event.anchor not in self.anchors:
                    raise self.fail(f"unknown alias {event.anchor!r}", path, event)
                value = self.anchors[event.anchor]
            elif cls is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise self.fail("expected a single document, found another", (), event)
                continue
            elif cls is yaml.StreamEndEvent:
                return root
            else:  # stream start, document end
                continue
            if parent is None:
                root = value
            else:
                self.attach(parent, value, event, closing=False)

    def open(self, stack: list[_Frame], parent: _Frame | None, event: Any) -> None:
        path = self.child_path(parent)
        if len(stack) >= self.limits.max_document_depth:
            raise LimitExceeded(
                [
                    Diagnostic(
                        f"nesting is deeper than {self.limits.max_document_depth} levels",
                        path,
                        self.mark(event),
                    )
                ]
            )
        if event.tag not in (None, "!", _MAP_TAG, _SEQ_TAG):
            raise self.fail(f"unsupported YAML tag {event.tag!r}", path, event)
        container: Any = {} if event.__class__ is _MappingStartEvent else []
        if parent is not None and parent.first is None:
            m = event.start_mark
            self.marks[path] = (m.line + 1, m.column + 1)
        stack.append(_Frame(container, path, event.anchor))

    @staticmethod
    def child_path(parent: _Frame | None) -> Path:
        if parent is None:
            return ()
        if parent.first is None:
            return (*parent.path, len(parent.value))
        assert parent.key is not None
        return (*parent.path, parent.key)

    def take_key(self, frame: _Frame, event: Any) -> None:
        if not isinstance(event, yaml.ScalarEvent):
            raise self.fail("mapping keys must be scalars", frame.path, event)
        tag = _resolve_tag(event)
        key = "<<" if tag == _MERGE_TAG else json_key(self.scalar(event, frame.path))
        key_path = (*frame.path, key)
        m = event.start_mark
        here = (m.line + 1, m.column + 1)
        if tag == _BOOL_TAG and key != event.value.lower():
            self.diags.warning(
                f"the key {event.value!r} is read as the boolean {key} (YAML 1.1, as in "
                "Heat); quote it if you meant the word",
                key_path,
                Mark(self.name, *here),
            )
        assert frame.first is not None
        if key in frame.first and tag != _MERGE_TAG:
            self.diags.warning(
                f"duplicate key {key!r}: the value here replaces the one at "
                f"{Mark(self.name, *frame.first[key])} (Heat keeps the last value)",
                key_path,
                Mark(self.name, *here),
            )
        frame.first[key] = here
        self.marks[key_path] = here
        frame.key = "\0merge" if tag == _MERGE_TAG else key

    def attach(self, frame: _Frame, value: Any, event: Any, *, closing: bool) -> None:
        if frame.first is None:
            if not closing:
                m = event.start_mark
                self.marks[(*frame.path, len(frame.value))] = (m.line + 1, m.column + 1)
            frame.value.append(value)
            return
        if frame.key == "\0merge":
            frame.merges.append(value)
        else:
            frame.value[frame.key] = value
        frame.key = None

    def close(self, frame: _Frame) -> Any:
        value = frame.value
        if frame.merges:
            value = self.merged(frame)
        if frame.anchor:
            self.anchors[frame.anchor] = value
        return value

    def merged(self, frame: _Frame) -> dict[str, Any]:
        """YAML merge keys: explicit keys win, then earlier merged maps."""
        sources: list[dict[str, Any]] = []
        for merge in frame.merges:
            items = merge if isinstance(merge, list) else [merge]
            for item in items:
                if not isinstance(item, dict):
                    raise InvalidInput(
                        [
                            Diagnostic(
                                "a merge key (<<) needs a mapping or a list of mappings",
                                frame.path,
                                None,
                            )
                        ]
                    )
                sources.append(item)
        out: dict[str, Any] = {}
        for source in reversed(sources):
            out.update(source)
        explicit: dict[str, Any] = frame.value
        out.update(explicit)
        explicit.clear()
        explicit.update(out)  # same object: aliases taken inside stay valid
        return explicit


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.split("\n", line + 1)
    return lines[line][column : column + 1] if line < len(lines) else ""


def _yaml_error(exc: yaml.YAMLError, name: str, text: str) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = Mark(name, mark.line + 1, mark.column + 1) if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
        problem = "a tab character is not allowed here; YAML indentation must use spaces"
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return Diagnostic(message, (), where)


def _json_document(text: str, name: str, limits: Limits) -> Document | None:
    """Parse as JSON first, as Heat does; ``None`` when it is not JSON."""
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                duplicates.append(k)
            out[k] = v
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return None
    except RecursionError:
        raise LimitExceeded(
            [Diagnostic("the JSON document is nested too deeply", (), Mark(name, 1, 1))]
        ) from None
    if not isinstance(data, Mapping):
        raise InvalidInput(
            [
                Diagnostic(
                    "The template is not a JSON object or YAML mapping.",
                    (),
                    Mark(name, 1, 1),
                )
            ]
        )
    # JSON is (almost always) valid YAML flow syntax, so compose it again only
    # to learn where things are; when that fails the data is still exact.
    try:
        marked = _yaml_document(text, name, limits)
        source, warnings = marked.source, marked.warnings
    except InvalidInput:
        source, warnings = (
            SourceMap(name),
            tuple(
                Diagnostic(f"duplicate key {k!r}: Heat keeps the last value", (), None)
                for k in duplicates
            ),
        )
    return Document(name, dict(data), source, warnings)


def _yaml_document(text: str, name: str, limits: Limits) -> Document:
    builder = _Builder(name, limits)
    try:
        data = builder.run(_Loader(text))
    except yaml.YAMLError as exc:
        raise InvalidInput([_yaml_error(exc, name, text)]) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidInput(
            [Diagnostic("The template is not a JSON object or YAML mapping.", (), Mark(name, 1, 1))]
        )
    return Document(name, data, SourceMap(name, builder.marks), tuple(builder.diags.warnings))


def load(
    text: str | bytes, name: str = "<template>", *, limits: Limits = DEFAULT_LIMITS
) -> Document:
    """Load one template or environment file.

    Raises :class:`InvalidInput` with located diagnostics; never a parser
    traceback.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                [Diagnostic(f"the file is not UTF-8 text (byte {exc.start})", (), Mark(name, 1, 1))]
            ) from None
    if len(text) > limits.max_template_size:
        raise LimitExceeded(
            [
                Diagnostic(
                    f"Template size ({len(text)} bytes) exceeds maximum allowed size "
                    f"({limits.max_template_size} bytes).",
                    (),
                    Mark(name, 1, 1),
                )
            ]
        )
    doc = _json_document(text, name, limits)
    if doc is not None:
        return doc
    return _yaml_document(text, name, limits)
