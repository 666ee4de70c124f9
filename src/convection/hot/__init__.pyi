"""The public names of ``convection.hot``, typed; ``__init__.py`` loads each
on first use (lazy_loader reads this stub)."""

from . import functions
from .conditions import Conditions
from .constraints import (
    MASK,
    AllowedValues,
    Constraint,
    CustomConstraint,
    Length,
    Range,
    bool_from_string,
    check_all,
    custom_constraint_names,
    register_custom_constraint,
    str_to_num,
)
from .environment import (
    EVENT_SINKS,
    PARAMETER_DEFAULTS,
    RESOURCE_REGISTRY,
    Environment,
    ResourceRegistry,
    is_template_name,
    merge_environments,
    parse_environment,
)
from .files import FileSource, collect_files, file_url, load_stack_files
from .functions.base import Function, dependencies, has_functions, resolve, to_data
from .functions.refs import PathValue, computed_references, select_from_attribute
from .loader import Document, SourceMap, load
from .parameters import (
    ParameterValues,
    changed_immutable,
    immutable_error,
    pseudo_parameters,
    resolve_parameters,
    stack_arn,
    validate_output,
)
from .stored import HEAD_SECTIONS, is_cfn, parameter_specs, template_description
from .template import OutputSnippet, ResourceSnippet, Template, parse_template
from .versions import (
    TemplateVersion,
    all_versions,
    function_descriptions,
    get_version,
    version_by_key,
)

__all__ = [
    "EVENT_SINKS",
    "HEAD_SECTIONS",
    "MASK",
    "PARAMETER_DEFAULTS",
    "RESOURCE_REGISTRY",
    "AllowedValues",
    "Conditions",
    "Constraint",
    "CustomConstraint",
    "Document",
    "Environment",
    "FileSource",
    "Function",
    "Length",
    "OutputSnippet",
    "ParameterValues",
    "PathValue",
    "Range",
    "ResourceRegistry",
    "ResourceSnippet",
    "SourceMap",
    "Template",
    "TemplateVersion",
    "all_versions",
    "bool_from_string",
    "changed_immutable",
    "check_all",
    "collect_files",
    "computed_references",
    "custom_constraint_names",
    "dependencies",
    "file_url",
    "function_descriptions",
    "functions",
    "get_version",
    "has_functions",
    "immutable_error",
    "is_cfn",
    "is_template_name",
    "load",
    "load_stack_files",
    "merge_environments",
    "parameter_specs",
    "parse_environment",
    "parse_template",
    "pseudo_parameters",
    "register_custom_constraint",
    "resolve",
    "resolve_parameters",
    "select_from_attribute",
    "stack_arn",
    "str_to_num",
    "template_description",
    "to_data",
    "validate_output",
    "version_by_key",
]
