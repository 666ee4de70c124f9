"""The public names of ``convection.model``, typed; ``__init__.py`` loads each
on first use (lazy_loader reads this stub)."""

from ._member_compile import MemberCompiles
from .child_environment import child_environment
from .compiler import Compiled, StackIdentity, StackInputs, compile_stack
from .definition import ResourceDefinition, StackDefinition, TypeCatalog
from .graph import CycleError, Graph
from .graph_format import GraphFormat, render_graph
from .groups.attributes import (
    MemberNotFound,
    MemberView,
    path_value,
    resource_group_attribute,
    scaling_group_attribute,
)
from .groups.members import (
    DEFAULT_INDEX_VAR,
    REMOVAL_APPEND,
    REMOVAL_UPDATE,
    Member,
    MemberDefinitions,
    member_definition,
    member_definitions,
    member_names,
    ordered,
    rolling_members,
    short_id,
    updated_blacklist,
)
from .groups.nested import chain_template, group_template, scaled_definition
from .groups.rolling import (
    Batch,
    batch_create_batches,
    resource_group_batches,
    scaling_group_batches,
    update_timeout,
)
from .groups.scaling import (
    ADJUSTMENT_TYPES,
    CHANGE_IN_CAPACITY,
    EXACT_CAPACITY,
    PERCENT_CHANGE_IN_CAPACITY,
    NoActionRequired,
    calculate_new_capacity,
    check_scaling_allowed,
    finished_scaling,
)
from .template_types import FacadeProperty, TypeInterface

__all__ = [
    "ADJUSTMENT_TYPES",
    "CHANGE_IN_CAPACITY",
    "DEFAULT_INDEX_VAR",
    "EXACT_CAPACITY",
    "PERCENT_CHANGE_IN_CAPACITY",
    "REMOVAL_APPEND",
    "REMOVAL_UPDATE",
    "Batch",
    "Compiled",
    "CycleError",
    "FacadeProperty",
    "Graph",
    "GraphFormat",
    "Member",
    "MemberCompiles",
    "MemberDefinitions",
    "MemberNotFound",
    "MemberView",
    "NoActionRequired",
    "ResourceDefinition",
    "StackDefinition",
    "StackIdentity",
    "StackInputs",
    "TypeCatalog",
    "TypeInterface",
    "batch_create_batches",
    "calculate_new_capacity",
    "chain_template",
    "check_scaling_allowed",
    "child_environment",
    "compile_stack",
    "finished_scaling",
    "group_template",
    "member_definition",
    "member_definitions",
    "member_names",
    "ordered",
    "path_value",
    "render_graph",
    "resource_group_attribute",
    "resource_group_batches",
    "rolling_members",
    "scaled_definition",
    "scaling_group_attribute",
    "scaling_group_batches",
    "short_id",
    "update_timeout",
    "updated_blacklist",
]
