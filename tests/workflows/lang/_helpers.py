"""Shared by the language tests: errors as ``line:column path: message``."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from convection.common import Diagnostics, format_path

FIXTURES = Path(__file__).parent / "fixtures"

Parser = Callable[..., tuple[Any, Diagnostics]]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def located(diags: Diagnostics, *, warnings: bool = False) -> list[str]:
    """Each error (or warning) as ``line:column path: message``."""
    chosen = diags.warnings if warnings else diags.errors
    out = []
    for d in chosen:
        where = f"{d.mark.line}:{d.mark.column}" if d.mark else "?"
        out.append(f"{where} {format_path(d.path)}: {d.message}")
    return out


def errors(parse: Parser, text: str, name: str = "wf.yaml") -> list[str]:
    result, diags = parse(textwrap.dedent(text), name)
    if diags.has_errors:
        assert not result, "specs must be empty when there are errors"
    return located(diags)


def one_error(parse: Parser, text: str, where: str, path: str, phrase: str) -> str:
    """The document has exactly one error, at ``where`` (line:column) and
    ``path``, whose message holds ``phrase``."""
    found = errors(parse, text)
    assert len(found) == 1, found
    head = f"{where} {path}: "
    assert found[0].startswith(head), found
    assert phrase in found[0][len(head) :], found
    return found[0]
