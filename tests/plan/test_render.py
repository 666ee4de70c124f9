"""The plan's other renderings: JSON, Heat's preview shape, and digests."""

from __future__ import annotations

import json
from typing import Any

from convection.plan import PREVIEW_KEYS, Action, build_plan, digest, preview
from convection.plan.codec import decode, encode
from convection.plan.digest import StaticInputs

TEMPLATE = """
parameters:
  size: {type: number, default: 1}
resources:
  keep: {type: OS::Heat::TestResource, properties: {value: same}}
  grow: {type: OS::Heat::TestResource, properties: {value: {get_param: size}}}
  swap: {type: OS::Heat::TestResource, properties: {value: a, update_replace_value: x}}
  gone: {type: OS::Heat::None}
  user: {type: OS::Heat::TestResource, properties: {value: {get_attr: [swap, output]}}}
"""


def test_codec_round_trips_a_plan(kit: Any) -> None:
    old = kit.compile(TEMPLATE)
    plan = build_plan(old, [], kit.registry, operation="CREATE")
    data = json.loads(json.dumps(encode(plan)))
    assert decode(data) == plan


def test_preview_buckets_with_reasons(kit: Any) -> None:
    old = kit.compile(TEMPLATE)
    new_text = TEMPLATE.replace("update_replace_value: x", "update_replace_value: y").replace(
        "  gone: {type: OS::Heat::None}\n", "  new: {type: OS::Heat::None}\n"
    )
    new = kit.compile(new_text, {"size": 2})
    rows = kit.stored(old)
    result = preview(build_plan(new, rows, kit.registry), new, rows, stack_name="s")
    assert tuple(result) == PREVIEW_KEYS
    names = {k: [(e["resource_name"], e["reason"]) for e in v] for k, v in result.items()}
    assert names["unchanged"] == [("keep", "unchanged")]
    assert names["updated"] == [
        ("grow", "property value is updated in place"),
        ("user", "swap may change (decided when the update runs)"),
    ]
    assert [n for n, _ in names["replaced"]] == ["swap"]
    assert names["added"] == [("new", "new resource")]
    assert names["deleted"] == [("gone", "not in the template")]
    swap = result["replaced"][0]
    assert swap["physical_resource_id"] == "swap-phys"
    assert swap["required_by"] == ["user"]
    assert swap["resource_status"] == "COMPLETE"


def test_digest_sees_parameter_values_but_not_resource_values(kit: Any) -> None:
    one, two = kit.compile(TEMPLATE), kit.compile(TEMPLATE, {"size": 2})
    d1 = digest(one.resources["grow"], StaticInputs(one))
    d2 = digest(two.resources["grow"], StaticInputs(two))
    assert d1 != d2
    assert digest(one.resources["grow"], StaticInputs(one)) == d1
    same1 = digest(one.resources["user"], StaticInputs(one))
    assert same1 == digest(two.resources["user"], StaticInputs(two))


OWNERS = """
resources:
  tr: {type: child.yaml, properties: {x: a}}
  grp: {type: OS::Heat::ResourceGroup, properties: {count: 1, resource_def: {type: OS::Heat::None}}}
  st: {type: OS::Heat::Stack, properties: {template: "heat_template_version: 2018-08-31"}}
  chain: {type: OS::Heat::ResourceChain, properties: {resources: [OS::Heat::None]}}
  deploy:
    type: OS::Heat::SoftwareDeploymentGroup
    properties: {config: cfg, servers: {}}
  plain: {type: OS::Heat::None}
  handle: {type: OS::Heat::UpdateWaitConditionHandle}
"""
CHILD = {"child.yaml": "heat_template_version: 2018-08-31\nparameters:\n  x: {type: string}\n"}


class _WithTemplates:
    """The registry, and a template resource's class for its file."""

    def __init__(self, kit: Any) -> None:
        self.kit = kit

    def get(self, type_name: str, /) -> Any:
        from convection.hot import is_template_name
        from convection.resources import template_type

        if is_template_name(type_name):
            return template_type(type_name, CHILD.get(type_name))
        return self.kit.registry.get(type_name)


def test_preview_lists_nested_stack_owners_as_updated_even_when_unchanged(kit: Any) -> None:
    """Heat's StackResource._needs_update (template resources, groups,
    ResourceChain, and SoftwareDeploymentGroup, a ResourceGroup in Heat) and
    RemoteStack._needs_update (OS::Heat::Stack) are always true, so
    StackUpdate.preview lists them as updated; other types compare as usual."""
    from convection.model.compiler import StackInputs, compile_stack

    schemas = _WithTemplates(kit)
    inputs = StackInputs.from_text("heat_template_version: 2018-08-31\n" + OWNERS, files=CHILD)
    new = compile_stack(inputs, catalog=kit.registry.catalog()).definition
    rows = kit.stored(new, registry=schemas)
    plan = build_plan(new, rows, schemas)
    assert {c.action for c in plan.changes} == {Action.NOOP}  # the plan itself is unchanged
    result = preview(plan, new, rows, schemas=schemas)
    names = {k: sorted(e["resource_name"] for e in v) for k, v in result.items()}
    assert names["updated"] == ["chain", "deploy", "grp", "st", "tr"]
    assert names["unchanged"] == ["handle", "plain"]
    reasons = {e["reason"] for e in result["updated"]}
    assert reasons == {"owns a nested stack: every update updates it, and its resources decide"}
    # without the plugins, the preview shows the plan as it is
    bare = preview(plan, new, rows)
    assert not bare["updated"]
