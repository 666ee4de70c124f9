"""Planning: stored state + a new definition -> what to do, and in which order.

Pure: no I/O, no clock. See :mod:`convection.plan.model` for the data, and
:func:`build_plan` for how it is made.
"""

from convection.plan.build import build_action_plan, build_plan, steps
from convection.plan.decide import Stored
from convection.plan.digest import StaticInputs, digest, digests
from convection.plan.model import (
    Action,
    Change,
    CleanupMode,
    Deposed,
    Node,
    NodeKind,
    Plan,
    cleanup_key,
    update_key,
)
from convection.plan.preview import PREVIEW_KEYS, preview
from convection.plan.refine import TypeSchemas, decide_update
from convection.plan.resolve import RecordResolver, Unknown, reference_id
from convection.plan.text import format_changes, format_graph, format_plan

__all__ = [
    "PREVIEW_KEYS",
    "Action",
    "Change",
    "CleanupMode",
    "Deposed",
    "Node",
    "NodeKind",
    "Plan",
    "RecordResolver",
    "StaticInputs",
    "Stored",
    "TypeSchemas",
    "Unknown",
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
    "reference_id",
    "steps",
    "update_key",
]
