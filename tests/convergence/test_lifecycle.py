"""Create, update in place, replace, and what a user reads back."""

from __future__ import annotations

from typing import Any

import pytest

from convection.common.errors import Conflict, InvalidInput, LimitExceeded
from convection.common.limits import Limits
from convection.service.stacks import Stacks, StacksConfig

CHAIN = """
resources:
  a: {type: Test::Rec, properties: {value: one}}
  b: {type: Test::Rec, properties: {value: {get_resource: a}}}
  c: {type: OS::Heat::TestResource, properties: {value: {get_attr: [b, value]}}}
outputs:
  out: {value: {get_attr: [c, output]}, description: the value}
  bad: {value: {str_split: [",", {get_attr: [c, output]}, 3]}}
"""


def test_create_completes_with_outputs_and_events(env: Any) -> None:
    env.create(CHAIN)
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert shown["stack_status_reason"] == "Stack CREATE completed successfully"
    res = env.resources()
    assert {n: r["resource_status"] for n, r in res.items()} == dict.fromkeys(
        "abc", "CREATE_COMPLETE"
    )
    assert res["a"]["required_by"] == ["b"]
    assert res["a"]["physical_resource_id"].startswith("s-a-")
    outputs = {o["output_key"]: o for o in shown["outputs"]}
    assert outputs["out"]["output_value"] == res["a"]["physical_resource_id"]
    assert outputs["out"]["description"] == "the value"
    assert outputs["bad"]["output_value"] is None
    assert "str_split" in outputs["bad"]["output_error"]
    assert env.rec.ops("create") == [("create", "a"), ("create", "b")]


def test_one_event_per_state_change(env: Any) -> None:
    env.create(CHAIN)
    env.wait()
    events = [
        (e["resource_name"], e["resource_status"], e["resource_status_reason"])
        for e in env.stacks.events("p", "s")
    ]
    assert events == [
        ("s", "CREATE_IN_PROGRESS", "Stack CREATE started"),
        ("a", "CREATE_IN_PROGRESS", "state changed"),
        ("a", "CREATE_COMPLETE", "state changed"),
        ("b", "CREATE_IN_PROGRESS", "state changed"),
        ("b", "CREATE_COMPLETE", "state changed"),
        ("c", "CREATE_IN_PROGRESS", "state changed"),
        ("c", "CREATE_COMPLETE", "state changed"),
        ("s", "CREATE_COMPLETE", "Stack CREATE completed successfully"),
    ]


def test_update_in_place_keeps_the_physical_resource(env: Any) -> None:
    env.create(CHAIN)
    env.wait()
    before = env.resources()
    env.update(CHAIN.replace("value: one", "value: two"))
    shown = env.wait()
    after = env.resources()
    assert shown["stack_status"] == "UPDATE_COMPLETE"
    assert after["a"]["resource_status"] == "UPDATE_COMPLETE"
    assert after["a"]["physical_resource_id"] == before["a"]["physical_resource_id"]
    # b and c were evaluated: their resolved properties did not change.
    assert after["b"]["resource_status"] == "CREATE_COMPLETE"
    assert env.rec.ops("update", "delete") == [("update", "a")]


def test_replace_creates_the_new_version_before_deleting_the_old(env: Any) -> None:
    env.create(CHAIN)
    env.wait()
    old_a = env.resources()["a"]["physical_resource_id"]
    env.rec.calls.clear()
    env.update(CHAIN.replace("value: one", "value: one, fixed: changed"))
    shown = env.wait()
    assert shown["stack_status"] == "UPDATE_COMPLETE"
    after = env.resources()
    assert after["a"]["physical_resource_id"] != old_a
    # b points at the new a, so it is updated in place before the old a goes.
    assert env.rec.ops("create", "update", "delete") == [
        ("create", "a"),
        ("update", "b"),
        ("delete", "a"),
    ]
    assert after["c"]["resource_status"] == "UPDATE_COMPLETE"
    rows = env.store.list_resources(env.store.get_stack("p", "s").id)
    assert sorted(r.name for r in rows) == ["a", "b", "c"]


def test_immutable_property_change_fails_with_heats_message(env: Any) -> None:
    env.create("resources:\n  a: {type: Test::Rec, properties: {frozen: x}}\n")
    env.wait()
    env.update("resources:\n  a: {type: Test::Rec, properties: {frozen: y}}\n")
    status, reason = env.status() if env.wait() else ("", "")
    assert status == "UPDATE_FAILED"
    assert reason == (
        "Resource UPDATE failed: NotSupported: resources.a: Update to properties frozen "
        "of a (Test::Rec) is not supported."
    )
    assert env.resource_status("a") == "UPDATE_FAILED"


def test_failed_resource_is_replaced_by_the_next_update(env: Any) -> None:
    failing = "resources:\n  t: {type: OS::Heat::TestResource, properties: {fail: true}}\n"
    env.create(failing)
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_FAILED"
    assert shown["stack_status_reason"].startswith("Resource CREATE failed: ")
    assert env.resource_status("t") == "CREATE_FAILED"
    env.update(failing.replace("true", "false"))
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert env.resource_status("t") == "CREATE_COMPLETE"
    stack_id = env.store.get_stack("p", "s").id
    assert len(env.store.list_resources(stack_id)) == 1


def test_dependents_of_a_failed_resource_are_skipped_not_reported(env: Any) -> None:
    env.rec.fail[("create", "a")] = "boom"
    env.create(CHAIN)
    shown = env.wait()
    assert shown["stack_status_reason"] == "Resource CREATE failed: Error: resources.a: boom"
    res = env.resources()
    assert res["a"]["resource_status"] == "CREATE_FAILED"
    assert res["b"]["resource_status"] == "INIT_COMPLETE"
    failures = [e for e in env.stacks.events("p", "s") if e["resource_status"].endswith("FAILED")]
    assert [e["resource_name"] for e in failures] == ["a", "s"]


def test_preview_update_lists_buckets(env: Any) -> None:
    env.create(CHAIN)
    env.wait()
    result = env.stacks.preview_update(
        "p", "s", env.inputs(CHAIN.replace("value: one", "value: one, fixed: z"))
    )
    assert [r["resource_name"] for r in result["replaced"]] == ["a"]
    assert [r["resource_name"] for r in result["updated"]] == ["b", "c"]
    assert result["added"] == result["deleted"] == result["unchanged"] == []
    created = env.stacks.preview_create("p", "t", env.inputs(CHAIN))
    assert [r["resource_name"] for r in created["added"]] == ["a", "b", "c"]


def test_patch_update_reuses_the_stored_template(env: Any) -> None:
    text = """
parameters:
  v: {type: string, default: d}
resources:
  a: {type: Test::Rec, properties: {value: {get_param: v}}}
"""
    env.create(text, parameters={"v": "first"})
    env.wait()
    env.stacks.update(
        "p",
        "s",
        env.inputs("resources: {}", v="second").__class__(
            env.inputs(text).template, (), {}, {"v": "second"}
        ),
        existing=True,
    )
    env.wait()
    assert env.stacks.show("p", "s")["parameters"]["v"] == "second"
    env.stacks.update("p", "s", None, existing=True, clear_parameters=["v"])
    env.wait()
    assert env.stacks.show("p", "s")["parameters"]["v"] == "d"
    assert [c for c in env.rec.calls if c[0] == "update"] == [("update", "a"), ("update", "a")]


def test_hidden_parameters_never_show(env: Any) -> None:
    text = """
parameters:
  pw: {type: string, hidden: true}
resources:
  a: {type: Test::Rec, properties: {value: {get_param: pw}}}
outputs:
  asked: {value: {get_param: pw}}
"""
    env.create(text, parameters={"pw": "s3cret"})
    shown = env.wait()
    assert shown["parameters"]["pw"] == "******"
    # An output the author writes shows its value, as Heat's do.
    assert shown["outputs"][0]["output_value"] == "s3cret"
    del shown["outputs"]
    assert "s3cret" not in repr(shown) + repr(env.stacks.events("p", "s"))


def test_immutable_parameter_change_is_refused(env: Any) -> None:
    text = """
parameters:
  zone: {type: string, immutable: true}
resources: {}
"""
    env.create(text, parameters={"zone": "a"})
    env.wait()
    with pytest.raises(InvalidInput, match="The following parameters are immutable"):
        env.update(text, parameters={"zone": "b"})


def test_limits_and_legality(env: Any) -> None:
    limited = Stacks(
        env.store, env.registry, config=StacksConfig(limits=Limits(max_resources_per_stack=2))
    )
    with pytest.raises(LimitExceeded):
        limited.create("p", "big", env.inputs(CHAIN))
    env.create(CHAIN)
    with pytest.raises(Conflict, match="already exists"):
        env.create(CHAIN)
    env.wait()
    with pytest.raises(Conflict, match="Cancelling update when stack is CREATE_COMPLETE"):
        env.stacks.cancel_update("p", "s")


def test_a_random_string_is_shown_where_asked_for(env: Any) -> None:
    text = """
resources:
  pw: {type: OS::Heat::RandomString, properties: {length: 12}}
  user: {type: Test::Rec, properties: {value: {get_resource: pw}}}
outputs:
  by_ref: {value: {get_resource: pw}}
  by_attr: {value: {get_attr: [pw, value]}}
  plain: {value: {get_attr: [user, value]}}
"""
    env.create(text)
    shown = env.wait()
    outputs = {o["output_key"]: o["output_value"] for o in shown["outputs"]}
    # Heat masks none of these: a generated value is not a hidden parameter.
    value = outputs["by_ref"]
    assert isinstance(value, str) and len(value) == 12 and value != "******"
    assert outputs["by_attr"] == outputs["plain"] == value
    assert env.stacks.resource("p", "s", "pw")["attributes"]["value"] == value
