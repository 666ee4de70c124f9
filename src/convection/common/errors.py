"""Errors that cross module boundaries.

::

    ConvectionError
    ├── InvalidInput          user input is wrong; carries Diagnostics
    │   └── LimitExceeded     a size, depth or count limit was hit
    ├── NotFound              a named stack, resource or file does not exist
    │   └── ResourceNotFound  a resource, named with its stack
    ├── Conflict              the operation is not legal in the current state
    │   ├── StackExists       a live stack already has that name
    │   ├── ActionInProgress  the stack (or a hook) is busy with another operation
    │   ├── ResourceNotAvailable  the resource cannot act yet (not created)
    │   └── NotSupported      never legal in this state (Heat answers 400)
    │       └── ResourceActionNotSupported  the resource's type cannot do it
    └── ExpressionError       a function failed while being evaluated

Every error is safe to show a user: messages never contain secrets, and the
CLI prints them without a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable

from convection.common.diagnostics import Diagnostic
from convection.common.types import Path, format_path


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


class ResourceNotFound(NotFound):
    """A resource the stack does not have, in Heat's words for it."""

    def __init__(self, name: str, stack_name: str) -> None:
        super().__init__("Resource", name)
        self.stack_name = stack_name
        self.args = (f"The Resource ({name}) could not be found in Stack {stack_name}.",)


class Conflict(ConvectionError):
    """The operation is not legal in the current state.

    The subclasses below are named after Heat's exception classes so that
    the REST API maps each to Heat's status and ``type`` by class, never by
    the wording of its message.
    """


class StackExists(Conflict):
    """A live stack of the project already has the name."""


class ActionInProgress(Conflict):
    """Another operation holds the stack (or moved it on under a hook)."""


class ResourceNotAvailable(Conflict):
    """The resource exists in the template but cannot act yet."""


class NotSupported(Conflict):
    """What is asked is never legal in this state (Heat's 400, not 409)."""


class ResourceActionNotSupported(NotSupported):
    """The resource's type does not implement the action (e.g. signals)."""


class ExpressionError(ConvectionError):
    """An intrinsic function failed while being evaluated.

    ``path`` locates the function call in the template.
    """

    def __init__(self, message: str, path: Path = ()) -> None:
        self.message = message
        self.path = path
        where = format_path(path)
        super().__init__(f"{where}: {message}" if where else message)
