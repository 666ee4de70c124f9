"""The shared vocabulary every layer speaks: JSON and path types,
diagnostics (problems as values, with ``file:line:column``), the exception
tree, limits and the budgets user expressions run under, Heat's action x
status states, and the garbage-collector pause bulk builders use.

Nothing here knows of templates, stacks, stores or processes; everything
may import it, and it imports no other part of Convection.
"""

from convection.common.budget import (
    BudgetedOptions,
    Exceeded,
    budget,
    budgeted_yaql_engine,
    check_bits,
    check_count,
    check_length,
    check_time,
    current_limits,
    default_yaql_options,
)
from convection.common.diagnostics import Diagnostic, Diagnostics, Mark, Severity, suggest
from convection.common.egress import DEFAULT_EGRESS, EgressPolicy, networks
from convection.common.errors import (
    ActionInProgress,
    Conflict,
    ConvectionError,
    ExpressionError,
    InvalidInput,
    LimitExceeded,
    NotFound,
    NotSupported,
    ResourceActionNotSupported,
    ResourceNotAvailable,
    ResourceNotFound,
    StackExists,
)
from convection.common.gc import collector_paused
from convection.common.limits import DEFAULT_LIMITS, Limits
from convection.common.states import Action, Status, state_name
from convection.common.types import JSON, Path, format_path

__all__ = [
    "DEFAULT_EGRESS",
    "DEFAULT_LIMITS",
    "JSON",
    "Action",
    "ActionInProgress",
    "BudgetedOptions",
    "Conflict",
    "ConvectionError",
    "Diagnostic",
    "Diagnostics",
    "EgressPolicy",
    "Exceeded",
    "ExpressionError",
    "InvalidInput",
    "LimitExceeded",
    "Limits",
    "Mark",
    "NotFound",
    "NotSupported",
    "Path",
    "ResourceActionNotSupported",
    "ResourceNotAvailable",
    "ResourceNotFound",
    "Severity",
    "StackExists",
    "Status",
    "budget",
    "budgeted_yaql_engine",
    "check_bits",
    "check_count",
    "check_length",
    "check_time",
    "collector_paused",
    "current_limits",
    "default_yaql_options",
    "format_path",
    "networks",
    "state_name",
    "suggest",
]
