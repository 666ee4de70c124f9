"""Errors that cross module boundaries.

::

    ConvectionError
    ├── InvalidInput          user input is wrong; carries Diagnostics
    │   └── LimitExceeded     a size, depth or count limit was hit
    ├── NotFound              a named stack, resource or file does not exist
    ├── Conflict              the operation is not legal in the current state
    └── ExpressionError       a function failed while being evaluated

Every error is safe to show a user: messages never contain secrets, and the
CLI prints them without a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable

from convection.diagnostics import Diagnostic
from convection.types import Path, format_path


class ConvectionError(Exception):
    """Base of every error Convection raises on purpose."""


class InvalidInput(ConvectionError):
    """User input is invalid; ``diagnostics`` lists every problem found."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = [d for d in diagnostics if d.is_error]
        first = str(self.diagnostics[0]) if self.diagnostics else "invalid input"
        more = len(self.diagnostics) - 1
        super().__init__(first + (f" (and {more} more)" if more > 0 else ""))

    @classmethod
    def single(cls, message: str, path: Path = ()) -> InvalidInput:
        return cls([Diagnostic(message, path)])


class LimitExceeded(InvalidInput):
    """A configured limit (size, depth, count, cost) was exceeded."""


class NotFound(ConvectionError):
    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"The {kind} ({name}) could not be found.")


class Conflict(ConvectionError):
    """The operation is not legal in the current state."""


class ExpressionError(ConvectionError):
    """An intrinsic function failed while being evaluated.

    ``path`` locates the function call in the template.
    """

    def __init__(self, message: str, path: Path = ()) -> None:
        self.message = message
        self.path = path
        where = format_path(path)
        super().__init__(f"{where}: {message}" if where else message)
