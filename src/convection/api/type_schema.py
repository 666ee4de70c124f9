"""Resource types as Heat's API shows them: the schema of a type, and the
template Heat generates for it (``resource-type-template``)."""

from __future__ import annotations

from typing import Any

from convection.resources import ResourcePlugin, schema_to_api

#: The version Heat writes into a generated HOT template.
GENERATED_VERSION = "2016-10-14"
SUPPORTED = {"status": "SUPPORTED", "version": None, "message": None, "previous_status": None}


def type_schema(
    name: str, plugin: type[ResourcePlugin], *, with_description: bool
) -> dict[str, Any]:
    """Heat's ``resource_schema``: properties, attributes, support status."""
    attributes = {k: v.to_api() for k, v in plugin.attributes_schema.items()}
    attributes.setdefault(
        "show", {"description": "Detailed information about resource.", "type": "map"}
    )
    out: dict[str, Any] = {
        "resource_type": name,
        "properties": schema_to_api(plugin.properties_schema),
        "attributes": attributes,
        "support_status": dict(SUPPORTED),
    }
    if with_description:
        out["description"] = description(plugin)
    return out


def description(plugin: type[ResourcePlugin]) -> str:
    doc = plugin.__doc__ or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ") if doc else ""


def generated_template(
    name: str, plugin: type[ResourcePlugin], template_type: str
) -> dict[str, Any]:
    """Heat's ``generate_template``: every property a parameter, every
    attribute an output."""
    schema = type_schema(name, plugin, with_description=False)
    params = {k: _parameter(v) for k, v in schema["properties"].items()}
    if template_type == "cfn":
        return {
            "AWSTemplateFormatVersion": "2010-09-09",
            "Description": f"Initial template of {name.rsplit('::', 1)[-1]}",
            "Parameters": params,
            "Resources": {
                name.rsplit("::", 1)[-1]: {
                    "Type": name,
                    "Properties": {k: {"Ref": k} for k in params},
                }
            },
            "Outputs": {
                k: {
                    "Description": v.get("description", ""),
                    "Value": {"Fn::GetAtt": [name.rsplit("::", 1)[-1], k]},
                }
                for k, v in schema["attributes"].items()
            },
        }
    short = name.rsplit("::", 1)[-1]
    return {
        "heat_template_version": GENERATED_VERSION,
        "description": f"Initial template of {short}",
        "parameters": params,
        "resources": {short: {"type": name, "properties": {k: {"get_param": k} for k in params}}},
        "outputs": {
            k: {"description": v.get("description", ""), "value": {"get_attr": [short, k]}}
            for k, v in schema["attributes"].items()
        },
    }


def _parameter(prop: dict[str, Any]) -> dict[str, Any]:
    kinds = {"map": "json", "list": "comma_delimited_list", "integer": "number", "any": "json"}
    out: dict[str, Any] = {"type": kinds.get(str(prop.get("type")), str(prop.get("type")))}
    if prop.get("description"):
        out["description"] = prop["description"]
    if "default" in prop:
        out["default"] = prop["default"]
    if prop.get("constraints"):
        out["constraints"] = prop["constraints"]
    return out
