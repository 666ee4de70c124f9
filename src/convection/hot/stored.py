"""What the views read of a stored template, in either format, unparsed.

Stack show and stack list need a template's description and its parameters'
types, defaults and hidden flags; they read the stored template as data and
must not pay for the parser. The section and key names of both formats are
written here once; :mod:`convection.hot.cfn_format` renames with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The keys that name a CloudFormation-format version.
CFN_VERSION_KEYS = ("AWSTemplateFormatVersion", "HeatTemplateFormatVersion")
#: CloudFormation section -> HOT section.
CFN_SECTIONS = {
    "Description": "description",
    "Mappings": "mappings",
    "Parameters": "parameters",
    "Resources": "resources",
    "Outputs": "outputs",
    "Conditions": "conditions",
}
#: Heat's CloudFormation parameter types -> HOT's.
CFN_PARAMETER_TYPES = {
    "String": "string",
    "Number": "number",
    "CommaDelimitedList": "comma_delimited_list",
    "Json": "json",
    "Boolean": "boolean",
}
#: The sections a view needs, in both formats.
HEAD_SECTIONS = frozenset(
    {"description", "parameters", "Description", "Parameters", *CFN_VERSION_KEYS}
)


def is_cfn(data: object) -> bool:
    """Whether a loaded template is in a CloudFormation format."""
    return isinstance(data, Mapping) and any(k in data for k in CFN_VERSION_KEYS)


def template_description(data: Mapping[str, Any]) -> Any:
    """The template's description as written, or None."""
    return data.get("Description" if is_cfn(data) else "description")


def parameter_specs(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each parameter as ``{type, hidden, default}`` in HOT's terms.

    CloudFormation's ``NoEcho`` hides a value when it reads ``true`` in any
    case, as Heat's ``Schema.from_dict``; HOT's ``hidden`` by truthiness.
    """
    cfn = is_cfn(data)
    section = data.get("Parameters" if cfn else "parameters")
    if not isinstance(section, Mapping):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for name, spec in section.items():
        if not isinstance(spec, Mapping):
            continue
        if cfn:
            ptype = spec.get("Type")
            out[name] = {
                "type": CFN_PARAMETER_TYPES.get(ptype, ptype) if isinstance(ptype, str) else ptype,
                "hidden": str(spec.get("NoEcho", "false")).lower() == "true",
                "default": spec.get("Default"),
            }
        else:
            out[name] = {
                "type": spec.get("type"),
                "hidden": bool(spec.get("hidden")),
                "default": spec.get("default"),
            }
    return out
