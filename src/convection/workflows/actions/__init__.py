"""Workflow actions: what a task runs (``std.*`` as Mistral's, and
Convection's own ``convection.*``), as plugins with typed input schemas.

The workflow engine calls exactly this::

    cls = default_registry().lookup(name)          # UnknownAction: did you mean ...
    diags = validate_input(cls, params, path)      # Mistral's "Invalid input [...]"
    outcome = await cls().run(ctx, params)          # Success | Failure | Sleep | Pending
    outcome = await cls().resume(ctx, params, state)   # after a Sleep's timer

Third-party actions are ``ActionPlugin`` subclasses declared in the
``convection.actions`` entry point group.
"""

from convection.workflows.actions.base import (
    JSON_TYPES,
    ActionContext,
    ActionPlugin,
    Failure,
    InputParam,
    Outcome,
    Pending,
    RunContext,
    SignalOps,
    Sleep,
    StackOps,
    Success,
    arguments,
    input_text,
)
from convection.workflows.actions.registry import (
    ENTRY_POINT_GROUP,
    ActionLoadError,
    ActionRegistry,
    DuplicateAction,
    UnknownAction,
    builtin_actions,
    default_registry,
)
from convection.workflows.actions.service_ports import ServicePorts
from convection.workflows.actions.validate import validate_input

__all__ = [
    "ENTRY_POINT_GROUP",
    "JSON_TYPES",
    "ActionContext",
    "ActionLoadError",
    "ActionPlugin",
    "ActionRegistry",
    "DuplicateAction",
    "Failure",
    "InputParam",
    "Outcome",
    "Pending",
    "RunContext",
    "ServicePorts",
    "SignalOps",
    "Sleep",
    "StackOps",
    "Success",
    "UnknownAction",
    "arguments",
    "builtin_actions",
    "default_registry",
    "input_text",
    "validate_input",
]
