"""The public names of ``convection.plan``, typed; ``__init__.py`` loads each
on first use (lazy_loader reads this stub)."""

from .build import build_action_plan, build_plan, steps
from .decide import Stored
from .digest import StaticInputs, digest, digests
from .model import (
    Action,
    Change,
    CleanupMode,
    Deposed,
    Node,
    NodeKind,
    Plan,
    action_key,
    cleanup_key,
    update_key,
)
from .preview import PREVIEW_KEYS, always_updated, preview, preview_parameters, stored_entries
from .refine import TypeSchemas, decide_update
from .resolve import Lookup, RecordResolver, Unknown, reference_id
from .text import format_changes, format_graph, format_plan

__all__ = [
    "PREVIEW_KEYS",
    "Action",
    "Change",
    "CleanupMode",
    "Deposed",
    "Lookup",
    "Node",
    "NodeKind",
    "Plan",
    "RecordResolver",
    "StaticInputs",
    "Stored",
    "TypeSchemas",
    "Unknown",
    "action_key",
    "always_updated",
    "build_action_plan",
    "build_plan",
    "cleanup_key",
    "decide_update",
    "digest",
    "digests",
    "format_changes",
    "format_graph",
    "format_plan",
    "preview",
    "preview_parameters",
    "reference_id",
    "steps",
    "stored_entries",
    "update_key",
]
