"""The service's typed errors map to Heat's status and ``type`` by class,
whatever their message says."""

from __future__ import annotations

import pytest

from convection.api.errors import classify
from convection.common.errors import (
    ActionInProgress,
    Conflict,
    ConvectionError,
    NotFound,
    NotSupported,
    ResourceActionNotSupported,
    ResourceNotAvailable,
    ResourceNotFound,
    StackExists,
)


@pytest.mark.parametrize(
    ("error", "code", "kind"),
    [
        (StackExists("worded any way"), 409, "StackExists"),
        (ActionInProgress("not supported, in progress, already exists"), 409, "ActionInProgress"),
        (NotSupported("already exists"), 400, "NotSupported"),
        (ResourceActionNotSupported("in progress"), 400, "ResourceActionNotSupported"),
        (ResourceNotAvailable("x"), 404, "ResourceNotAvailable"),
        (Conflict("not supported"), 409, "Conflict"),
        (ResourceNotFound("r", "s"), 404, "ResourceNotFound"),
        (NotFound("Stack", "s"), 404, "EntityNotFound"),
        (NotFound("Resource Type", "T"), 404, "ResourceTypeNotFound"),
    ],
)
def test_the_class_decides(error: ConvectionError, code: int, kind: str) -> None:
    mapped = classify(error)
    assert (mapped.code, mapped.type, mapped.message) == (code, kind, str(error))


def test_a_resource_not_found_names_its_stack_as_heat() -> None:
    assert str(ResourceNotFound("web", "prod")) == (
        "The Resource (web) could not be found in Stack prod."
    )
