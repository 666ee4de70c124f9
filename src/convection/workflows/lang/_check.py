"""Located errors and the value shapes of Mistral's schemas, in plain code.

Mistral validates each spec object with jsonschema (``mistral/lang/types.py``
holds the shapes), which costs about a second per object and stops at the
first error. Here each shape is a small function that reports every
problem at its place and returns whether the value fits, so a caller
builds the spec only from values that do. Messages keep jsonschema's
phrases (what a Mistral user searches for) and then say what was expected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from convection.common import Diagnostic, Diagnostics, Mark, Path, Severity, suggest
from convection.hot import SourceMap
from convection.workflows.lang.expressions import syntax_errors

#: A whole-value expression, as Mistral's ``types.EXPRESSION``: the string
#: starts with one and ends after one (``.`` stops at a newline there too).
_WHOLE_EXPRESSION: Final = re.compile(r"^(?:{{.*?}}|<%.*?%>)\s*$")

EXPECT_EXPRESSION: Final = "an expression (<% ... %> or {{ ... }})"


class Checker:
    """Where errors go: one document's source map and diagnostics."""

    __slots__ = ("diags", "source")

    def __init__(self, source: SourceMap, diags: Diagnostics) -> None:
        self.source = source
        self.diags = diags

    def mark(self, path: Path) -> Mark | None:
        """The place of ``path``. The document's own place is its start even
        when the source map has no marks (JSON that YAML cannot read)."""
        found = self.source.mark(path)
        return found if found is not None or path else Mark(self.source.file, 1, 1)

    def error(self, message: str, path: Path) -> None:
        self.diags.add(Diagnostic(message, path, self.mark(path)))

    def warning(self, message: str, path: Path) -> None:
        self.diags.add(Diagnostic(message, path, self.mark(path), Severity.WARNING))

    def expressions(self, value: object, path: Path, *, label: str | None = None) -> None:
        """Report each expression in ``value`` whose syntax is wrong. With a
        ``label`` the value has no places of its own (inline parameters):
        errors name ``path`` and say which part."""
        for where, message in syntax_errors(value):
            if label is None:
                self.error(message, (*path, *where))
            else:
                self.error(f"{label}: {message}", path)

    def unknown_keys(
        self, data: Mapping[str, Any], allowed: Iterable[str], path: Path, what: str
    ) -> None:
        """jsonschema's ``additionalProperties: False``, every key at once."""
        known = tuple(allowed)
        for key in data:
            if key not in known:
                self.error(
                    f"Additional properties are not allowed ({key!r} was unexpected): "
                    f"{what} takes {', '.join(known)}{suggest(key, known)}",
                    (*path, key),
                )


def show(value: object) -> str:
    """A value as jsonschema names it in a message (Python's repr: ``None``,
    ``'text'``), cut to a readable size."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_expression(value: object) -> bool:
    return isinstance(value, str) and _WHOLE_EXPRESSION.match(value) is not None


def is_count(value: object) -> bool:
    """``types.POSITIVE_INTEGER``: an integer from 0 (not a bool, not 1.0)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def nonempty_string(ck: Checker, value: object, path: Path) -> bool:
    if isinstance(value, str) and value:
        return True
    if value == "":
        ck.error("'' is too short: expected a non-empty string", path)
    else:
        ck.error(f"{show(value)} is not of type 'string': expected a non-empty string", path)
    return False


def nonempty_mapping(ck: Checker, value: object, path: Path) -> bool:
    """``types.NONEMPTY_DICT``."""
    if isinstance(value, dict) and value:
        return True
    if isinstance(value, dict):
        ck.error("{} does not have enough properties: expected a non-empty mapping", path)
    else:
        ck.error(f"{show(value)} is not of type 'object': expected a non-empty mapping", path)
    return False


def unique_strings(ck: Checker, value: object, path: Path) -> bool:
    """``types.UNIQUE_STRING_LIST``: a non-empty list of distinct,
    non-empty strings."""
    if not isinstance(value, list):
        ck.error(f"{show(value)} is not of type 'array': expected a list of strings", path)
        return False
    if not value:
        ck.error("[] is too short: expected at least one string", path)
        return False
    ok = all([nonempty_string(ck, item, (*path, i)) for i, item in enumerate(value)])
    return ok and distinct(ck, value, path)


def string_or_strings(ck: Checker, value: object, path: Path) -> tuple[str, ...] | None:
    """A non-empty string or a ``UNIQUE_STRING_LIST``, as a tuple."""
    if isinstance(value, str):
        return (value,) if nonempty_string(ck, value, path) else None
    if isinstance(value, list):
        return tuple(value) if unique_strings(ck, value, path) else None
    ck.error(
        f"{show(value)} is not valid under any of the given schemas: "
        "expected a string or a list of strings",
        path,
    )
    return None


def distinct(ck: Checker, items: list[Any], path: Path) -> bool:
    """jsonschema's ``uniqueItems``, in linear time: items are compared by
    their JSON text, so ``{"a": 1}`` twice is a repeat."""
    seen: dict[str, int] = {}
    ok = True
    for i, item in enumerate(items):
        key = "s" + item if isinstance(item, str) else json.dumps(item, sort_keys=True, default=str)
        if key in seen:
            ck.error(
                f"{show(items)} has non-unique elements: item {i} repeats item {seen[key]}",
                (*path, i),
            )
            ok = False
        else:
            seen[key] = i
    return ok


def expression_or_count(ck: Checker, value: object, path: Path) -> bool:
    """``types.EXPRESSION_OR_POSITIVE_INTEGER``."""
    if is_count(value) or is_expression(value):
        return True
    ck.error(
        f"{show(value)} is not valid under any of the given schemas: "
        f"expected an integer from 0 or {EXPECT_EXPRESSION}",
        path,
    )
    return False


def expression_or_bool(ck: Checker, value: object, path: Path) -> bool:
    """``types.EXPRESSION_OR_BOOLEAN``: ``'False'`` is neither."""
    if isinstance(value, bool) or is_expression(value):
        return True
    ck.error(
        f"{show(value)} is not valid under any of the given schemas: "
        f"expected true, false or {EXPECT_EXPRESSION}",
        path,
    )
    return False


def expression(ck: Checker, value: object, path: Path) -> bool:
    """``types.EXPRESSION``."""
    if is_expression(value):
        return True
    ck.error(
        f"{show(value)} is not valid under any of the given schemas: expected {EXPECT_EXPRESSION}",
        path,
    )
    return False
