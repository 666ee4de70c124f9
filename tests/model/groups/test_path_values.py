"""How ``get_attr`` walks a group's stored attributes (Heat's shapes).

Heat's groups apply a path to each member, not to the group's value; the
resolver gets a ``PathValue`` from ``path_value`` and ``select_from_attribute``
hands it the path. Pure: no engine, no store.
"""

from __future__ import annotations

from typing import Any

import pytest

from convection.hot.functions.refs import select_from_attribute
from convection.model.groups.attributes import path_value

RG = "OS::Heat::ResourceGroup"
ASG = "OS::Heat::AutoScalingGroup"

STORED: dict[str, Any] = {
    "refs": ["r0", "r1"],
    "refs_map": {"0": "r0", "1": "r1"},
    "value": [{"k": "a", "l": [1, 2]}, {"k": "b", "l": [3, 4]}],
    "attributes": {"value": {"0": {"k": "a"}, "1": {"k": "b"}}},
    "outputs": {"value": {"m0": {"k": "a"}, "m1": {"k": "b"}}},
    "outputs_list": {"value": [{"k": "a"}, {"k": "b"}]},
    "resource.1": "r1",
    "resource.1.value": {"k": "b", "l": [3, 4]},
}


def get(type_name: str, name: str, *path: Any) -> Any:
    return select_from_attribute(path_value(type_name, name, STORED), list(path))


@pytest.mark.parametrize(
    ("name", "path", "expected"),
    [
        ("refs", [], ["r0", "r1"]),
        ("refs", [1], "r1"),
        ("refs_map", ["0"], "r0"),
        ("value", [], STORED["value"]),
        ("value", ["k"], ["a", "b"]),
        ("value", ["l", 1], [2, 4]),
        ("value", ["missing"], [None, None]),
        ("attributes", ["value"], {"0": {"k": "a"}, "1": {"k": "b"}}),
        ("attributes", ["value", "k"], {"0": "a", "1": "b"}),
        ("attributes", ["nothing"], None),
        ("resource.1", [], "r1"),
        ("resource.1", ["value", "k"], "b"),
        ("resource.1.value", ["l", 0], 3),
    ],
)
def test_resource_group_paths(name: str, path: list[Any], expected: Any) -> None:
    assert get(RG, name, *path) == expected


def test_autoscaling_group_outputs_apply_the_path_to_each_member() -> None:
    assert get(ASG, "outputs", "value", "k") == {"m0": "a", "m1": "b"}
    assert get(ASG, "outputs_list", "value", "k") == ["a", "b"]
    assert get(ASG, "refs", 0) == "r0"


def test_other_types_walk_the_stored_value() -> None:
    assert get("OS::Heat::Value", "value", 1, "k") == "b"
    assert get("OS::Heat::Value", "refs", 1) == "r1"
