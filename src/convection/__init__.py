"""Convection: declarative orchestration for Heat (HOT) templates.

The public surface is small and explicit; everything else is internal.
"""

from convection.common.diagnostics import Diagnostic, Diagnostics, Mark, Severity
from convection.common.errors import (
    Conflict,
    ConvectionError,
    ExpressionError,
    InvalidInput,
    LimitExceeded,
    NotFound,
)
from convection.common.limits import Limits

__version__ = "0.1.0"

__all__ = [
    "Conflict",
    "ConvectionError",
    "Diagnostic",
    "Diagnostics",
    "ExpressionError",
    "InvalidInput",
    "LimitExceeded",
    "Limits",
    "Mark",
    "NotFound",
    "Severity",
    "__version__",
]
