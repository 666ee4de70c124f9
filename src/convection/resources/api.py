"""The resource plugin API: everything a resource type, the engine and the
validator need from ``convection.resources``, and nothing else.

This list is the promise to third-party plugins and is pinned by
``tests/resources/test_public_api.py``; the code lives in private modules.

A plugin subclasses :class:`ResourcePlugin`, declares ``type_name``,
``properties_schema`` (:class:`PropertySchema`) and ``attributes_schema``
(:class:`AttributeSchema`), and implements the actions it supports. Each
action gets a :class:`ResourceContext` and the resolved properties, returns a
small token, and its ``check_*_complete`` poll returns ``True``, ``False`` or
:class:`Wait`. See ``_context`` for the crash-safety contract.
"""

from convection.resources._context import (
    ApiAccess,
    InMemoryContext,
    Peer,
    ResourceContext,
    SoftwareRecords,
)
from convection.resources._nested import ChildResource, ChildStack, ChildState, NestedStacks
from convection.resources._plugin import (
    ActionNotSupported,
    Poll,
    Properties,
    ResourceFailure,
    ResourcePlugin,
    SignalPeer,
    Token,
    Wait,
)
from convection.resources._schema import (
    BASE_ATTRIBUTES,
    AttributeSchema,
    AttributeType,
    PropertySchema,
    PropertyType,
    SchemaError,
    schema_to_api,
)
from convection.resources._update import (
    UpdateAction,
    UpdateDecision,
    changed_properties,
    needs_replace,
)
from convection.resources._validate import validate_properties, validate_value
from convection.resources._workflows import NoWorkflowService, WorkflowService, WorkflowsFor

__all__ = [
    "BASE_ATTRIBUTES",
    "ActionNotSupported",
    "ApiAccess",
    "AttributeSchema",
    "AttributeType",
    "ChildResource",
    "ChildStack",
    "ChildState",
    "InMemoryContext",
    "NestedStacks",
    "NoWorkflowService",
    "Peer",
    "Poll",
    "Properties",
    "PropertySchema",
    "PropertyType",
    "ResourceContext",
    "ResourceFailure",
    "ResourcePlugin",
    "SchemaError",
    "SignalPeer",
    "SoftwareRecords",
    "Token",
    "UpdateAction",
    "UpdateDecision",
    "Wait",
    "WorkflowService",
    "WorkflowsFor",
    "changed_properties",
    "needs_replace",
    "schema_to_api",
    "validate_properties",
    "validate_value",
]
