"""What a workflow node's job may use: the store, the actions, the journal
(for the writes that must be durable before an action runs), the stack
and signal ports of Convection's own actions, and a way to hand a child
execution to this engine at once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from convection.common import DEFAULT_LIMITS, Limits
from convection.kernel import Journal
from convection.store import Store
from convection.workflows.actions import ActionRegistry, SignalOps, StackOps


@dataclass(frozen=True, slots=True)
class Services:
    store: Store
    journal: Journal[Store]
    registry: ActionRegistry
    stacks: StackOps | None = None
    signals: SignalOps | None = None
    limits: Limits = DEFAULT_LIMITS
    #: Take a traversal up now (a child execution this engine just started).
    take_up_now: Callable[[str], None] = lambda _traversal_id: None
