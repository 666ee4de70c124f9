"""What the compiles of one group's members share.

A ResourceGroup's 1,000 members are compiled one by one from the same
template, environment and files, differing only in their parameter values
(``%index%``) and their identity (stack name and id). Parsing the template
is the same work every time, and so is building the definition unless a
parameter value it depends on differs. A definition depends on parameter
*values* only through its conditions (``build_definition``'s ``read``),
so the compiler records which values those read; a member whose recorded
values are equal reuses the definition and graph, with its own
environment and :class:`ParameterValues` (pseudo-parameters included) put
in. A condition that reads ``OS::stack_name`` therefore keys its variant
on that member's name, and nothing of one stack's identity reaches another.
Property values are read too, to check them (``convection.model._values``),
but they change diagnostics only, never the definition: a variant names the
resources whose checks read a parameter, and a member reusing it checks
those again with its own values.

Entries are matched by content: the template document (the engine's hub
hands out one document per template text, so equal texts are the same
object, kept alive here), the environment documents, the files, and the
catalog, mode (strictness, and whether values are checked) and limits.
The cache is small and owned by its caller (the engine's ``NestedHub``),
which drops an owner's entries when the owner's traversal ends.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from convection.common import Diagnostic, Limits
from convection.hot import Document, ParameterValues, Template
from convection.model.definition import StackDefinition, TypeCatalog
from convection.model.graph import Graph

#: Templates remembered at once, and definitions per template (one per
#: distinct set of condition inputs).
_ENTRIES = 4
_VARIANTS = 8
#: A parameter read that raised: such a definition is never shared.
_FAILED = object()


@dataclass(frozen=True, slots=True)
class Variant:
    """A definition and what it was built from: the values its conditions
    read (name, canonical JSON), its graph and its diagnostics, and the
    resources whose value checks read a parameter."""

    used: tuple[tuple[str, str], ...]
    definition: StackDefinition
    graph: Graph
    diagnostics: tuple[Diagnostic, ...]
    valued: frozenset[str] = frozenset()

    def fits(self, params: ParameterValues) -> bool:
        try:
            return all(_canonical(params.value(n)) == v for n, v in self.used)
        except Exception:  # a value that cannot be read: build afresh
            return False


@dataclass(slots=True)
class Entry:
    """One template's parse and the definitions built from it."""

    owner: str
    template_doc: Document
    environments: tuple[Document, ...]
    files: Mapping[str, str]
    catalog: TypeCatalog | None
    #: (strict, values): ``compile_stack``'s two switches.
    mode: tuple[bool, bool]
    limits: Limits
    template: Template
    diagnostics: tuple[Diagnostic, ...]
    variants: list[Variant] = field(default_factory=list)

    def matches(
        self,
        doc: Document,
        environments: tuple[Document, ...],
        files: Mapping[str, str],
        catalog: TypeCatalog | None,
        mode: tuple[bool, bool],
        limits: Limits,
    ) -> bool:
        return (
            self.template_doc is doc
            and self.mode == mode
            and self.catalog == catalog
            and self.limits == limits
            and _same_documents(self.environments, environments)
            and self.files == files
        )

    def variant(self, params: ParameterValues) -> Variant | None:
        return next((v for v in self.variants if v.fits(params)), None)

    def add(self, variant: Variant) -> None:
        self.variants.append(variant)
        del self.variants[:-_VARIANTS]


class Recorder:
    """A parameter reader that notes what it read (``build_definition``)."""

    __slots__ = ("_params", "read")

    def __init__(self, params: ParameterValues) -> None:
        self._params = params
        self.read: dict[str, object] = {}

    def __call__(self, name: str) -> Any:
        try:
            value = self._params.value(name)
        except BaseException:
            self.read[name] = _FAILED
            raise
        self.read.setdefault(name, _canonical(value))
        return value

    def used(self) -> tuple[tuple[str, str], ...] | None:
        """The reads as a key, or None when one failed (not shareable)."""
        pairs = []
        for name, value in self.read.items():
            if not isinstance(value, str):
                return None
            pairs.append((name, value))
        return tuple(pairs)


class MemberCompiles:
    """The shared parses and definitions, a few templates at a time, each
    tagged with the stack whose traversal compiles its members."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: list[Entry] = []

    def __len__(self) -> int:
        return len(self._entries)

    def find(
        self,
        doc: Document,
        environments: tuple[Document, ...],
        files: Mapping[str, str],
        catalog: TypeCatalog | None,
        mode: tuple[bool, bool],
        limits: Limits,
    ) -> Entry | None:
        for entry in self._entries:
            if entry.matches(doc, environments, files, catalog, mode, limits):
                return entry
        return None

    def add(self, entry: Entry) -> None:
        self._entries.append(entry)
        del self._entries[:-_ENTRIES]

    def forget(self, owner: str) -> None:
        """Drop what ``owner``'s members shared: its operation ended."""
        self._entries = [e for e in self._entries if e.owner != owner]


def _canonical(value: Any) -> str:
    """Equal JSON, equal string (``True`` and ``1`` differ, unlike ==)."""
    return json.dumps(value, sort_keys=True, default=repr)


def _same_documents(new: tuple[Document, ...], old: tuple[Document, ...]) -> bool:
    return len(new) == len(old) and all(
        a is b or (a.name == b.name and a.data == b.data and a.warnings == b.warnings)
        for a, b in zip(new, old, strict=True)
    )
