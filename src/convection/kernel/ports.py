"""What the kernel needs of the world: a store of traversal rows, and settings.

The kernel is handed a :class:`KernelStore`, the narrow part of
``convection.store.Store`` it uses (traversals and their leases, nodes and
their claims, timers, and the journal's two writes). Every store satisfies
it; a front-end keeps the whole store for its own rows.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Protocol

from convection.store import Change, NodeRecord, TimerRecord, TraversalRecord


class KernelStore(Protocol):
    """Traversals, nodes, timers and atomic batches of changes."""

    def get_traversal(self, traversal_id: str) -> TraversalRecord | None: ...

    def scan_active(
        self, owner: str, kinds: Collection[str] | None = None
    ) -> tuple[list[str], list[TraversalRecord]]:
        """(ids of active traversals ``owner`` leases, every other active
        one), of ``kinds`` only (None: every kind)."""
        ...

    def take_traversal(
        self, traversal_id: str, owner: str, lease_until: datetime, now: datetime
    ) -> bool: ...

    def renew_traversals(
        self, traversal_ids: Sequence[str], owner: str, lease_until: datetime
    ) -> set[str]: ...

    def release_traversals(self, traversal_ids: Sequence[str], owner: str) -> None: ...

    def list_nodes(self, traversal_id: str) -> list[NodeRecord]: ...

    def get_nodes(self, traversal_id: str, keys: Sequence[str]) -> list[NodeRecord]: ...

    def claim_ready(
        self, traversal_id: str, owner: str, limit: int, lease_until: datetime
    ) -> list[NodeRecord]: ...

    def claim_many(
        self, wanted: Sequence[tuple[str, int]], owner: str, lease_until: datetime
    ) -> dict[str, list[NodeRecord]]: ...

    def reclaim_expired(self, now: datetime) -> int: ...

    def count_unfinished(self, traversal_id: str) -> int: ...

    def take_node(
        self,
        traversal_id: str,
        key: str,
        attempt: int,
        owner: str,
        lease_until: datetime,
        *,
        claimed_by: str | None = None,
    ) -> NodeRecord | None: ...

    def renew_nodes(self, owner: str, lease_until: datetime) -> set[tuple[str, str]]: ...

    def notify(self, channel: str, payload: str = "") -> None: ...

    def due_timers(self, now: datetime, limit: int) -> list[TimerRecord]: ...

    def next_timer_due(self, traversal_id: str | None = None) -> datetime | None: ...

    def apply(self, changes: Sequence[Change], *, traversal_id: str | None = None) -> None: ...

    def apply_many(self, batches: Sequence[tuple[str | None, Sequence[Change]]]) -> list[bool]: ...


class KernelSettings(Protocol):
    """How much runs at once, how long a lease lasts, how often to look."""

    @property
    def concurrency(self) -> int: ...

    @property
    def lease_seconds(self) -> float: ...

    @property
    def scan_seconds(self) -> float: ...

    @property
    def owner(self) -> str: ...
