"""The :class:`ResourceContext` a plugin gets from the engine.

``set_physical_id`` and ``set_data`` are facts about the real world: they
are journaled and awaited before returning (group-committed with whatever
else the turn wrote), so a plugin that persisted its id and then crashed
finds it again; a placeholder id (``commit=False``) is only queued in the
turn's batch, which the action's outcome joins. ``emit`` adds an event
without waiting. ``reset_peer`` relays a request to another resource's own
plugin (its ``reset``), which writes through a context of its own row:
plugins never write each other.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Mapping
from typing import Any

from convection.common import JSON
from convection.convergence.software_port import StoreSoftware
from convection.convergence.view import StackView
from convection.hot import ParameterValues
from convection.kernel import Journal
from convection.plan import reference_id
from convection.resources import (
    ApiAccess,
    NestedStacks,
    Peer,
    ResourceFailure,
    ResourcePlugin,
    WorkflowService,
)
from convection.store import AppendEvent, ResourceRecord, Store, UpdateResource

#: How long ``reset_peer`` waits for signals to the peer that were being
#: delivered while it reset (a delivery takes milliseconds) before it
#: resets once more; an orphaned signal (its sender died) is not waited out.
RESET_SETTLE_SECONDS = 2.0
#: How often it looks whether they were consumed.
RESET_POLL_SECONDS = 0.01


def short_id(stack_id: str, resource_id: int) -> str:
    """Stable per resource version, so a retried create names its thing the
    same way (Heat's ``short_id`` of the resource uuid)."""
    return hashlib.blake2b(f"{stack_id}:{resource_id}".encode(), digest_size=6).hexdigest()


def hidden_texts(parameters: ParameterValues) -> tuple[str, ...]:
    """The text forms of the hidden parameters' values, for plugins to
    redact (:meth:`ParameterValues.hidden_texts`: the compile masks the
    same texts in its messages)."""
    return parameters.hidden_texts()


class EngineContext:
    __slots__ = (
        "_journal",
        "_nested",
        "_plugins",
        "_row",
        "_stack_name",
        "_traversal_id",
        "_view",
        "action",
        "api",
        "operation_id",
        "previous_properties",
        "secrets",
        "stack_timeout",
        "update_policy",
        "workflows",
    )

    def __init__(
        self,
        row: ResourceRecord,
        *,
        stack_name: str,
        action: str,
        operation_id: str,
        journal: Journal[Store],
        view: StackView,
        traversal_id: str | None = None,
        previous_properties: Mapping[str, Any] | None = None,
        update_policy: Mapping[str, Any] | None = None,
        stack_timeout: float | None = None,
        nested: NestedStacks | None = None,
        secrets: tuple[str, ...] = (),
        api: ApiAccess | None = None,
        plugins: Callable[[str], ResourcePlugin | None] | None = None,
        workflows: WorkflowService | None = None,
    ) -> None:
        self._row = row
        self.workflows = workflows
        #: type name -> its plugin, for ``reset_peer``; None outside a traversal.
        self._plugins = plugins
        self._nested = nested
        self._stack_name = stack_name
        self.action = action
        self.operation_id = operation_id
        self._journal = journal
        self._view = view
        self._traversal_id = traversal_id
        self.previous_properties = previous_properties
        self.update_policy = update_policy
        self.stack_timeout = stack_timeout
        self.secrets = secrets
        self.api = api

    @property
    def row(self) -> ResourceRecord:
        return self._row

    @property
    def resource_name(self) -> str:
        return self._row.name

    @property
    def stack_name(self) -> str:
        return self._stack_name

    @property
    def stack_id(self) -> str:
        return self._row.stack_id

    @property
    def physical_resource_name(self) -> str:
        return f"{self._stack_name}-{self._row.name}-{short_id(self._row.stack_id, self._row.id)}"

    @property
    def physical_id(self) -> str | None:
        return self._row.physical_id

    @property
    def data(self) -> Mapping[str, JSON]:
        return self._row.data

    def now(self) -> float:
        return time.time()

    @property
    def software(self) -> StoreSoftware:
        """This stack's rows in Heat's software API (``engine/software_port``)."""
        return StoreSoftware(self._journal.store, self._row.stack_id, self._row.name)

    @property
    def nested(self) -> NestedStacks:
        if self._nested is None:
            raise ResourceFailure("nested stacks are not available outside a stack operation")
        return self._nested

    async def _persist(self, fields: dict[str, Any]) -> None:
        # A fact: kept even if the traversal was superseded while the plugin
        # worked (the journal re-applies facts of a stale batch on their own).
        await self._journal.write(self._traversal_id, facts=[UpdateResource(self._row.id, fields)])
        self._remember(fields)

    def _remember(self, fields: dict[str, Any]) -> None:
        row = self._view.update(self._row.id, fields)
        if row is not None:
            self._row = row

    async def set_physical_id(self, physical_id: str | None, *, commit: bool = True) -> None:
        fields = {"physical_id": physical_id}
        if commit:
            await self._persist(fields)
            return
        # Queued in this turn's batch, not awaited: a job that ends in the
        # same turn writes it in the transaction of its outcome, merged into
        # the row's other update (one statement and commit fewer per wave).
        self._journal.post(self._traversal_id, facts=[UpdateResource(self._row.id, fields)])
        self._remember(fields)

    async def set_data(self, data: Mapping[str, JSON]) -> None:
        await self._persist({"data": dict(data)})

    async def emit(self, reason: str) -> None:
        r = self._row
        self._journal.submit(
            self._traversal_id,
            facts=[AppendEvent.about(r, self.action, "IN_PROGRESS", reason)],
        )

    async def peer(self, name: str) -> Peer | None:
        known = self._view.current(name) or self._by_reference(name)
        if known is None:
            return None
        row = self._journal.store.get_resource(known.id) or known  # fresh: signals
        return Peer(
            name=row.name,
            type=row.type,
            action=row.action,
            status=row.status,
            physical_id=row.physical_id,
            reference_id=reference_id(row),
            properties=row.properties,
            attributes=row.attributes,
            data=row.data,
        )

    async def reset_peer(self, name: str) -> None:
        """Run the peer's own plugin's ``reset`` on a context of the peer's
        row, journaled like ``set_data``, so one plugin never writes
        another's ``data`` and the write is the peer's own, idempotent
        logic (a re-run after a crash resets again, harmlessly).

        Why not through the signal path: signals are user-visible records
        with events, and their turn-taking blocks a thread, which an engine
        job must not. Instead, a signal whose delivery overlapped the reset
        (it may have read the data before the reset and written it back
        after) is waited for, and the peer reset once more: a signal sent
        before the reset ended is one the deleted waiter was meant for."""
        if self._plugins is None:
            raise ResourceFailure("resetting another resource needs a stack operation")
        known = self._view.current(name) or self._by_reference(name)
        plugin = None if known is None else self._plugins(known.type)
        if known is None or plugin is None:
            return
        await self._reset(plugin, known)
        store = self._journal.store
        racing = {s.id for s in store.pending_signals(known.stack_id, known.name)}
        if racing:
            await _consumed(store, known, racing)
            await self._reset(plugin, known)

    async def _reset(self, plugin: ResourcePlugin, known: ResourceRecord) -> None:
        row = self._journal.store.get_resource(known.id) or known
        ctx = EngineContext(
            row,
            stack_name=self._stack_name,
            action=self.action,
            operation_id=f"{self.operation_id}:reset:{row.name}",
            journal=self._journal,
            view=self._view,
            traversal_id=self._traversal_id,
            secrets=self.secrets,
            api=self.api,
            workflows=self.workflows,
        )
        await plugin.reset(ctx, row.properties)

    def _by_reference(self, ref: str) -> ResourceRecord | None:
        """A property holding ``get_resource: x`` carries x's reference id,
        not its name; a linear scan is fine for the few lookups a plugin
        makes (a deployment finding its server once)."""
        for row in self._view.current_rows():
            if ref in (row.physical_id, row.reference_id):
                return row
        return None


async def _consumed(store: Store, row: ResourceRecord, ids: set[int]) -> None:
    """Wait (without blocking the loop) until none of the signals ``ids``
    to ``row`` is pending, or :data:`RESET_SETTLE_SECONDS` passed."""
    deadline = time.monotonic() + RESET_SETTLE_SECONDS
    while time.monotonic() < deadline:
        pending = store.pending_signals(row.stack_id, row.name)
        if not any(s.id in ids for s in pending):
            return
        await asyncio.sleep(RESET_POLL_SECONDS)
