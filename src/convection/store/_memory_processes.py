"""The ``processes`` rows and the operators' counts of a memory store: the
same answers as ``_sql_processes``, from its dicts, under its lock. A
memory store has no task queue, so ``queue_depths`` is always empty."""

from __future__ import annotations

import threading
from collections import Counter

from convection.store import workflows as wf
from convection.store._memory_tables import Tables, replace
from convection.store._time import aware, utcnow
from convection.store.processes import ProcessRecord


class MemoryProcesses:
    """The rows (id -> record) and the counts over a memory store's tables."""

    def __init__(self, lock: threading.Lock, tables: Tables) -> None:
        self._lock = lock
        self._t = tables
        self._rows: dict[str, ProcessRecord] = {}

    def beat(self, record: ProcessRecord) -> None:
        changes = {
            "queues": tuple(str(q) for q in record.queues),
            "stats": {str(k): float(v) for k, v in record.stats.items()},
            "started_at": aware(record.started_at, "ProcessRecord.started_at"),
            "heartbeat_at": utcnow(),
        }
        stored = replace(record, changes)
        with self._lock:
            self._rows[record.id] = stored

    def list_processes(self) -> list[ProcessRecord]:
        with self._lock:
            found = list(self._rows.values())
        found.sort(key=lambda p: (p.kind, p.host, p.id))
        return [replace(p, {"stats": dict(p.stats)}) for p in found]

    def forget_process(self, process_id: str) -> None:
        with self._lock:
            self._rows.pop(process_id, None)

    def leases_held(self) -> dict[str, tuple[int, int]]:
        now = utcnow()
        with self._lock:
            held = Counter(
                tr.lease_owner
                for tr in self._t.traversals.values()
                if tr.lease_owner is not None
                and tr.lease_until is not None
                and tr.lease_until >= now
            )
            nodes = Counter(
                owner
                for key in self._t.running
                if (owner := self._t.nodes[key].lease_owner) is not None
            )
        return {o: (held[o], nodes[o]) for o in sorted({*held, *nodes})}

    def count_by_state(self) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {"traversal:stack": {}, "traversal:workflow": {}}
        with self._lock:
            for tr in self._t.traversals.values():
                of_kind = counts.setdefault(f"traversal:{tr.kind}", {})
                of_kind[tr.status] = of_kind.get(tr.status, 0) + 1
            executions = self._t.workflow_rows[wf.EXECUTIONS.name].values()
            counts["execution"] = dict(Counter(e.state for e in executions))
        return counts

    def queue_depths(self) -> dict[str, dict[str, int]]:
        return {}
