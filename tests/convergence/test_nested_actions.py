"""Suspend, resume and check reach every child and grandchild stack.

Heat's StackResource runs a stack's suspend, resume or check on its child
stack and waits for it; a drift found in a grandchild fails each owner's
check on the way up. These run a template resource and a ResourceGroup,
each with a nested template inside, on memory, SQLite and PostgreSQL.
"""

from __future__ import annotations

import textwrap

from convection.model.compiler import StackInputs
from convection.store.api import StackRecord, Store

from .conftest import HEADER, Env

INNER = HEADER + textwrap.dedent(
    """\
    resources:
      deep: {type: Test::Rec, properties: {value: deep}}
    """
)

WEB = HEADER + textwrap.dedent(
    """\
    resources:
      leaf: {type: Test::Rec, properties: {value: leaf}}
      inner: {type: inner.yaml}
    """
)

PARENT = """\
resources:
  web: {type: web.yaml}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: inner.yaml}
"""

FILES = {"web.yaml": WEB, "inner.yaml": INNER}


def create(env: Env) -> str:
    inputs = StackInputs.from_text(HEADER + PARENT, files=FILES)
    stack_id = str(env.stacks.create("p", "s", inputs)["id"])
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    return stack_id


def tree(store: Store, stack_id: str) -> list[StackRecord]:
    """Every stack below ``stack_id``, depth first."""
    found: list[StackRecord] = []
    for child in store.list_stacks("p", parent_id=stack_id):
        found.append(child)
        found.extend(tree(store, child.id))
    return found


def states(store: Store, stack_id: str) -> set[tuple[str, str]]:
    """(action, status) of every stack and resource of the tree."""
    seen: set[tuple[str, str]] = set()
    for stack in [store.get_stack_by_id(stack_id), *tree(store, stack_id)]:
        assert stack is not None
        seen.add((stack.action, stack.status))
        seen.update((r.action, r.status) for r in store.list_resources(stack.id, current_only=True))
    return seen


def test_suspend_and_resume_reach_every_grandchild(env: Env) -> None:
    stack_id = create(env)
    assert len(tree(env.store, stack_id)) == 5  # web, inner, group, 2 members
    env.stacks.suspend("p", "s")
    assert env.wait()["stack_status"] == "SUSPEND_COMPLETE"
    assert states(env.store, stack_id) == {("SUSPEND", "COMPLETE")}
    suspended = sorted(name for _, name in env.rec.ops("suspend"))
    assert suspended == ["deep", "deep", "deep", "leaf"]
    env.stacks.resume("p", "s")
    assert env.wait()["stack_status"] == "RESUME_COMPLETE"
    assert states(env.store, stack_id) == {("RESUME", "COMPLETE")}
    assert len(env.rec.ops("resume")) == 4


def test_a_failed_child_suspend_fails_its_owner(env: Env) -> None:
    create(env)
    env.rec.fail[("suspend", "deep")] = "cannot pause"
    env.stacks.suspend("p", "s")
    shown = env.wait()
    assert shown["stack_status"] == "SUSPEND_FAILED"
    web = env.resources()["web"]
    assert web["resource_status"] == "SUSPEND_FAILED"
    assert web["resource_status_reason"] == (
        "Error: resources.web.resources.inner.resources.deep: cannot pause"
    )


def test_check_finds_drift_in_a_grandchild_and_fails_up_the_tree(env: Env) -> None:
    stack_id = create(env)
    env.rec.drift["deep"] = "size is 3, expected 4"
    env.stacks.check("p", "s")
    shown = env.wait()
    assert shown["stack_status"] == "CHECK_FAILED"
    res = env.resources()
    assert res["web"]["resource_status"] == res["group"]["resource_status"] == "CHECK_FAILED"
    assert res["web"]["resource_status_reason"] == (
        "Error: resources.web.resources.inner: size is 3, expected 4"
    )
    assert all(s.action == "CHECK" for s in tree(env.store, stack_id))
    assert {s.status for s in tree(env.store, stack_id)} == {"FAILED"}
    # Every Test::Rec of the tree was checked, the healthy leaf included.
    assert sorted(n for _, n in env.rec.ops("check")) == ["deep", "deep", "deep", "leaf"]


def test_a_clean_check_completes_the_whole_tree(env: Env) -> None:
    stack_id = create(env)
    env.stacks.check("p", "s")
    assert env.wait()["stack_status"] == "CHECK_COMPLETE"
    assert states(env.store, stack_id) == {("CHECK", "COMPLETE")}


def test_suspend_is_not_left_sleeping_a_whole_poll(env: Env) -> None:
    """Each owner is woken by its child's end, not by its 5 s poll."""
    stack_id = create(env)
    env.stacks.suspend("p", "s")
    env.stacks.wait(stack_id, timeout=4.0)


OTHER_OWNERS = """\
resources:
  inner:
    type: OS::Heat::Stack
    properties:
      template: {get_file: inner.yaml}
  scaled:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 2
      max_size: 3
      resource: {type: inner.yaml}
"""


def test_os_heat_stack_and_autoscaling_group_pass_actions_down(env: Env) -> None:
    inputs = StackInputs.from_text(HEADER + OTHER_OWNERS, files=FILES)
    stack_id = str(env.stacks.create("p", "s", inputs)["id"])
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    for action in ("suspend", "resume", "check"):
        getattr(env.stacks, action)("p", "s")
        assert env.wait()["stack_status"] == f"{action.upper()}_COMPLETE"
        assert states(env.store, stack_id) == {(action.upper(), "COMPLETE")}
    assert sorted(n for _, n in env.rec.ops("suspend")) == ["deep"] * 3
