"""Mistral's states and the transitions it allows (``mistral/workflow/states.py``).

Workflow executions are checked against the table when an operation
changes them (pause, resume, cancel, a forced end); tasks and action
executions use the same names. ``DELAYED`` is Mistral's ``RUNNING_DELAYED``.
"""

from __future__ import annotations

from typing import Final

from convection.common import Conflict

IDLE: Final = "IDLE"
WAITING: Final = "WAITING"
RUNNING: Final = "RUNNING"
DELAYED: Final = "DELAYED"
PAUSED: Final = "PAUSED"
SUCCESS: Final = "SUCCESS"
ERROR: Final = "ERROR"
CANCELLED: Final = "CANCELLED"
SKIPPED: Final = "SKIPPED"

#: States after which a workflow execution does nothing more on its own.
TERMINAL: Final = frozenset({SUCCESS, ERROR, CANCELLED})
#: A task in one of these has its outcome (``states.is_completed``).
COMPLETED: Final = frozenset({SUCCESS, ERROR, CANCELLED, SKIPPED})

_VALID: Final[dict[str, frozenset[str]]] = {
    IDLE: frozenset({RUNNING, ERROR, CANCELLED}),
    WAITING: frozenset({RUNNING}),
    RUNNING: frozenset({PAUSED, DELAYED, SUCCESS, ERROR, CANCELLED}),
    DELAYED: frozenset({RUNNING, ERROR, CANCELLED}),
    PAUSED: frozenset({RUNNING, ERROR, CANCELLED}),
    SUCCESS: frozenset(),
    CANCELLED: frozenset({RUNNING}),
    ERROR: frozenset({RUNNING, SKIPPED}),
}


def is_valid_transition(current: str, new: str) -> bool:
    """Mistral's ``is_valid_transition``: the same state is always valid."""
    return current == new or new in _VALID.get(current, frozenset())


class InvalidTransition(Conflict):
    """A workflow execution asked to change to a state its state forbids."""


def check_workflow_transition(current: str, new: str, workflow: str, execution_id: str) -> None:
    """Raise Mistral's error (``Workflow.set_state``) for a forbidden change."""
    if not is_valid_transition(current, new):
        raise InvalidTransition(
            f"Can't change workflow execution state from {current} to {new}. "
            f"[workflow={workflow}, execution_id={execution_id}]"
        )
