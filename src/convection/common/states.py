"""Heat's action × status states, and the legal transitions between them.

Like TaskFlow's ``states.py``: the allowed (old, new) pairs are data, and one
function checks a transition. Stacks and resources share the vocabulary.
"""

from __future__ import annotations

import enum


class Action(enum.StrEnum):
    INIT = "INIT"
    CREATE = "CREATE"
    DELETE = "DELETE"
    UPDATE = "UPDATE"
    ROLLBACK = "ROLLBACK"
    SUSPEND = "SUSPEND"
    RESUME = "RESUME"
    ADOPT = "ADOPT"
    SNAPSHOT = "SNAPSHOT"
    CHECK = "CHECK"


class Status(enum.StrEnum):
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


def state_name(action: Action | str, status: Status | str) -> str:
    """``CREATE_IN_PROGRESS``: how Heat's API spells a state."""
    return f"{action}_{status}"


class InvalidTransition(Exception):
    def __init__(self, old: tuple[str, str], new: tuple[str, str]) -> None:
        self.old = old
        self.new = new
        super().__init__(f"illegal transition {state_name(*old)} -> {state_name(*new)}")


# A state may always go to IN_PROGRESS of any action (a new operation starts),
# and IN_PROGRESS may end in COMPLETE or FAILED of the same action. Nothing
# else is legal: in particular COMPLETE never turns into FAILED without a new
# operation starting, which is how a resumed traversal is told apart from a
# second one.
def check_transition(old: tuple[str, str], new: tuple[str, str]) -> None:
    old_action, old_status = old
    new_action, new_status = new
    if new_status == Status.IN_PROGRESS:
        return
    if old_status == Status.IN_PROGRESS and old_action == new_action:
        return
    if old == new:
        return
    raise InvalidTransition(old, new)
