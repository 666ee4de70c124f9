"""The public names of ``convection.resources``, typed; ``__init__.py`` loads each
on first use (lazy_loader reads this stub)."""

from ._context import ApiAccess, InMemoryContext, Peer
from ._nested import ChildResource, ChildStack, ChildState
from .api import (
    ActionNotSupported,
    NestedStacks,
    NoWorkflowService,
    ResourceFailure,
    ResourcePlugin,
    SignalPeer,
    UpdateAction,
    Wait,
    WorkflowService,
    WorkflowsFor,
    changed_properties,
    schema_to_api,
)
from .heat.template_resource import template_type
from .registry import TypeRegistry, default_registry
from .signal_urls import SIGNAL, TOKEN_PARAM, WAITCONDITION

__all__ = [
    "SIGNAL",
    "TOKEN_PARAM",
    "WAITCONDITION",
    "ActionNotSupported",
    "ApiAccess",
    "ChildResource",
    "ChildStack",
    "ChildState",
    "InMemoryContext",
    "NestedStacks",
    "NoWorkflowService",
    "Peer",
    "ResourceFailure",
    "ResourcePlugin",
    "SignalPeer",
    "TypeRegistry",
    "UpdateAction",
    "Wait",
    "WorkflowService",
    "WorkflowsFor",
    "changed_properties",
    "default_registry",
    "schema_to_api",
    "template_type",
]
