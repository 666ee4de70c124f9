"""Problems found in user input, as values.

Template, environment and parameter problems are not exceptions: every phase
collects :class:`Diagnostic` values so that a user sees *all* of them at once,
each with the place (``file:line:column`` and the document path) and what was
expected. Exceptions are kept for bugs and I/O.

A diagnostic caused by an earlier one (for example a reference to a resource
whose definition was invalid) is marked ``upstream`` and is not shown again.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from convection.common.types import Path, format_path


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Mark:
    """A place in a source file; line and column count from 1.

    ``spelled`` is the path as the file spells it, when that differs from
    the path the engine uses (a CloudFormation template's ``Resources`` is
    HOT's ``resources``): that is what the user should read.
    """

    file: str
    line: int
    column: int
    spelled: Path | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    message: str
    path: Path = ()
    mark: Mark | None = None
    severity: Severity = Severity.ERROR
    upstream: bool = False

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def shown_path(self) -> Path:
        """The path as the user's file spells it."""
        if self.mark is not None and self.mark.spelled is not None:
            return self.mark.spelled
        return self.path

    def where(self) -> str:
        parts = []
        if self.mark is not None:
            parts.append(str(self.mark))
        if self.path:
            parts.append(format_path(self.shown_path))
        return " ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        prefix = f"{where}: " if where else ""
        label = "" if self.is_error else "warning: "
        return f"{prefix}{label}{self.message}"

    def to_dict(self) -> dict[str, object]:
        return {
            "severity": self.severity.value,
            "message": self.message,
            "path": format_path(self.shown_path),
            "file": self.mark.file if self.mark else None,
            "line": self.mark.line if self.mark else None,
            "column": self.mark.column if self.mark else None,
        }


@dataclass
class Diagnostics:
    """An ordered collection that phases append to and callers read from."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diag: Diagnostic) -> None:
        self.items.append(diag)

    def error(self, message: str, path: Path = (), mark: Mark | None = None) -> None:
        self.items.append(Diagnostic(message, path, mark))

    def warning(self, message: str, path: Path = (), mark: Mark | None = None) -> None:
        self.items.append(Diagnostic(message, path, mark, Severity.WARNING))

    def extend(self, diags: Iterable[Diagnostic]) -> None:
        self.items.extend(diags)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.is_error and not d.upstream]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if not d.is_error]

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.items)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def suggest(name: str, known: Iterable[str]) -> str:
    """`` Did you mean x?`` for a near miss (typos are the usual cause)."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""
