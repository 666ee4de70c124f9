"""The plan's other renderings: JSON, Heat's preview shape, and digests."""

from __future__ import annotations

import json
from typing import Any

from convection.plan import PREVIEW_KEYS, build_plan, digest, preview
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
