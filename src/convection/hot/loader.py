"""Text (YAML or JSON) to plain data plus a source map.

The data is exactly what Heat would see: Heat's API carries templates as JSON,
so YAML timestamps stay strings (``heat_template_version: 2016-10-14``) and
non-string mapping keys become the strings ``json.dumps`` would make. The
source map remembers where every mapping entry and list item starts, so every
later phase can say ``file:line:column`` for a document path.

A duplicate key keeps the last value, as Heat does, but is reported as a
warning naming both places: Heat's silence here hides real mistakes.

Two passes share the work. A fast one (:mod:`convection.hot._yaml_fast`)
builds the data of the documents templates usually are (plain scalars and
collections) without recording a place for every node; the marking builder
here handles everything else (anchors, merge keys, tags, warnings, errors)
and, for a document the fast pass built, runs only when a diagnostic first
asks where something is. Aliases count as the nodes they stand for, so a
document cannot grow past the size limit through them (every later phase
walks shared data once per path to it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from convection.common import (
    DEFAULT_LIMITS,
    JSON,
    Diagnostic,
    Diagnostics,
    InvalidInput,
    LimitExceeded,
    Limits,
    Mark,
    Path,
    collector_paused,
)
from convection.hot._yaml_fast import NeedsBuilder, plain_data
from convection.hot._yaml_scalars import (
    BOOL_TAG,
    MAP_TAG,
    MERGE_TAG,
    SEQ_TAG,
    STANDARD_TAGS,
    STR_TAG,
    construct,
    json_key,
    plain_str,
    resolve_tag,
)

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_ScalarEvent = yaml.ScalarEvent
_AliasEvent = yaml.AliasEvent
_MappingStartEvent = yaml.MappingStartEvent
_MappingEndEvent = yaml.MappingEndEvent
_SequenceStartEvent = yaml.SequenceStartEvent
_SequenceEndEvent = yaml.SequenceEndEvent


class SourceMap:
    """Where each document path starts in its file.

    Lookups fall back to the nearest recorded ancestor, so a path produced by a
    later phase (``resources.web.properties.image``) still finds a line even
    when it names something the file never spelled out.

    A valid document never needs a mark, so :func:`load` usually keeps the
    text instead and finds the marks, in a second pass over it, the first
    time one is asked for.
    """

    __slots__ = ("_limits", "_marks", "_text", "file")

    def __init__(
        self,
        file: str,
        marks: dict[Path, tuple[int, int]] | None = None,
        *,
        text: str | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.file = file
        self._marks = {} if marks is None and text is None else marks
        self._text = text
        self._limits = limits

    @property
    def marks(self) -> dict[Path, tuple[int, int]]:
        """path -> (line, column), both from 1; Mark objects are made on lookup."""
        if self._marks is None:
            self._marks = _marks_of(self._text or "", self.file, self._limits)
            self._text = None
        return self._marks

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceMap):
            return NotImplemented
        return self.file == other.file and self.marks == other.marks

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        found = "not read yet" if self._marks is None else f"{len(self._marks)} marks"
        return f"<SourceMap {self.file!r}: {found}>"

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


class _Frame:
    """A mapping or sequence under construction."""

    __slots__ = ("anchor", "first", "key", "merges", "path", "start", "value")

    def __init__(self, value: Any, path: Path, anchor: str | None, start: int) -> None:
        self.value = value
        self.path = path
        self.anchor = anchor
        self.start = start  # the builder's node count before this one
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
        #: Nodes so far, counting each alias as the nodes it stands for, and
        #: that count for each anchor: aliases share data, but every later
        #: walk over the document (parsing functions, JSON for the store)
        #: visits a shared node once per path to it.
        self.nodes = 0
        self.sizes: dict[str, int] = {}

    def mark(self, event: Any) -> Mark:
        m = event.start_mark
        return Mark(self.name, m.line + 1, m.column + 1)

    def fail(self, message: str, path: Path, event: Any) -> InvalidInput:
        return InvalidInput([Diagnostic(message, path, self.mark(event))])

    def scalar(self, event: Any, path: Path) -> Any:
        tag = resolve_tag(event)
        if tag == STR_TAG:
            return event.value
        if tag not in STANDARD_TAGS:
            raise self.fail(f"unsupported YAML tag {tag!r}", path, event)
        try:
            return construct(event, tag)
        except (yaml.YAMLError, ValueError) as exc:
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
                if event.implicit[0] and event.tag is None and plain_str(event.value):
                    value = event.value  # the common case, without resolving
                else:
                    value = self.scalar(event, self.child_path(parent))
                self.nodes += 1
                if event.anchor:
                    self.anchors[event.anchor] = value
                    self.sizes[event.anchor] = 1
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
                self.expand_alias(event, path)
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

    def expand_alias(self, event: Any, path: Path) -> None:
        """Count an alias as the nodes it stands for. Without aliases a
        document cannot have more nodes than characters, so it may not have
        more than the largest document allowed (the "billion laughs")."""
        self.nodes += self.sizes[event.anchor]
        limit = self.limits.max_template_size
        if self.nodes > limit:
            raise LimitExceeded(
                [
                    Diagnostic(
                        f"aliases expand the document to more than {limit} nodes "
                        "(max_template_size)",
                        path,
                        self.mark(event),
                    )
                ]
            )

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
        if event.tag not in (None, "!", MAP_TAG, SEQ_TAG):
            raise self.fail(f"unsupported YAML tag {event.tag!r}", path, event)
        container: Any = {} if event.__class__ is _MappingStartEvent else []
        if parent is not None and parent.first is None:
            m = event.start_mark
            self.marks[path] = (m.line + 1, m.column + 1)
        self.nodes += 1
        stack.append(_Frame(container, path, event.anchor, self.nodes - 1))

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
        tag = resolve_tag(event)
        key = "<<" if tag == MERGE_TAG else json_key(self.scalar(event, frame.path))
        key_path = (*frame.path, key)
        m = event.start_mark
        here = (m.line + 1, m.column + 1)
        if tag == BOOL_TAG and key != event.value.lower():
            self.diags.warning(
                f"the key {event.value!r} is read as the boolean {key} (YAML 1.1, as in "
                "Heat); quote it if you meant the word",
                key_path,
                Mark(self.name, *here),
            )
        assert frame.first is not None
        if key in frame.first and tag != MERGE_TAG:
            self.diags.warning(
                f"duplicate key {key!r}: the value here replaces the one at "
                f"{Mark(self.name, *frame.first[key])} (Heat keeps the last value)",
                key_path,
                Mark(self.name, *here),
            )
        frame.first[key] = here
        self.marks[key_path] = here
        frame.key = "\0merge" if tag == MERGE_TAG else key

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
            self.sizes[frame.anchor] = self.nodes - frame.start
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


def _marks_of(text: str, name: str, limits: Limits) -> dict[Path, tuple[int, int]]:
    """The marks of a document that has loaded already. JSON that is not also
    YAML flow syntax has none; its data is exact all the same."""
    builder = _Builder(name, limits)
    try:
        builder.run(_Loader(text))
    except (InvalidInput, yaml.YAMLError):
        return {}
    return builder.marks


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.split("\n", line + 1)
    return lines[line][column : column + 1] if line < len(lines) else ""


def _reader_error(exc: yaml.reader.ReaderError, name: str, text: str) -> Diagnostic:
    """A character YAML refuses (a control character), at its line and column.

    libyaml counts the position in UTF-8 bytes, the pure-Python reader in
    characters; both agree on ASCII text, and the bytes are decoded back
    either way (a partial character at the cut is dropped)."""
    position = max(0, int(exc.position))
    before = text.encode("utf-8")[:position].decode("utf-8", "ignore")
    if _Loader is yaml.SafeLoader:
        before = text[:position]
    line = before.count("\n")
    column = len(before) - (before.rfind("\n") + 1)
    character = exc.character
    shown = f"#x{character:04x}" if isinstance(character, int) else repr(character)
    message = f"Error parsing template {name} unacceptable character {shown}: {exc.reason}"
    return Diagnostic(message, (), Mark(name, line + 1, column + 1))


def _yaml_error(exc: yaml.YAMLError, name: str, text: str) -> Diagnostic:
    if isinstance(exc, yaml.reader.ReaderError):
        return _reader_error(exc, name, text)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = Mark(name, mark.line + 1, mark.column + 1) if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
        problem = "a tab character is not allowed here; YAML indentation must use spaces"
    context = getattr(exc, "context", None)
    # Heat's template_format.parse: "Error parsing template <url> <error>".
    message = f"Error parsing template {name} {problem}" + (f" ({context})" if context else "")
    return Diagnostic(message, (), where)


def too_deep(data: Any, limit: int) -> Path | None:
    """The path of a container nested ``limit`` levels deep, if there is one.

    YAML documents are refused at that depth while they load; data that
    arrives otherwise (JSON text, JSON parameter values) is checked with
    this, because every later walk over a value recurses once per level.
    """
    pending: list[tuple[Any, Path]] = [(data, ())]
    while pending:
        value, path = pending.pop()
        if len(path) >= limit:
            return path
        if isinstance(value, dict):
            pending.extend((v, (*path, k)) for k, v in value.items() if isinstance(v, dict | list))
        elif isinstance(value, list):
            pending.extend(
                (v, (*path, i)) for i, v in enumerate(value) if isinstance(v, dict | list)
            )
    return None


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
    deep = too_deep(data, limits.max_document_depth)
    if deep is not None:  # as the YAML builder refuses it, before any walk recurses
        message = f"nesting is deeper than {limits.max_document_depth} levels"
        raise LimitExceeded([Diagnostic(message, deep, None)])
    if not duplicates:  # the usual case: marks only if a diagnostic needs them
        return Document(name, dict(data), SourceMap(name, text=text, limits=limits))
    # JSON is (almost always) valid YAML flow syntax, so compose it again to
    # locate the duplicates; when that fails the data is still exact.
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
    """Most documents load in the fast pass and find their marks only when a
    diagnostic needs one; the rest go through the builder, marks and all."""
    builder: _Builder | None = None
    try:
        try:
            data = plain_data(_Loader(text), limits)
        except NeedsBuilder:
            builder = _Builder(name, limits)
            data = builder.run(_Loader(text))
    except yaml.YAMLError as exc:
        raise InvalidInput([_yaml_error(exc, name, text)]) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidInput(
            [Diagnostic("The template is not a JSON object or YAML mapping.", (), Mark(name, 1, 1))]
        )
    if builder is None:
        return Document(name, data, SourceMap(name, text=text, limits=limits))
    return Document(name, data, SourceMap(name, builder.marks), tuple(builder.diags.warnings))


def _utf8_size(text: str, name: str) -> int:
    """The text's size in UTF-8; a lone surrogate (a JSON string's ``\\ud800``
    escape decodes to one) is not text YAML can read."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        before = text[: exc.start]
        line, column = before.count("\n") + 1, exc.start - before.rfind("\n")
        message = (
            f"the file is not UTF-8 text (an unpaired surrogate, U+{ord(text[exc.start]):04X})"
        )
        raise InvalidInput([Diagnostic(message, (), Mark(name, line, column))]) from None


def load(
    text: str | bytes, name: str = "<template>", *, limits: Limits = DEFAULT_LIMITS
) -> Document:
    """Load one template or environment file.

    Raises :class:`InvalidInput` with located diagnostics; never a parser
    traceback.
    """
    # Heat's limit is on the bytes sent: a character outside ASCII counts
    # as its UTF-8 length, so 512 KiB of text never holds 2 MiB of data.
    size = len(text) if isinstance(text, bytes) or text.isascii() else _utf8_size(text, name)
    if size > limits.max_template_size:
        raise LimitExceeded(
            [
                Diagnostic(
                    f"Template size ({size} bytes) exceeds maximum allowed size "
                    f"({limits.max_template_size} bytes).",
                    (),
                    Mark(name, 1, 1),
                )
            ]
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                [Diagnostic(f"the file is not UTF-8 text (byte {exc.start})", (), Mark(name, 1, 1))]
            ) from None
    with collector_paused():  # building data makes no cycles: see convection.common.gc
        doc = _json_document(text, name, limits)
        return doc if doc is not None else _yaml_document(text, name, limits)
