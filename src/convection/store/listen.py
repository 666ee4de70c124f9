"""Hearing other processes' writes: PostgreSQL's LISTEN, reconnecting.

Engines and workers on other machines wake on what the store's writes
announce (``Notice``: a traversal started, a timer due now, a job ended)
rather than polling. A notice is a hint, never the state itself: whoever
hears one reads the store, and a notice lost while the connection was
down is made up for by the listener's caller looking again at every
(re)connection (``on_connect``) and by its own periodic scan.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence

import sqlalchemy as sa

from convection.store.api import Notice

_log = logging.getLogger(__name__)

#: Seconds between attempts to reconnect, doubling up to the last.
_BACKOFF = (0.1, 0.2, 0.5, 1.0, 2.0)


def libpq_url(url: str) -> str:
    """The libpq form of a SQLAlchemy PostgreSQL URL (``postgresql+psycopg://``)."""
    return sa.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def listens(url: str) -> bool:
    """Whether the store at ``url`` can announce writes (PostgreSQL)."""
    return sa.make_url(url).get_backend_name() == "postgresql"


async def notices(
    url: str, channels: Sequence[str], *, on_connect: Callable[[], None] = lambda: None
) -> AsyncIterator[Notice]:
    """Every notice on ``channels``, for ever, across lost connections and
    server restarts; ``on_connect`` runs after each (re)connection, when
    notices sent while away are lost."""
    import psycopg
    from psycopg.sql import SQL, Identifier

    failures = 0
    while True:
        try:
            conn = await psycopg.AsyncConnection.connect(libpq_url(url), autocommit=True)
        except psycopg.OperationalError as exc:
            delay = _BACKOFF[min(failures, len(_BACKOFF) - 1)]
            failures += 1
            _log.warning("listen: cannot connect (%s); again in %.1fs", exc, delay)
            await asyncio.sleep(delay)
            continue
        failures = 0
        try:
            async with conn:
                for channel in channels:
                    await conn.execute(SQL("LISTEN {}").format(Identifier(channel)))
                on_connect()
                async for n in conn.notifies():
                    yield Notice(n.channel, n.payload)
        except psycopg.OperationalError as exc:
            _log.warning("listen: connection lost (%s); reconnecting", exc)
