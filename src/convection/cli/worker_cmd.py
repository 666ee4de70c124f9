"""``convection worker``: run the jobs engines deferred, on any machine.

A worker takes jobs from the task queue on the store's PostgreSQL
(procrastinate), only of the queues it is given: a site's worker runs the
jobs of the nodes only it can reach. It holds each job's node lease while
it runs and journals the outcome itself, fenced by the node's attempt
(``convection.kernel.worker``); its row in ``processes`` shows it in
``convection status``.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import TYPE_CHECKING, Annotated, Any

import typer

from convection.cli.context import invocation, redact_url
from convection.cli.output import stdout
from convection.cli.progress import on_signals

if TYPE_CHECKING:
    from convection.kernel import Worker
    from convection.runtime import JobQueue
    from convection.service import Stacks

_log = logging.getLogger(__name__)


def worker(
    ctx: typer.Context,
    queue: Annotated[
        list[str] | None,
        typer.Option(
            "--queue",
            "-q",
            help="A queue to take jobs from (repeat for several); default: `default`.",
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=1000, help="Jobs run at once.")
    ] = 16,
) -> int:
    """Run jobs that engines (`convection engine --workers`) deferred to the
    given queues, until stopped (Ctrl-C or SIGTERM). Needs a PostgreSQL
    store; any number of workers, on any machines, may share it."""
    from convection.cli.scale import process_name
    from convection.store import listens

    inv = invocation(ctx)
    if not listens(inv.db_url):
        raise typer.BadParameter(
            f"`convection worker` needs a PostgreSQL store, not {redact_url(inv.db_url)} "
            "(--db postgresql+psycopg://user@host/db)",
            param_hint="--db",
        )
    queues = list(dict.fromkeys(queue or ["default"]))
    inv.owner = process_name("worker")
    stacks = inv.local_stacks
    stdout.print(
        f"Worker {inv.owner} on {redact_url(inv.db_url)}, queues {', '.join(queues)}, "
        f"{concurrency} at once (Ctrl-C or SIGTERM to stop)",
        markup=False,
        highlight=False,
    )
    asyncio.run(_work(stacks, inv.db_url, queues, concurrency))
    stdout.print("Worker stopped.")
    return 0


def _stop(work: asyncio.Future[None]) -> None:
    work.cancel()


#: Seconds between attempts to reach the queue again after losing it.
_RETRY = (0.5, 1.0, 2.0, 5.0)


async def _serve(
    queue: JobQueue, runner: Worker[Any, Any], queues: list[str], concurrency: int, owner: str
) -> None:
    """Take jobs until cancelled, across lost connections (a restart of
    PostgreSQL): the jobs of a worker that went away are its nodes' to
    re-run once their leases lapse, so coming back is always safe."""
    failures = 0
    while True:
        try:
            await queue.work(runner.handle, queues=queues, concurrency=concurrency, name=owner)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            delay = _RETRY[min(failures, len(_RETRY) - 1)]
            failures += 1
            _log.warning("the task queue failed (%r); again in %.1fs", exc, delay)
            await asyncio.sleep(delay)


async def _work(stacks: Stacks, url: str, queues: list[str], concurrency: int) -> None:
    from convection.cli import scale
    from convection.kernel import Worker, beat
    from convection.workflows import engine_for

    engine_for(stacks)  # stacks' and workflows' front-ends, as an engine has
    stacks.engine.frontend.reset()
    runner: Worker[Any, Any] = Worker(stacks.engine.kernel)
    queue = await scale.open_queue(url)
    owner = stacks.engine.kernel.config.owner
    tasks = scale.background(
        runner.keep_leases(),
        beat(
            stacks.store,
            owner=owner,
            kind="worker",
            queues=queues,
            concurrency=concurrency,
            running=lambda: runner.running,
            stats=lambda: dict(runner.stats),
        ),
    )
    work = asyncio.ensure_future(_serve(queue, runner, queues, concurrency, owner))
    restore = on_signals((signal.SIGINT, signal.SIGTERM), lambda: _stop(work))
    try:
        await asyncio.gather(work, return_exceptions=True)
    finally:
        restore()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await queue.close()
