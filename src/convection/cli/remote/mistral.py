"""Mistral's ``/v2`` answers back as the workflow operations' own.

Mistral answers every error with ``{"faultcode", "faultstring",
"debuginfo"}`` (:mod:`convection.api.routers.v2._common` builds it from
the operations' exceptions). :func:`mistral_error` turns one back into an
exception whose text is the operation's message, so the CLI prints the
same line and exits with the same code in both modes. A 400 stands for two
kinds of local error: invalid input (printed as diagnostics, with a count)
and a refused state change (one ``error:`` line); the caller says which
the operation raises (``bad_request``).

The API's bodies differ from the operations' in what the REST layer adds:
JSON-string fields (Mistral's ``JsonType``), a task's ``result`` as text,
and keys of Mistral's resources the operations do not return. Each is
undone here, keys in the operations' order, so ``-f json`` and ``-f
yaml`` print the same document in both modes
(``tests/cli/test_remote_workflows.py`` fails if either side drifts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from convection.cli.remote.http import ServerNotFound, refused, unexpected
from convection.common import Conflict, ConvectionError, Diagnostic, InvalidInput

Body = dict[str, Any]

#: The API's 403 for a token that may not do this (``api.auth.forbidden``);
#: any other 403 is the operation's own (another project's definition).
FORBIDDEN = "You are not authorized to perform this action."

#: ``path: message``, as ``str(Diagnostic)`` writes a diagnostic with a
#: path and no file mark (the server's are of data, not of a file).
_PATHED = re.compile(
    r"^(?P<path>[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[\d+\])*): (?P<msg>.+)$", re.S
)


def mistral_error(
    status: int, body: Any, *, bad_request: type[ConvectionError] = InvalidInput
) -> ConvectionError:
    """The operation's exception for a Mistral error answer."""
    message = _message(body)
    if status == 401 or (status == 403 and message == FORBIDDEN):
        return refused(status, message)
    if status == 404:
        return ServerNotFound(message)
    if status in (403, 409):
        return Conflict(message)
    if status == 400:
        if bad_request is InvalidInput:
            return InvalidInput([diagnostic(line) for line in message.splitlines() if line.strip()])
        return bad_request(message)
    return unexpected(status, message)


def conflicts(status: int, body: Any) -> ConvectionError:
    """:func:`mistral_error` for an operation whose 400 is a refused change."""
    return mistral_error(status, body, bad_request=Conflict)


def _message(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    if "faultstring" in body:
        return str(body["faultstring"] or "")
    error = body.get("error")  # the client's stand-in for a body that is not JSON
    return str(error.get("message") or "") if isinstance(error, dict) else ""


def diagnostic(line: str) -> Diagnostic:
    """A diagnostic as the server wrote it (``str(d)``), with its path back
    so that ``-f json`` shows it as the local one does."""
    found = _PATHED.match(line)
    if found is None:
        return Diagnostic(line)
    return Diagnostic(found["msg"], (found["path"],))


# -- bodies ---------------------------------------------------------------------------
def _decoded(value: Any) -> Any:
    """A ``JsonType`` field's value (the API sends it as JSON text)."""
    return json.loads(value) if isinstance(value, str) else value


def _view(json_fields: Iterable[str], extras: Iterable[str]) -> Callable[[Body], Body]:
    """What undoes one resource's API shape: its JSON-string fields decoded,
    the keys the API adds dropped."""
    decoded, dropped = frozenset(json_fields), frozenset(extras)

    def view(body: Body) -> Body:
        return {
            key: _decoded(value) if key in decoded else value
            for key, value in body.items()
            if key not in dropped
        }

    return view


#: ``api.routers.v2``' ``shown`` of each resource, undone.
workflow = _view(("interface",), ())
definition = _view((), ())
execution = _view(("input", "output", "params"), ("source_execution_id", "published_global"))
task = _view(("result", "published", "runtime_context"), ("reset", "env", "published_global"))
action_execution = _view(("input", "output", "params"), ())
cron_trigger = _view(("workflow_input", "workflow_params"), ())
environment = _view(("variables",), ())
