"""Plans as text, Terraform-style: each decision with its reason, and the
operation graph's edges, for create, update, replace and delete."""

from __future__ import annotations

import dataclasses
from typing import Any

from convection.plan import (
    Action,
    NodeKind,
    build_action_plan,
    build_plan,
    format_changes,
    format_graph,
)

CHAIN = """
resources:
  a: {type: OS::Heat::TestResource, properties: {value: one}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_resource: a}}}
  c: {type: OS::Heat::TestResource, properties: {value: {get_attr: [b, output]}}}
  d: {type: OS::Heat::None}
"""


def test_create_adds_every_resource_in_dependency_order(kit: Any) -> None:
    plan = build_plan(kit.compile(CHAIN), [], kit.registry, operation="CREATE")
    assert format_changes(plan) == "\n".join(
        ["+ a: new resource", "+ d: new resource", "+ b: new resource", "+ c: new resource"]
    )
    assert format_graph(plan) == "\n".join(
        ["update:a", "update:b", "  update:a", "update:c", "  update:b", "update:d"]
    )


def test_unchanged_stack_has_no_nodes(kit: Any) -> None:
    definition = kit.compile(CHAIN)
    plan = build_plan(definition, kit.stored(definition), kit.registry)
    assert {c.action for c in plan.changes} == {Action.NOOP}
    assert plan.nodes == () and plan.edges == ()


def test_changed_leaf_touches_only_itself(kit: Any) -> None:
    old = kit.compile(CHAIN)
    new = kit.compile(
        CHAIN.replace("type: OS::Heat::None}", "type: OS::Heat::None, properties: {x: 1}}")
    )
    plan = build_plan(new, kit.stored(old), kit.registry)
    assert [(c.name, c.action) for c in plan.changes if c.action is not Action.NOOP] == [
        ("d", Action.NOOP)
    ][:0]
    # OS::Heat::None never updates: refined to noop, so no node at all.
    assert plan.nodes == ()


def test_update_in_place_propagates_evaluate_downstream(kit: Any) -> None:
    old = kit.compile(CHAIN)
    new = kit.compile(CHAIN.replace("value: one", "value: two"))
    plan = build_plan(new, kit.stored(old), kit.registry)
    assert format_changes(plan) == "\n".join(
        [
            "~ a: property value is updated in place",
            "= d: unchanged",
            "? b: a may change",
            "? c: b may change",
        ]
    )
    assert format_graph(plan) == "\n".join(
        [
            "cleanup:1",
            "  cleanup:3",
            "  update:a",
            "  update:b",
            "cleanup:3",
            "  cleanup:4",
            "  update:b",
            "  update:c",
            "cleanup:4",
            "  update:c",
            "update:a",
            "update:b",
            "  update:a",
            "update:c",
            "  update:b",
        ]
    )


def test_without_schemas_a_changed_definition_is_evaluated(kit: Any) -> None:
    old = kit.compile(CHAIN)
    new = kit.compile(CHAIN.replace("value: one", "value: two"))
    plan = build_plan(new, kit.stored(old))
    assert plan.change("a").action is Action.EVALUATE
    assert plan.change("a").reason == "definition changed"


def test_replace_reasons(kit: Any) -> None:
    definition = kit.compile(CHAIN)
    rows = kit.stored(definition)
    cases = {
        "type changed from X::Old to OS::Heat::TestResource": dict(type="X::Old"),
        "CREATE_FAILED": dict(status="FAILED"),
        "marked unhealthy: broken": dict(unhealthy=True, status_reason="broken"),
        "UPDATE was interrupted": dict(action="UPDATE", status="IN_PROGRESS"),
    }
    for reason, fields in cases.items():
        plan = build_plan(definition, kit.replace_row(rows, "c", **fields), kit.registry)
        assert plan.change("c").action is Action.REPLACE
        assert plan.change("c").reason == reason


def test_immutable_or_replacing_change_is_refined_from_the_schema(kit: Any) -> None:
    template = CHAIN.replace("value: one", "value: one, update_replace_value: r1")
    old = kit.compile(template)
    new = kit.compile(template.replace("r1", "r2"))
    plan = build_plan(new, kit.stored(old), kit.registry)
    assert plan.change("a").action is Action.REPLACE
    assert plan.change("a").reason.startswith("property update_replace_value")


def test_removed_resources_are_deleted_in_reverse_dependency_order(kit: Any) -> None:
    old = kit.compile(CHAIN)
    new = kit.compile("resources:\n  d: {type: OS::Heat::None}\n")
    plan = build_plan(new, kit.stored(old), kit.registry)
    assert format_changes(plan) == "\n".join(
        [
            "= d: unchanged",
            "- a: not in the template",
            "- b: not in the template",
            "- c: not in the template",
        ]
    )
    assert format_graph(plan) == "\n".join(
        ["cleanup:1", "  cleanup:3", "cleanup:3", "  cleanup:4", "cleanup:4"]
    )


def test_condition_switched_off_is_a_delete_with_its_reason(kit: Any) -> None:
    template = """
parameters:
  flag: {type: boolean, default: true}
conditions:
  enabled: {get_param: flag}
resources:
  x: {type: OS::Heat::None, condition: enabled}
"""
    old = kit.compile(template)
    new = kit.compile(template, {"flag": False})
    plan = build_plan(new, kit.stored(old), kit.registry)
    assert format_changes(plan) == "- x: its condition is false"


def test_stack_delete_plans_every_version(kit: Any) -> None:
    definition = kit.compile(CHAIN)
    rows = kit.stored(definition)
    old_b = dataclasses.replace(rows[2], id=9, current=False, replaced_by=3)
    plan = build_plan(None, [*rows, old_b], operation="DELETE")
    assert [n.key for n in plan.nodes if n.kind is NodeKind.CLEANUP] == [
        "cleanup:1",
        "cleanup:2",
        "cleanup:3",
        "cleanup:4",
        "cleanup:9",
    ]
    assert format_graph(plan).splitlines()[:4] == [
        "cleanup:1",
        "  cleanup:3",
        "  cleanup:9",
        "cleanup:2",
    ]


def test_deposed_version_is_cleaned_after_dependents_move_off_it(kit: Any) -> None:
    definition = kit.compile(CHAIN)
    rows = kit.stored(definition)
    old_b = dataclasses.replace(rows[2], id=9, current=False, replaced_by=3)
    plan = build_plan(definition, [*rows, old_b], kit.registry)
    assert format_changes(plan) == "\n".join(
        [
            "= a: unchanged",
            "= d: unchanged",
            "= b: unchanged",
            "? c: b may change",
            "- b#9: replaced by version 3",
        ]
    )
    assert "cleanup:9\n  cleanup:4\n  update:c\n" in format_graph(plan)


def test_failed_replacement_left_over_does_not_disturb_dependents(kit: Any) -> None:
    definition = kit.compile(CHAIN)
    rows = kit.stored(definition)
    failed_b = dataclasses.replace(rows[2], id=9, current=False, status="FAILED", replaces=3)
    plan = build_plan(definition, [*rows, failed_b], kit.registry)
    assert format_changes(plan).splitlines()[-2:] == [
        "= c: unchanged",
        "- b#9: left CREATE_FAILED by an unfinished operation",
    ]
    assert [n.key for n in plan.nodes] == ["cleanup:9"]


def test_rollback_restores_a_replaced_version(kit: Any) -> None:
    old = kit.compile(CHAIN)
    rows = kit.stored(old)
    # An update replaced a (#1) by #7, then failed before cleaning #1 up.
    new_a = dataclasses.replace(rows[0], id=7, definition_hash="other")
    old_a = dataclasses.replace(rows[0], current=False, replaced_by=7)
    plan = build_plan(old, [old_a, *rows[1:], new_a], kit.registry, rollback=True)
    assert plan.change("a").action is Action.RESTORE
    assert plan.change("a").reason == "back to version 1"
    node = next(n for n in plan.nodes if n.key == "update:a")
    assert (node.resource_id, node.restore_id) == (7, 1)
    assert "cleanup:7\n  cleanup:3\n  update:a\n  update:b\n" in format_graph(plan)
    assert plan.deposed == ()


def test_one_change_in_a_big_stack_is_a_handful_of_nodes(kit: Any) -> None:
    lines = ["resources:"]
    lines += [
        f"  r{i}: {{type: OS::Heat::TestResource, properties: {{value: v{i}}}}}" for i in range(999)
    ]
    old = kit.compile("\n".join(lines))
    new = kit.compile("\n".join(lines).replace("value: v7}", "value: changed}"))
    plan = build_plan(new, kit.stored(old), kit.registry)
    # The update, and a cleanup that deletes the old version only if it was replaced.
    assert [n.key for n in plan.nodes] == ["update:r7", "cleanup:8"]
    assert plan.counts() == {Action.NOOP: 998, Action.UPDATE: 1}


def test_whole_stack_actions_follow_dependencies(kit: Any) -> None:
    rows = kit.stored(kit.compile(CHAIN))
    check = build_action_plan(NodeKind.CHECK, rows)
    suspend = build_action_plan(NodeKind.SUSPEND, rows)
    assert "check:c\n  check:b" in format_graph(check)
    assert "suspend:b\n  suspend:c" in format_graph(suspend)
    assert {c.action for c in suspend.changes} == {Action.SUSPEND}
