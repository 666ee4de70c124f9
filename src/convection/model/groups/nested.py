"""The child templates of groups: plain HOT data for the nested stack.

Every child template carries an output ``refs_map`` (member name → its
reference id), as Heat's groups do, so the group can answer ``refs`` from
the child's outputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from convection.model.groups.members import MemberDefinitions

#: Heat builds group templates in this version.
CHILD_VERSION = "2015-04-30"


def group_template(definitions: MemberDefinitions, output_names: Sequence[str]) -> dict[str, Any]:
    """A nested template holding ``definitions``; ``refs_map`` covers the
    members in ``output_names`` that the template defines."""
    resources = {name: dict(defn) for name, defn in definitions}
    refs = {n: {"get_resource": n} for n in output_names if n in resources}
    return {
        "heat_template_version": CHILD_VERSION,
        "resources": resources,
        "outputs": {"refs_map": {"value": refs}},
    }


def chain_template(
    types: Sequence[str], properties: Mapping[str, Any] | None, concurrent: bool
) -> dict[str, Any]:
    """ResourceChain: member ``i`` has type ``types[i]``, every member gets
    the same properties, and unless ``concurrent`` each waits for the one
    before it."""
    definitions: MemberDefinitions = []
    for index, type_name in enumerate(types):
        defn: dict[str, Any] = {"type": type_name}
        if properties:
            defn["properties"] = dict(properties)
        if index > 0 and not concurrent:
            defn["depends_on"] = [str(index - 1)]
        definitions.append((str(index), defn))
    return group_template(definitions, [n for n, _ in definitions])


def scaled_definition(resource: Mapping[str, Any]) -> dict[str, Any]:
    """AutoScalingGroup's ``resource`` snippet as a member definition: the
    HOT resource keys it sets, nothing else."""
    keys = ("type", "properties", "metadata", "depends_on", "deletion_policy", "update_policy")
    return {k: resource[k] for k in keys if resource.get(k) is not None}
