"""Heat's ``get_child_environment``: what a nested stack inherits.

A child stack gets its owner's resource registry, narrowed to the owner's
path, and its ``parameter_defaults`` and event sinks, never its
parameters. Both the engine (creating the child) and the service
(validating or previewing it) build the child from this one rule.
"""

from __future__ import annotations

from typing import Any

from convection.hot import EVENT_SINKS, PARAMETER_DEFAULTS, RESOURCE_REGISTRY, Document, SourceMap
from convection.model.definition import StackDefinition


def child_environment(definition: StackDefinition | None, name: str) -> Document:
    """The environment document of the child stack resource ``name`` owns."""
    if definition is None:
        return Document("environment", {}, SourceMap("environment"))
    env = definition.environment
    registry = env.resource_registry
    rdef = definition.resources.get(name)
    entry = None
    if rdef is not None:
        resolved = registry.resolve(rdef.type, rdef.name)
        # Only a mapping to the template is removed (``type: web.yaml``
        # written directly has no registry entry to remove).
        mapped = resolved.is_template and resolved.requested != resolved.type_name
        entry = resolved if mapped else None
    data: dict[str, Any] = {
        RESOURCE_REGISTRY: registry.for_nested(name, remove=entry).as_dict(),
        PARAMETER_DEFAULTS: dict(env.parameter_defaults),
    }
    if env.event_sinks:
        data[EVENT_SINKS] = [dict(s) for s in env.event_sinks]
    return Document("environment", data, SourceMap("environment"))
