"""``convection engine``: do the work recorded in the store.

Operations started without ``--wait`` (here or in another process) are
traversals in the store; this runs the embedded engine over every one in
progress, in every project, and any started while it runs. Several engines
may share a store: nodes are claimed under leases, so none runs twice, and
work whose engine died is taken up again.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convection.cli.context import invocation, redact_url
from convection.cli.output import stdout
from convection.cli.progress import StopSwitch, in_progress, on_signals

if TYPE_CHECKING:
    from convection.service import Stacks

_log = logging.getLogger(__name__)

#: How often the status log looks at the stacks (seconds).
LOG_POLL = 0.5
#: Jobs an engine keeps deferred at once with --workers (they wait in the
#: queue, not here: the workers' concurrency bounds what runs).
WORKERS_CONCURRENCY = 1000


def _listens(url: str) -> bool:
    from convection.store import listens

    return listens(url)


class StatusLog:
    """One line whenever a stack's status changes, for the engine's log.

    At start it names the operations in progress; after that, every change
    and every new stack (which may have been done between two looks).
    Stacks seen in progress are remembered by id: a deleted stack drops out
    of the list, and its final status is read by id."""

    def __init__(self, stacks: Stacks) -> None:
        self._stacks = stacks
        self._seen: dict[str, tuple[str, str]] = {}
        self._active: dict[str, str] = {}
        self._started = False

    def poll(self) -> None:
        listed = {s["id"]: s for s in self._stacks.list(None, show_nested=True)}
        for stack_id, project in list(self._active.items()):
            if stack_id not in listed:
                listed[stack_id] = self._stacks.show(project, stack_id)
        for stack_id, s in listed.items():
            state = (str(s["stack_status"]), str(s.get("stack_status_reason") or ""))
            known = self._seen.get(stack_id)
            if known != state and (self._started or in_progress(s)):
                _line(s)
            self._seen[stack_id] = state
            if in_progress(s):
                self._active[stack_id] = s["project"]
            else:
                self._active.pop(stack_id, None)
        self._started = True

    @property
    def active(self) -> int:
        return len(self._active)


class ExecutionLog:
    """One line whenever a workflow execution's state changes: those
    running or paused are listed (a finished one is read by id once)."""

    def __init__(self, stacks: Stacks) -> None:
        self._store = stacks.store
        self._seen: dict[str, str] = {}

    def poll(self) -> None:
        rows = self._store.workflows
        listed = {
            e.id: e for e in rows.list_executions(None, filters={"state": ["RUNNING", "PAUSED"]})
        }
        for execution_id in [k for k in self._seen if k not in listed]:
            found = rows.get_execution(execution_id)
            if found is not None:
                listed[execution_id] = found
        for execution_id, e in listed.items():
            if self._seen.get(execution_id) != e.state:
                now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
                info = (e.state_info or "").splitlines()[0] if e.state_info else ""
                line = f"{now} [{e.project}/{e.workflow_name} {e.id}]: {e.state}  {info}"
                stdout.print(line.rstrip(), markup=False, highlight=False)
            if e.state in ("RUNNING", "PAUSED"):
                self._seen[execution_id] = e.state
            else:
                self._seen.pop(execution_id, None)


def _line(s: dict[str, Any]) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    reason = s.get("stack_status_reason") or ""
    stdout.print(
        f"{now} [{s['project']}/{s['stack_name']}]: {s['stack_status']}  {reason}".rstrip(),
        markup=False,
        highlight=False,
    )


async def serve(
    stacks: Stacks, *, until_idle: bool, url: str | None = None, workers: bool = False
) -> bool:
    """Run the engine with a status log; True if stopped by a signal. On
    PostgreSQL (``url``) it hears other processes' notices and beats its
    row; with ``workers``, its jobs run on ``convection worker``s."""
    import asyncio

    from convection.workflows import engine_for

    switch = StopSwitch()
    log = StatusLog(stacks)
    executions = ExecutionLog(stacks)
    engine_for(stacks)  # one kernel runs stacks and workflow executions
    extras = await _scale_out(stacks, url, workers)
    work = stacks.engine.run(until=lambda: switch.requested, idle_exit=until_idle)
    engine = asyncio.ensure_future(work)
    switch.engine = engine
    restore = on_signals((signal.SIGINT, signal.SIGTERM), switch.press)
    try:
        while not engine.done():
            _look(log, executions)
            await asyncio.wait({engine}, timeout=LOG_POLL)
    finally:
        restore()
        for task in extras:
            task.cancel()
        await asyncio.gather(*extras, return_exceptions=True)
    _look(log, executions)
    failure = None if engine.cancelled() else engine.exception()
    if failure is not None:  # a bug in the engine: let main() report it
        raise failure
    return switch.requested


def _look(*logs: StatusLog | ExecutionLog) -> None:
    """Write the status lines; a store out of reach (a database restart)
    skips a look, as it skips an engine turn, rather than stopping."""
    for log in logs:
        try:
            log.poll()
        except Exception as exc:
            _log.warning("status log: %r", exc)


async def _scale_out(stacks: Stacks, url: str | None, workers: bool) -> list[Any]:
    """The background tasks of an engine on PostgreSQL (none on SQLite)."""
    from convection.cli import scale
    from convection.kernel import RemoteJobs, beat, hear
    from convection.store import listens

    if url is None or not listens(url):
        return []
    kernel = stacks.engine.kernel
    tasks: list[Any] = []
    if workers:
        queue = await scale.open_queue(url)
        config = kernel.config
        kernel.remote = RemoteJobs(
            queue, stacks.store, owner=config.owner, lease_seconds=config.lease_seconds
        )
        tasks.append(asyncio.ensure_future(_close_at_end(queue)))
    remote = kernel.remote
    tasks += scale.background(
        hear(url, kernel),
        beat(
            stacks.store,
            owner=kernel.config.owner,
            kind="engine",
            queues=(),
            concurrency=kernel.config.concurrency,
            running=lambda: kernel.executor.running + (remote.running if remote else 0),
            stats=lambda: {
                **kernel.stats,
                "jobs_deferred": float(remote.deferred if remote else 0),
            },
        ),
    )
    return tasks


async def _close_at_end(queue: Any) -> None:
    try:
        await asyncio.Event().wait()
    finally:
        await queue.close()


def engine(
    ctx: typer.Context,
    until_idle: Annotated[
        bool,
        typer.Option("--until-idle", help="Stop once no operation is left in progress."),
    ] = False,
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", min=1, help="Resources worked on at once."),
    ] = None,
    workers: Annotated[
        bool,
        typer.Option(
            "--workers",
            help="Run no job here: defer each to `convection worker` processes through the "
            "task queue on the store's PostgreSQL, on the queue of the node it runs on.",
        ),
    ] = False,
) -> int:
    """Run the engine: take up every operation in progress in the store
    (creates, updates and deletes started without --wait, or interrupted)
    and run until stopped (Ctrl-C or SIGTERM: running jobs finish recording
    their outcome first) or, with --until-idle, until no work is left."""
    import asyncio

    inv = invocation(ctx)
    if concurrency is not None:
        inv.set_flag("concurrency", concurrency)
    elif workers:
        inv.set_flag("concurrency", WORKERS_CONCURRENCY)
    if workers and not _listens(inv.db_url):
        raise typer.BadParameter(
            "needs a PostgreSQL store (--db postgresql+psycopg://...)", param_hint="--workers"
        )
    stacks = inv.local_stacks
    config = stacks.engine.config
    where = "deferred to workers" if workers else "at once"
    stdout.print(
        f"Engine {config.owner} on {redact_url(inv.db_url)}, {config.concurrency} jobs {where}"
        + ("" if until_idle else " (Ctrl-C or SIGTERM to stop)"),
        markup=False,
        highlight=False,
    )
    stopped = asyncio.run(serve(stacks, until_idle=until_idle, url=inv.db_url, workers=workers))
    left = sum(1 for s in stacks.list(None, show_nested=True) if in_progress(s))
    if stopped:
        stdout.print(f"Engine stopped; {left} operation(s) left in progress, resumable.")
    else:
        stdout.print(f"Engine idle; {left} operation(s) left in progress.")
    return 0
