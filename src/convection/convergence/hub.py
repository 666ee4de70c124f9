"""The engine's memory of the child stacks its jobs start and end.

A group's members are hundreds of child stacks: their creates and deletes
of one event-loop turn are written in one transaction, and a child that
ends here hands its owner what it just wrote, so nothing is read back.
:class:`NestedHub` keeps that, and the shared compile of the members
(``MemberCompiles``); ``nested`` drives children through it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from convection.common import Limits
from convection.convergence.operations import Warm, WarmEntry
from convection.convergence.templates import Definitions
from convection.convergence.view import evolve
from convection.hot import Document, SourceMap, load
from convection.model import MemberCompiles, StackDefinition
from convection.store import (
    NewStack,
    NodeRecord,
    ResourceRecord,
    StackRecord,
    StartedStack,
    Store,
    TraversalRecord,
    TraversalStart,
)

_log = logging.getLogger(__name__)

#: Heat's messages (``RequestLimitExceeded``).
LIMIT_ERROR = "RequestLimitExceeded"
TOO_MANY = (
    "Request limit exceeded: You have reached the maximum resources per stack, "
    "please delete some resources."
)


@dataclass(slots=True, kw_only=True)
class ChildStart:
    """One child create waiting for its turn's batch."""

    store: Store
    limit: int
    new: NewStack
    definition: StackDefinition
    done: asyncio.Future[bool] | None = None
    started: StartedStack | None = None


def _write_starts(starts: list[ChildStart]) -> bool:
    """Write a turn's child creates at once; False when the batch was
    refused as a whole (each then creates its child on its own)."""
    try:
        written = starts[0].store.start_stacks([s.new for s in starts], limit=starts[0].limit)
    except Exception:  # a name taken (a re-run), or the store: one by one says which
        _log.debug("a batch of %d child stacks goes one by one", len(starts), exc_info=True)
        return False
    if written is None:
        return False
    for start, done in zip(starts, written, strict=True):
        start.started = done
    return True


@dataclass(slots=True, kw_only=True)
class ChildRestart:
    """A new traversal of an existing child (a delete) waiting for its
    turn's batch; ``stack`` is the child as the start leaves it."""

    store: Store
    start: TraversalStart
    stack: StackRecord
    records: list[ResourceRecord]
    done: asyncio.Future[bool] | None = None


def _write_restarts(restarts: list[ChildRestart]) -> bool:
    """Write a turn's child deletes at once; False when refused as a whole."""
    try:
        restarts[0].store.start_traversals([r.start for r in restarts])
    except Exception:  # the store, or a stack gone: one by one says which
        _log.debug("a batch of %d child deletes goes one by one", len(restarts), exc_info=True)
        return False
    return True


def _settle(done: asyncio.Future[bool] | None, written: bool) -> None:
    if done is not None and not done.done():
        done.set_result(written)


def _with_resource(node: NodeRecord, resource_id: int | None) -> NodeRecord:
    return dataclasses.replace(node, resource_id=resource_id)


@dataclass
class NestedHub:
    """What every child-stack operation of one engine shares: the compiled
    definitions cache, the warm hand-over to the walker, a cache of loaded
    child templates by content (a group's 1,000 members share one), and the
    child creates of this event-loop turn, written together."""

    definitions: Definitions
    warm: Warm
    #: Called with a traversal id this engine just started (take it up now).
    started: Callable[[str], None] = lambda _tid: None
    #: Run a traversal this engine started with its lease already written
    #: (no reads, no take). None outside an engine: creates go one by one.
    adopt: Callable[[TraversalRecord, StackRecord], None] | None = None
    #: child stack id -> (traversal, node key) of the owner node that
    #: started its current action, so the child's end wakes that node
    #: without reading the owner (and a delete's cleanup node at all).
    owners: dict[str, tuple[str, str]] = field(default_factory=dict)
    _docs: OrderedDict[str, Document] = field(default_factory=OrderedDict)
    #: Parses and definitions a group's members share, by owner stack id
    #: (dropped by the walker when that stack's traversal ends).
    compiles: MemberCompiles = field(default_factory=MemberCompiles)
    _starts: list[ChildStart] = field(default_factory=list)
    _restarts: list[ChildRestart] = field(default_factory=list)
    #: The event loop the queued batch belongs to, and whether its flush
    #: is scheduled there.
    _loop: asyncio.AbstractEventLoop | None = None
    _flushing: bool = False
    #: Child records a poll read once their action had ended (see remember).
    _settled: OrderedDict[str, StackRecord] = field(default_factory=OrderedDict)

    def remember(self, stack: StackRecord) -> None:
        """Keep a settled child's record (written by its traversal's end in
        this engine, or read by a poll) for the owner's next poll and its
        outputs: a settled child changes only with its next action, and
        only the owner starts one (which forgets the record first). Taken
        by ``outputs``, and only a few kept."""
        self._settled[stack.id] = stack
        while len(self._settled) > 1024:
            self._settled.popitem(last=False)

    def recall(self, stack_id: str, *, keep: bool = False) -> StackRecord | None:
        if keep:
            return self._settled.get(stack_id)
        return self._settled.pop(stack_id, None)

    def began(self, stack_id: str, owner: tuple[str, str]) -> None:
        """The owner node ``owner`` (traversal, key) started an action on
        the child: forget what is known of it, and wake that node at its end."""
        self._settled.pop(stack_id, None)
        self.owners.pop(stack_id, None)
        self.owners[stack_id] = owner
        while len(self.owners) > 100_000:  # children that ended elsewhere
            del self.owners[next(iter(self.owners))]

    def start_later(self, start: ChildStart) -> asyncio.Future[bool]:
        """Queue a child create for this turn's batch; the future says
        whether it was written (False: create it on its own)."""
        loop = self._queue()
        self._starts.append(start)
        start.done = loop.create_future()
        return start.done

    def restart_later(self, restart: ChildRestart) -> asyncio.Future[bool]:
        """Queue a new traversal of an existing child (a delete) for this
        turn's batch; the future says whether it was written."""
        loop = self._queue()
        self._restarts.append(restart)
        restart.done = loop.create_future()
        return restart.done

    def _queue(self) -> asyncio.AbstractEventLoop:
        """This turn's loop, with the batch's flush scheduled on it. What a
        loop that is gone left queued (a run cancelled mid-turn) is
        dropped: like a crash, those jobs run again and find their child
        or make it."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._starts, self._restarts = [], []
            self._loop, self._flushing = loop, False
        if not self._flushing:
            self._flushing = True
            loop.call_soon(self._flush)
        return loop

    def _flush(self) -> None:
        self._flushing = False
        starts, self._starts = self._starts, []
        restarts, self._restarts = self._restarts, []
        if starts:
            written = _write_starts(starts)
            for start in starts:
                if written:
                    self._hand_over(start)
                _settle(start.done, written)
        if restarts:
            written = _write_restarts(restarts)
            for restart in restarts:
                if written:
                    self._hand_over_restart(restart)
                _settle(restart.done, written)

    def _hand_over_restart(self, restart: ChildRestart) -> None:
        start = restart.start
        self.warm.entries[start.traversal.id] = WarmEntry(None, restart.records, list(start.nodes))
        if self.adopt is not None:
            self.adopt(start.traversal, restart.stack)

    def _hand_over(self, start: ChildStart) -> None:
        """The new traversal goes to the engine warm, as ``start_operation``
        hands it over, and is run at once."""
        assert start.started is not None
        new = start.new
        ids = start.started.resource_ids
        rows = [evolve(r, {"id": i}) for r, i in zip(new.resources, ids, strict=True)]
        by_name = {r.name: r.id for r in rows}
        nodes = [
            n if n.resource_id is not None else _with_resource(n, by_name.get(n.resource_name))
            for n in new.nodes
        ]
        stack = dataclasses.replace(new.stack, template_id=start.started.template_id)
        self.definitions.put(start.started.template_id, stack.id, start.definition)
        self.warm.entries[new.traversal.id] = WarmEntry(start.definition, rows, nodes)
        if self.adopt is not None:
            self.adopt(new.traversal, stack)

    def document(self, template: Mapping[str, Any] | str, name: str, limits: Limits) -> Document:
        """The child's template as a loaded document, cached by content."""
        if not isinstance(template, str):
            return Document(name, dict(template), SourceMap(name))
        key = hashlib.blake2b(f"{name}\0{template}".encode(), digest_size=16).hexdigest()
        found = self._docs.get(key)
        if found is None:
            found = self._docs[key] = load(template, name, limits=limits)
            while len(self._docs) > 64:
                self._docs.popitem(last=False)
        return found
