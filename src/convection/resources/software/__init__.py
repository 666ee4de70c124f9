"""Heat's software configuration types as resource plugins.

Configs (:mod:`.config`) are data kept in the resource's ``data`` with a
config id as physical id: OS::Heat::SoftwareConfig, StructuredConfig,
SoftwareComponent, CloudConfig and MultipartMime. Deployments
(:mod:`.deployment`, :mod:`.group`) find their config with ``ctx.peer``,
derive Heat's config for the action, and run it on their server through
the library in :mod:`convection.software`, whose hooks are picked by the
config's ``group``.
"""

from __future__ import annotations

from convection.resources._plugin import ResourcePlugin
from convection.resources.software.config import (
    CloudConfig,
    MultipartMime,
    SoftwareComponent,
    SoftwareConfig,
    StructuredConfig,
)
from convection.resources.software.deployment import SoftwareDeployment, StructuredDeployment
from convection.resources.software.group import (
    SoftwareDeploymentGroup,
    SoftwareDeployments,
    StructuredDeploymentGroup,
    StructuredDeployments,
)


def plugins() -> tuple[type[ResourcePlugin], ...]:
    """Every software type, for the built-in registry."""
    return (
        SoftwareConfig,
        StructuredConfig,
        SoftwareComponent,
        CloudConfig,
        MultipartMime,
        SoftwareDeployment,
        StructuredDeployment,
        SoftwareDeploymentGroup,
        StructuredDeploymentGroup,
        SoftwareDeployments,
        StructuredDeployments,
    )


__all__ = [
    "CloudConfig",
    "MultipartMime",
    "SoftwareComponent",
    "SoftwareConfig",
    "SoftwareDeployment",
    "SoftwareDeploymentGroup",
    "SoftwareDeployments",
    "StructuredConfig",
    "StructuredDeployment",
    "StructuredDeploymentGroup",
    "StructuredDeployments",
    "plugins",
]
