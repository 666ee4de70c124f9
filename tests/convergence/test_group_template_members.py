"""Group members that are template resources: their outputs as attributes.

Heat's ResourceGroup/AutoScalingGroup read a member attribute from each
member, and a template-resource member's attributes are its nested
template's outputs. The member is made inside the group's child stack,
whose generated template reads nothing of it, so these tests check the
outputs reach the group's ``get_attr`` in every shape (list in index order,
``attributes`` map, ``resource.N``), through a registry alias, and two
levels down (a group of template members inside a nested stack).
"""

from __future__ import annotations

import textwrap
from typing import Any

from .conftest import HEADER, Env
from .test_nested import create

MEMBER = HEADER + textwrap.dedent(
    """\
    parameters:
      index: {type: string}
    resources:
      v:
        type: OS::Heat::Value
        properties:
          value: {name: {list_join: ['', [m, {get_param: index}]]}}
    outputs:
      out:
        value: {get_attr: [v, value]}
    """
)

GROUP = """\
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 3
      resource_def:
        type: MEMBER_TYPE
        properties:
          index: '%index%'
outputs:
  outs: {value: {get_attr: [group, out]}}
  names: {value: {get_attr: [group, out, name]}}
  by_name: {value: {get_attr: [group, attributes, out]}}
  one: {value: {get_attr: [group, resource.1, out]}}
  one_dotted: {value: {get_attr: [group, resource.2.out, name]}}
"""

SCALING = """\
resources:
  asg:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 2
      max_size: 2
      resource:
        type: member.yaml
        properties:
          index: x
outputs:
  listed: {value: {get_attr: [asg, outputs_list, out, name]}}
  one: {value: {get_attr: [asg, resource.0, out]}}
"""

WANT = {
    "outs": [{"name": "m0"}, {"name": "m1"}, {"name": "m2"}],
    "names": ["m0", "m1", "m2"],
    "by_name": {"0": {"name": "m0"}, "1": {"name": "m1"}, "2": {"name": "m2"}},
    "one": {"name": "m1"},
    "one_dotted": "m2",
}


def shown(env: Env, name: str = "s") -> dict[str, Any]:
    outs = env.stacks.show("p", name)["outputs"]
    assert [o["output_error"] for o in outs if "output_error" in o] == []
    return {o["output_key"]: o.get("output_value") for o in outs}


def test_group_of_template_members_reads_their_outputs(memory_env: Env) -> None:
    create(memory_env, GROUP.replace("MEMBER_TYPE", "member.yaml"), {"member.yaml": MEMBER})
    assert memory_env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert shown(memory_env) == WANT


def test_member_type_mapped_to_a_template_in_the_registry(memory_env: Env) -> None:
    env = "resource_registry:\n  My::Member: member.yaml\n"
    text = GROUP.replace("MEMBER_TYPE", "My::Member")
    create(memory_env, text, {"member.yaml": MEMBER}, environment=env)
    assert memory_env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert shown(memory_env) == WANT


def test_scaling_group_of_template_members(memory_env: Env) -> None:
    create(memory_env, SCALING, {"member.yaml": MEMBER})
    assert memory_env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert shown(memory_env) == {"listed": ["mx", "mx"], "one": {"name": "mx"}}


def test_two_levels_a_group_of_template_members_in_a_nested_stack(env: Env) -> None:
    tier = HEADER + textwrap.dedent(GROUP.replace("MEMBER_TYPE", "member.yaml"))
    parent = """\
    resources:
      tier:
        type: tier.yaml
    outputs:
      names: {value: {get_attr: [tier, names]}}
      by_name: {value: {get_attr: [tier, by_name]}}
    """
    create(env, parent, {"tier.yaml": tier, "member.yaml": MEMBER})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert shown(env) == {"names": WANT["names"], "by_name": WANT["by_name"]}


SECRET = HEADER + textwrap.dedent(
    """\
    parameters:
      password: {type: string, hidden: true, default: s3cret-value}
    outputs:
      pw: {value: {get_param: password}}
      plain: {value: shown}
    """
)


def test_a_member_output_of_a_hidden_parameter_shows_as_heat_shows_it(memory_env: Env) -> None:
    """The outputs are stored as the member's attributes. An output the
    child's author writes shows its value (Heat's ``format_stack_output``),
    so the owner's attribute does too; the parameter itself stays masked."""
    create(memory_env, "resources:\n  web: {type: secret.yaml}\n", {"secret.yaml": SECRET})
    assert memory_env.wait()["stack_status"] == "CREATE_COMPLETE"
    shown = memory_env.stacks.resource("p", "s", "web")["attributes"]
    assert shown["plain"] == "shown"
    assert shown["pw"] == "s3cret-value"
    [child] = memory_env.stacks.store.list_stacks(
        "p", parent_id=memory_env.stacks.show("p", "s")["id"]
    )
    assert memory_env.stacks.show("p", child.id)["parameters"]["password"] == "******"
