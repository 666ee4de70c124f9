"""ResourceGroup attributes, in the shapes Heat's ``get_attribute`` gives.

Heat (resource_group.py, grouputils): ``refs`` and a member attribute are
lists in index order; ``refs_map`` and ``attributes`` are maps by member
name; ``resource.N`` is a member's reference id and ``resource.N.attr`` (or
``[group, resource.N, attr]``) its attribute. A further path applies to
each member's value (``[group, attr, key]`` is every member's
``attr[key]``), not to the list.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Env

GROUP = """\
parameters:
  count: {type: number, default: 12}
  removal: {type: json, default: []}
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      removal_policies: {get_param: removal}
      resource_def:
        type: OS::Heat::Value
        properties:
          value: {name: 'm%index%', tags: ['t%index%', x]}
outputs:
  refs: {value: {get_attr: [group, refs]}}
  second_ref: {value: {get_attr: [group, refs, 1]}}
  refs_map: {value: {get_attr: [group, refs_map]}}
  values: {value: {get_attr: [group, value]}}
  names: {value: {get_attr: [group, value, name]}}
  first_tags: {value: {get_attr: [group, value, tags, 0]}}
  by_name: {value: {get_attr: [group, attributes, value]}}
  by_name_path: {value: {get_attr: [group, attributes, value, name]}}
  member: {value: {get_attr: [group, resource.2]}}
  member_attr: {value: {get_attr: [group, resource.2.value]}}
  member_path: {value: {get_attr: [group, resource.2.value, name]}}
  member_split: {value: {get_attr: [group, resource.2, value, tags, 0]}}
  removed: {value: {get_attr: [group, removed_rsrc_list]}}
"""


def shown(env: Env) -> dict[str, Any]:
    outs = env.stacks.show("p", "s")["outputs"]
    errors = {o["output_key"]: o["output_error"] for o in outs if "output_error" in o}
    assert errors == {}
    return {o["output_key"]: o.get("output_value") for o in outs}


@pytest.fixture
def created(memory_env: Env) -> dict[str, Any]:
    memory_env.create(GROUP)
    assert memory_env.wait()["stack_status"] == "CREATE_COMPLETE"
    return shown(memory_env)


def test_refs_and_member_values_are_lists_in_index_order(created: dict[str, Any]) -> None:
    names = [f"m{i}" for i in range(12)]
    assert len(created["refs"]) == 12
    assert created["second_ref"] == created["refs"][1]
    assert [v["name"] for v in created["values"]] == names  # "10" after "9"
    assert created["refs_map"] == {str(i): r for i, r in enumerate(created["refs"])}


def test_a_path_applies_to_every_member(created: dict[str, Any]) -> None:
    assert created["names"] == [f"m{i}" for i in range(12)]
    assert created["first_tags"] == [f"t{i}" for i in range(12)]


def test_attributes_is_a_map_by_member_name(created: dict[str, Any]) -> None:
    assert created["by_name"] == {str(i): created["values"][i] for i in range(12)}
    assert created["by_name_path"] == {str(i): f"m{i}" for i in range(12)}


def test_one_member_by_index(created: dict[str, Any]) -> None:
    assert created["member"] == created["refs"][2]
    assert created["member_attr"] == {"name": "m2", "tags": ["t2", "x"]}
    assert created["member_path"] == "m2"
    assert created["member_split"] == "t2"


def test_removed_members_are_listed_and_skipped(memory_env: Env) -> None:
    memory_env.create(GROUP, parameters={"count": 3})
    memory_env.wait()
    memory_env.update(GROUP, parameters={"count": 2, "removal": [{"resource_list": ["1"]}]})
    assert memory_env.wait()["stack_status"] == "UPDATE_COMPLETE"
    out = shown(memory_env)
    assert out["removed"] == ["1"]
    assert [v["name"] for v in out["values"]] == ["m0", "m2"]
    assert sorted(out["refs_map"]) == ["0", "2"]
    assert out["names"] == ["m0", "m2"]
