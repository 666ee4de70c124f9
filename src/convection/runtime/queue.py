"""Jobs on a distributed task queue: procrastinate, on the store's PostgreSQL.

An engine defers a claimed node's job here as a procrastinate job that
carries ids only; a ``convection worker`` on any machine, listening on the
job's queue, runs it. Why procrastinate (docs/architecture.md): its jobs
are rows in the PostgreSQL the store already needs, so there is no second
piece of infrastructure to run, watch and back up; workers are asyncio, as
Convection's jobs are; new jobs reach idle workers by LISTEN/NOTIFY.

The queue is a transport, not the record: a job's truth is its node row.
Procrastinate's own retries are off, and a job's row is deleted once it
ran: a lost or duplicated delivery is settled by the node's lease and
attempt (``convection.kernel.remote``), never by this queue.

Like the rest of the runtime, this imports nothing of Convection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

_log = logging.getLogger(__name__)

#: The one task every job runs: its arguments say which node, at which attempt.
TASK = "convection.job"
DEFAULT_QUEUE = "default"

Handler = Callable[[dict[str, Any]], Awaitable[None]]


class JobQueue:
    """One procrastinate app on the store's database (a libpq URL)."""

    def __init__(self, conninfo: str, *, pool_size: int = 4) -> None:
        import procrastinate

        self._connector = procrastinate.PsycopgConnector(
            conninfo=conninfo, min_size=1, max_size=pool_size
        )
        self.app = procrastinate.App(connector=self._connector)
        self._handler: Handler | None = None
        self._task = self.app.task(name=TASK, pass_context=False)(self._run)
        self._opened = False

    async def _run(self, **job: Any) -> None:
        if self._handler is None:
            raise RuntimeError("this process defers jobs; it does not run them")
        await self._handler(job)

    async def open(self) -> None:
        if not self._opened:
            await self.app.open_async()
            self._opened = True

    async def close(self) -> None:
        if self._opened:
            self._opened = False
            await self.app.close_async()

    async def ensure_schema(self) -> None:
        """Create procrastinate's tables if absent. Two processes starting
        at once may both try: the loser finds the tables there."""
        manager = self.app.job_manager
        if await manager.check_connection_async():
            return
        try:
            await self.app.schema_manager.apply_schema_async()
        except Exception:
            if not await manager.check_connection_async():
                raise

    async def defer(self, jobs: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
        """Defer ``(queue, lock, arguments)`` jobs in one statement. A job
        whose ``lock`` another job still waiting holds is not deferred again
        (procrastinate's queueing lock): deferring twice is harmless."""
        import procrastinate.exceptions

        made = [
            self._task.configure(queue=queue, queueing_lock=lock).make_new_job(**args)
            for queue, lock, args in jobs
        ]
        manager = self.app.job_manager
        try:
            await manager.batch_defer_jobs_async(jobs=made)
        except procrastinate.exceptions.AlreadyEnqueued:
            for job in made:  # one of them waits already: the others one by one
                with contextlib.suppress(procrastinate.exceptions.AlreadyEnqueued):
                    await manager.defer_job_async(job=job)

    async def work(
        self, handler: Handler, *, queues: Sequence[str], concurrency: int, name: str
    ) -> None:
        """Run jobs of ``queues`` until cancelled, ``concurrency`` at once."""
        self._handler = handler
        try:
            await self.app.run_worker_async(
                queues=list(queues),
                concurrency=concurrency,
                name=name,
                wait=True,
                listen_notify=True,
                delete_jobs="always",
                install_signal_handlers=False,
                fetch_job_polling_interval=5.0,
            )
        except asyncio.CancelledError:
            raise
        finally:
            self._handler = None
