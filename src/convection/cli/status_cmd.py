"""``convection status``: the engines, workers and servers that run on a
store, from the rows each writes every few seconds (``Store.beat``).

It reads the store itself (the global ``--db``), so it shows every machine
sharing that store, and has no server route (``--url`` is refused). A row
whose heartbeat is older than three beats is shown as **stale**: its
process died or lost the store; it stays listed until that process stops
cleanly or comes back.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import typer

from convection.cli.context import invocation
from convection.cli.output import Format, emit, stdout
from convection.cli.stack_common import FormatOpt, print_table

if TYPE_CHECKING:
    from convection.store import ProcessRecord

COLUMNS = (
    "Kind", "ID", "Host", "PID", "Queues", "Running", "Jobs done", "Heartbeat", "State", "Leases",
)  # fmt: skip


def ago(seconds: float) -> str:
    """``3s ago``, ``4m ago``, ``2h ago``, ``5d ago`` (a clock ahead of
    this one reads as ``0s ago``)."""
    whole = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if whole >= size:
            return f"{whole // size}{unit} ago"
    return f"{whole}s ago"


def leases_text(traversals: int, nodes: int) -> str:
    """``2 traversals, 14 nodes`` (singular for one)."""
    t = "traversal" if traversals == 1 else "traversals"
    n = "node" if nodes == 1 else "nodes"
    return f"{traversals} {t}, {nodes} {n}"


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(UTC).isoformat(timespec="seconds")


def process_view(record: ProcessRecord, leases: tuple[int, int], now: datetime) -> dict[str, Any]:
    """A process as ``--format json`` shows it (the table's columns come from it)."""
    age = None if record.heartbeat_at is None else (now - record.heartbeat_at).total_seconds()
    return {
        "kind": record.kind,
        "id": record.id,
        "host": record.host,
        "pid": record.pid,
        "queues": list(record.queues),
        "running": record.running,
        "concurrency": record.concurrency,
        "jobs_done": int(record.stats.get("jobs_done", 0)),
        "jobs_failed": int(record.stats.get("jobs_failed", 0)),
        "stats": dict(record.stats),
        "started_at": _iso(record.started_at),
        "heartbeat_at": _iso(record.heartbeat_at),
        "heartbeat_age_seconds": None if age is None else round(max(age, 0.0), 1),
        "state": "stale" if record.is_stale(now) else "live",
        "leases": {"traversals": leases[0], "nodes": leases[1]},
    }


def _row(view: dict[str, Any]) -> list[Any]:
    age = view["heartbeat_age_seconds"]
    return [
        view["kind"],
        view["id"],
        view["host"],
        view["pid"],
        ", ".join(view["queues"]),
        f"{view['running']}/{view['concurrency']}",
        view["jobs_done"],
        "never" if age is None else ago(age),
        view["state"],
        leases_text(view["leases"]["traversals"], view["leases"]["nodes"]),
    ]


def status(ctx: typer.Context, fmt: FormatOpt = Format.table) -> int:
    """Show the engines, workers and servers running on the store (--db), from
    their heartbeats: jobs running and done, leases held, and "stale" for a
    process silent for over 15 s.

    Every process sharing the store writes its row every 5 s, wherever it
    runs, so this shows them all; a stale row's process died or cannot
    reach the store."""
    store = invocation(ctx).store
    records = store.list_processes()
    leases = store.leases_held() if records else {}
    now = datetime.now(UTC)
    views = [process_view(r, leases.get(r.id, (0, 0)), now) for r in records]

    def table() -> None:
        if not views:
            stdout.print("No engine, worker or server has beaten on this store.")
            return
        print_table(COLUMNS, [_row(v) for v in views])

    emit(views, fmt, table)
    return 0
