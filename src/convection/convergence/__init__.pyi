"""The public names of ``convection.convergence``, typed; ``__init__.py`` loads each
on first use (lazy_loader reads this stub)."""

from .config import EngineConfig
from .context import EngineContext
from .hooks import HOOK_ACTIONS, WAKE_PURPOSE, cleared_reason, parked, paused_reason
from .hub import NestedHub
from .nested import outside_traversal
from .operations import (
    Operation,
    Warm,
    delete_operation,
    rollback_operation,
    start_operation,
    whole_stack_operation,
)
from .signal_wake import signal_wakes
from .software_port import deployment_view
from .templates import Definitions
from .view import StackView
from .walker import Engine

__all__ = [
    "HOOK_ACTIONS",
    "WAKE_PURPOSE",
    "Definitions",
    "Engine",
    "EngineConfig",
    "EngineContext",
    "NestedHub",
    "Operation",
    "StackView",
    "Warm",
    "cleared_reason",
    "delete_operation",
    "deployment_view",
    "outside_traversal",
    "parked",
    "paused_reason",
    "rollback_operation",
    "signal_wakes",
    "start_operation",
    "whole_stack_operation",
]
