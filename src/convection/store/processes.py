"""The ``processes`` table: one row per running engine, worker or API
server, so operators see what runs where (``convection status``,
``/metrics``).

Each process writes its own row every :data:`BEAT_SECONDS`
(``Store.beat``, an upsert by id: the process's lease owner string); the
store stamps ``heartbeat_at`` with its own clock, so a process with a
wrong clock still looks alive exactly as long as it beats. A row whose
heartbeat is older than :data:`STALE_BEATS` beats is **stale**: its process
died or cannot reach the store. Rows are not removed by anyone but their
process (``Store.forget_process`` on a clean stop) or an operator: a stale
row is the evidence that something went away.

``stats`` holds the process's cumulative counters since it started (the
names in :data:`PROCESS_STATS`); Prometheus' counters are sums over the
rows, so a restarted process resetting its own to zero reads as a counter
reset, which Prometheus' ``rate`` handles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

#: The kinds of process that beat.
PROCESS_KINDS: Final = ("engine", "worker", "server")

#: How often a process writes its row (seconds).
BEAT_SECONDS: Final = 5.0
#: Beats missed before a row is shown as stale (``3 * 5 s = 15 s``).
STALE_BEATS: Final = 3

#: The cumulative counters a process reports in ``ProcessRecord.stats``.
PROCESS_STATS: Final = (
    "jobs_done",
    "jobs_failed",
    "job_seconds_sum",
    "job_wait_seconds_sum",
    "takeups",
    "lease_losses",
    "stale_results",
    "stale_jobs",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessRecord:
    """One running process, as its last beat described it."""

    #: The process's lease owner string (``KernelSettings.owner``), unique.
    id: str
    #: ``engine``, ``worker`` or ``server`` (:data:`PROCESS_KINDS`).
    kind: str
    host: str
    pid: int
    #: The task queues it takes jobs from (empty for an embedded engine).
    queues: tuple[str, ...] = ()
    #: Jobs it runs at once at most, and how many run now.
    concurrency: int = 0
    running: int = 0
    #: Cumulative counters (:data:`PROCESS_STATS`).
    stats: dict[str, float] = field(default_factory=dict)
    #: When the process started (aware UTC).
    started_at: datetime
    #: Set by the store on every beat (its clock, UTC): whatever the caller
    #: passes is ignored, and a record read from the store always has it.
    heartbeat_at: datetime | None = None

    def is_stale(self, now: datetime, beat_seconds: float = BEAT_SECONDS) -> bool:
        """Whether the last beat is older than :data:`STALE_BEATS` beats at ``now``."""
        if self.heartbeat_at is None:
            return True
        return now - self.heartbeat_at > timedelta(seconds=STALE_BEATS * beat_seconds)
