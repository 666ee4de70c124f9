"""Traversal leases: one engine runs a traversal at a time.

Nodes are claimed under their own leases, but a run's tally (what is left
to do) and its stack view (the values jobs read) live in the memory of the
engine that took the traversal up: two engines sharing one would each count
and see only their own commits, and neither would ever finish it. So an
engine takes a traversal up only under the traversal's lease (an atomic
conditional update in the store), renews it as it renews its node leases,
and releases it when the traversal ends or the engine stops cleanly. A
crashed engine's leases lapse and another engine takes its work up; an
engine that finds its lease taken (it was held up longer than the lease)
drops the run rather than write into someone else's.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta

from convection.kernel.ports import KernelSettings, KernelStore
from convection.store import TraversalRecord


class TraversalLeases:
    def __init__(self, store: KernelStore, config: KernelSettings) -> None:
        self._store = store
        self._config = config

    def _until(self, now: datetime) -> datetime:
        return now + timedelta(seconds=self._config.lease_seconds)

    def held_elsewhere(self, traversal: TraversalRecord, now: datetime) -> bool:
        """Another engine's live lease, as last read: not worth a write."""
        owner, until = traversal.lease_owner, traversal.lease_until
        if owner is None or owner == self._config.owner or until is None:
            return False
        return until >= now

    def take(self, traversal_id: str) -> bool:
        now = datetime.now(UTC)
        return self._store.take_traversal(traversal_id, self._config.owner, self._until(now), now)

    def renew(self, traversal_ids: Collection[str], now: datetime) -> set[str]:
        """Those of ``traversal_ids`` whose lease this engine lost."""
        ids = list(traversal_ids)
        held = self._store.renew_traversals(ids, self._config.owner, self._until(now))
        return set(ids) - held

    def still_held(self, traversal_id: str) -> bool:
        """Renew one lease, to know it is ours before a final write."""
        return not self.renew([traversal_id], datetime.now(UTC))

    def release(self, traversal_ids: Collection[str]) -> None:
        if traversal_ids:
            self._store.release_traversals(list(traversal_ids), self._config.owner)
