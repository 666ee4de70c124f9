"""Child templates and group attributes."""

from __future__ import annotations

import pytest

from convection.model.groups.attributes import (
    MemberNotFound,
    MemberView,
    resource_group_attribute,
    scaling_group_attribute,
)
from convection.model.groups.nested import chain_template, group_template, scaled_definition

MEMBERS = [
    MemberView("0", "id-0", {"output": "a", "size": 1}),
    MemberView("2", "id-2", {"output": "b", "size": 2}),
]


def test_group_template_has_resources_and_refs_map() -> None:
    t = group_template([("0", {"type": "T"}), ("1", {"type": "T"})], ["0", "1", "9"])
    assert t["resources"] == {"0": {"type": "T"}, "1": {"type": "T"}}
    assert t["outputs"]["refs_map"]["value"] == {
        "0": {"get_resource": "0"},
        "1": {"get_resource": "1"},
    }


def test_chain_template_serial_and_concurrent() -> None:
    serial = chain_template(["A", "B", "C"], {"p": 1}, False)["resources"]
    assert serial["0"] == {"type": "A", "properties": {"p": 1}}
    assert serial["2"]["depends_on"] == ["1"]
    concurrent = chain_template(["A", "B"], None, True)["resources"]
    assert "depends_on" not in concurrent["1"] and "properties" not in concurrent["1"]


def test_scaled_definition_keeps_resource_keys() -> None:
    snippet = {"type": "T", "properties": {"a": 1}, "metadata": None}
    assert scaled_definition(snippet) == {"type": "T", "properties": {"a": 1}}


def test_resource_group_attributes() -> None:
    assert resource_group_attribute("refs", MEMBERS, "g") == ["id-0", "id-2"]
    assert resource_group_attribute("refs_map", MEMBERS, "g") == {"0": "id-0", "2": "id-2"}
    assert resource_group_attribute("output", MEMBERS, "g") == ["a", "b"]
    assert resource_group_attribute("resource.2", MEMBERS, "g") == "id-2"
    assert resource_group_attribute("resource.2.output", MEMBERS, "g") == "b"
    assert resource_group_attribute("attributes", MEMBERS, "g")["output"] == {"0": "a", "2": "b"}
    assert resource_group_attribute("removed_rsrc_list", MEMBERS, "g", ["1"]) == ["1"]
    with pytest.raises(MemberNotFound, match=r"Member '1' not found in group resource 'g'\."):
        resource_group_attribute("resource.1", MEMBERS, "g")


def test_scaling_group_attributes_count_members_by_position() -> None:
    assert scaling_group_attribute("current_size", MEMBERS, "asg") == 2
    assert scaling_group_attribute("resource.1", MEMBERS, "asg") == "id-2"
    assert scaling_group_attribute("resource.0.size", MEMBERS, "asg") == 1
    assert scaling_group_attribute("outputs_list", MEMBERS, "asg")["output"] == ["a", "b"]
    assert scaling_group_attribute("outputs", MEMBERS, "asg")["size"] == {"0": 1, "2": 2}
    with pytest.raises(MemberNotFound):
        scaling_group_attribute("resource.2", MEMBERS, "asg")
