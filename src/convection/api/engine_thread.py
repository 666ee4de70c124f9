"""The service's engine, run beside the API in the same process.

The engine is an asyncio loop whose store calls block, so it runs in a
thread of its own with its own event loop, not on the server's loop
where it would stall requests. Requests start operations in the store;
the engine (stacks and workflow executions alike) takes them up within
its scan interval (and at start it takes up every operation a previous
process left in progress). Stopping asks the engine to stop starting
work and waits for running jobs to record their outcome, so whatever is
left is resumable by the next engine.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from convection.kernel import hear
from convection.service import Stacks
from convection.store import listens
from convection.workflows import engine_for

log = logging.getLogger("convection.convergence")


class EngineThread:
    def __init__(self, stacks: Stacks, store_url: str | None = None) -> None:
        self._stacks = stacks
        self._url = store_url if store_url is not None and listens(store_url) else None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.failure: BaseException | None = None

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        # Built here, not lazily on the other thread; workflows attached
        # first, so the one engine runs executions as well as stacks.
        engine = engine_for(self._stacks)
        log.info("engine %s starting", engine.config.owner)
        self._thread = threading.Thread(target=self._run, name="convection-engine", daemon=True)
        self._thread.start()

    def stop(self, grace: float) -> bool:
        """Ask the engine to stop; True if it did within ``grace`` seconds."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(grace)
        stopped = not self._thread.is_alive()
        log.info("engine %s", "stopped" if stopped else "still finishing jobs at exit")
        return stopped

    def _run(self) -> None:
        try:
            asyncio.run(self._work())
        except BaseException as exc:  # a bug in the engine: keep the API up, report it
            self.failure = exc
            log.exception("engine failed")

    async def _work(self) -> None:
        """The engine, and on PostgreSQL its ear for other processes'
        notices (another server's writes, workers' ends)."""
        engine = self._stacks.engine
        ear = None if self._url is None else asyncio.ensure_future(hear(self._url, engine.kernel))
        try:
            await engine.run(until=self._stop.is_set, idle_exit=False)
        finally:
            if ear is not None:
                ear.cancel()
                await asyncio.gather(ear, return_exceptions=True)
