"""``resource_facade`` in a nested template's outputs reads the owner.

Heat resolves the function against the parent resource's definition
wherever the child's template uses it, outputs included (a provider
template commonly passes its owner's metadata straight out).
"""

from __future__ import annotations

import textwrap

from convection.model.compiler import StackInputs

from .conftest import HEADER, Env

WEB = HEADER + textwrap.dedent(
    """\
    resources:
      n: {type: OS::Heat::None}
    outputs:
      meta: {value: {resource_facade: metadata}}
      policy: {value: {resource_facade: deletion_policy}}
      rolling: {value: {resource_facade: update_policy}}
    """
)

PARENT = """\
parameters:
  role: {type: string, default: frontend}
resources:
  web:
    type: web.yaml
    deletion_policy: Retain
    metadata: {role: {get_param: role}}
    update_policy: {batch: 2}
outputs:
  meta: {value: {get_attr: [web, meta]}}
  policy: {value: {get_attr: [web, policy]}}
  rolling: {value: {get_attr: [web, rolling]}}
"""


def test_resource_facade_in_nested_outputs_reads_the_owner(env: Env) -> None:
    inputs = StackInputs.from_text(HEADER + PARENT, files={"web.yaml": WEB})
    env.stacks.create("p", "s", inputs)
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    [child] = env.store.list_stacks("p", parent_id=env.store.get_stack("p", "s").id)  # type: ignore[union-attr]
    errors = [o for o in child.outputs if "output_error" in o]
    assert errors == []
    shown = {o["output_key"]: o.get("output_value") for o in env.stacks.show("p", "s")["outputs"]}
    assert shown == {"meta": {"role": "frontend"}, "policy": "Retain", "rolling": {"batch": 2}}


def test_resource_facade_in_a_top_level_output_is_an_output_error(env: Env) -> None:
    text = """\
    resources:
      n: {type: OS::Heat::None}
    outputs:
      m: {value: {resource_facade: metadata}}
    """
    env.create(text)
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    [out] = env.stacks.show("p", "s")["outputs"]
    assert "resource_facade" in out["output_error"]
