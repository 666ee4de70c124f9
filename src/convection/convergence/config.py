"""Engine settings: how much runs at once, and how long a claim lasts."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from convection.common import DEFAULT_LIMITS, Limits


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineConfig:
    #: Jobs running at once in this engine, over every stack.
    concurrency: int = 64
    #: Per-stack limits (by stack id or name), tighter than ``concurrency``.
    per_stack: Mapping[str, int] = field(default_factory=dict)
    #: Per-resource-type limits (an API with a rate limit, say).
    per_type: Mapping[str, int] = field(default_factory=dict)
    #: How long a claimed node is ours; renewed while its job runs. A node
    #: whose lease lapsed (its engine died) is run again by another engine.
    lease_seconds: float = 30.0
    #: Poll interval when a ``check_*_complete`` says "not yet" without a Wait.
    poll_seconds: float = 1.0
    #: How often an idle engine looks for new work in the store.
    scan_seconds: float = 0.2
    #: What child stacks may add: nesting depth and resources per tree.
    limits: Limits = DEFAULT_LIMITS
    #: The REST API's base URL as outsiders reach it (``Settings.api_url``).
    #: Set, plugins get ``ctx.api`` and mint signal URLs against it; None,
    #: handles fall back to ``convection stack resource signal`` commands.
    api_url: str | None = None
    #: Heat's ``stack_action_timeout``: how long an action of a stack that
    #: gives no ``timeout_mins`` may take. Such a stack keeps showing
    #: ``timeout_mins`` as null, as in Heat; only its deadlines use this.
    default_timeout_mins: int = 60
    #: Who holds the leases; unique per engine instance.
    owner: str = field(default_factory=lambda: f"engine-{uuid.uuid4().hex[:12]}")

    def timeout_mins(self, given: int | None) -> int:
        """The minutes an action may take: the stack's own, or the default."""
        return given or self.default_timeout_mins
