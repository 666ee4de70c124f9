"""The public names of ``convection.service``, typed; ``__init__.py`` loads each
on first use (lazy_loader reads this stub)."""

from .inputs import StackPatch, document, hooks_environment
from .software import ConfigNotFound, DeploymentNotFound, SoftwareService
from .sources import read_inputs, read_patch
from .stacks import Stacks, StacksConfig
from .stacks_read import FILTER_KEYS, StackReads
from .validate import validate_template
from .views import MASK, hidden_parameters, iso

__all__ = [
    "FILTER_KEYS",
    "MASK",
    "ConfigNotFound",
    "DeploymentNotFound",
    "SoftwareService",
    "StackPatch",
    "StackReads",
    "Stacks",
    "StacksConfig",
    "document",
    "hidden_parameters",
    "hooks_environment",
    "iso",
    "read_inputs",
    "read_patch",
    "validate_template",
]
