"""A group's members share their compile (``convection.model._member_compile``:
one parse, one definition, as their template has no conditions), yet each
member stack keeps its own identity (pseudo-parameters) and parameters.
Conditions per member are covered by ``tests/model/test_member_compile.py``."""

from __future__ import annotations

import textwrap

from .conftest import HEADER, Env
from .test_group_template_members import shown
from .test_nested import create

MEMBER = HEADER + textwrap.dedent(
    """\
    parameters:
      index: {type: string}
    resources:
      v: {type: OS::Heat::Value, properties: {value: {get_param: index}}}
    outputs:
      name: {value: {get_param: OS::stack_name}}
      id: {value: {get_param: OS::stack_id}}
      v: {value: {get_attr: [v, value]}}
    """
)

GROUP = """\
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 4
      resource_def: {type: member.yaml, properties: {index: '%index%'}}
outputs:
  names: {value: {get_attr: [group, name]}}
  ids: {value: {get_attr: [group, id]}}
  refs: {value: {get_attr: [group, refs]}}
  v: {value: {get_attr: [group, v]}}
"""


def test_members_keep_their_own_identity_and_parameters(memory_env: Env) -> None:
    create(memory_env, GROUP, {"member.yaml": MEMBER})
    assert memory_env.wait()["stack_status"] == "CREATE_COMPLETE"
    out = shown(memory_env)
    assert len(set(out["ids"])) == 4 and len(set(out["names"])) == 4
    # A template resource's reference id is its nested stack's ARN (Heat's
    # TemplateResource.get_reference_id), so refs name each member's stack.
    arns = [
        f"arn:openstack:heat::p:stacks/{n}/{i}"
        for n, i in zip(out["names"], out["ids"], strict=True)
    ]
    assert out["refs"] == arns
    assert all(n.startswith("s-group-") for n in out["names"])
    assert out["v"] == ["0", "1", "2", "3"]
