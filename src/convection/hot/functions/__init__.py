"""Intrinsic functions, one module per family; ``base`` holds the tree."""

from convection.hot.functions.base import (
    DROP,
    ArgumentError,
    ExpandContext,
    Function,
    Invalid,
    Macro,
    Resolver,
    Scope,
    dependencies,
    expand,
    parse,
    resolve,
    to_data,
    validate,
)

__all__ = [
    "DROP",
    "ArgumentError",
    "ExpandContext",
    "Function",
    "Invalid",
    "Macro",
    "Resolver",
    "Scope",
    "dependencies",
    "expand",
    "parse",
    "resolve",
    "to_data",
    "validate",
]
