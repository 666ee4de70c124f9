"""The plugin API is a promise to third parties: its names change on purpose only."""

from __future__ import annotations

import convection.resources.api as api

EXPECTED = [
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


def test_all_is_pinned() -> None:
    assert api.__all__ == EXPECTED
    assert len(set(api.__all__)) == len(api.__all__)


def test_every_exported_name_exists() -> None:
    for name in api.__all__:
        assert hasattr(api, name), name


def test_nothing_public_is_left_out() -> None:
    public = {n for n in vars(api) if not n.startswith("_")}
    assert public == set(EXPECTED)


def test_an_in_memory_context_says_it_has_no_nested_stacks() -> None:
    """A plugin that needs child stacks, run in a throwaway context, gets an
    error that says what to do, not a bare AttributeError later."""
    import asyncio

    import pytest

    from convection.common.errors import ConvectionError

    ctx = api.InMemoryContext()
    with pytest.raises(ConvectionError, match=r"nested\.create.*InMemoryContext\(nested=\.\.\.\)"):
        asyncio.run(ctx.nested.create(None))  # type: ignore[arg-type]
