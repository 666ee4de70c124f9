"""How a job ended, as a value the kernel journals (TaskFlow's "failures are
values"): a job never raises for a failure of what it drives."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from convection.common import JSON
from convection.store import Change


@dataclass(slots=True)
class Outcome:
    """``facts`` (what happened outside: survive a superseded traversal) and
    ``progress`` (the run's own bookkeeping) are written with the node's new
    state in one journal entry."""

    state: str  # "done" | "sleeping" | "paused" (parked by the job) | "failed"
    facts: list[Change] = field(default_factory=list)
    progress: list[Change] = field(default_factory=list)
    #: Sleeping: when to run again, and the progress to resume from.
    due_at: datetime | None = None
    resume: dict[str, JSON] | None = None
    #: Failed: (what failed, reason); the run's first one ends it.
    failure: tuple[str, str] | None = None
    #: Done, with a finding the run reports (a check's drift).
    finding: str | None = None
    #: Keys of nodes this outcome adds (``AddNodes`` in ``progress``) that
    #: this engine may run at once, claimed in the same write, when it has a
    #: free slot: a workflow's next task starts without a claim of its own.
    eager: tuple[str, ...] = ()


def done(facts: list[Change] | None = None, progress: list[Change] | None = None) -> Outcome:
    return Outcome("done", facts or [], progress or [])
