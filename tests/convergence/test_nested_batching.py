"""A group's members are written in batches, and their ends wake their owners.

Issue 4's benchmark (1,000 nested members in 5 s) needs a member to cost a
fraction of a transaction: child creates and deletes of one engine turn go
to the store together (``Store.start_stacks`` / ``start_traversals``), so do
the journal entries, claims and final states of the members' traversals.
These tests count SQLite transactions on a real file, and check that the
owner of a child is woken by the child's end (create and delete) rather
than by its poll timer.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from convection.common.limits import Limits
from convection.convergence import EngineConfig
from convection.model.compiler import StackInputs
from convection.resources.heat.stack_resource import StackResourcePlugin, Wait
from convection.service.stacks import Stacks, StacksConfig
from convection.store.api import Store
from convection.store.sql import SQLStore

from .conftest import HEADER

MEMBER = HEADER + textwrap.dedent(
    """\
    parameters:
      index: {type: string}
    resources:
      a: {type: OS::Heat::Value, properties: {value: {get_param: index}}}
      b:
        type: OS::Heat::Value
        properties: {value: {list_join: ['-', [{get_attr: [a, value]}, x]]}}
    outputs:
      out: {value: {get_attr: [b, value]}}
    """
)


def group(count: int) -> StackInputs:
    text = HEADER + textwrap.dedent(
        f"""\
        resources:
          g:
            type: OS::Heat::ResourceGroup
            properties:
              count: {count}
              resource_def: {{type: member.yaml, properties: {{index: '%index%'}}}}
        outputs:
          refs: {{value: {{get_attr: [g, refs]}}}}
        """
    )
    return StackInputs.from_text(text, files={"member.yaml": MEMBER})


def open_stacks(store: Store, **limits: Any) -> Stacks:
    config = StacksConfig(
        limits=Limits(**limits), engine=EngineConfig(concurrency=64, scan_seconds=0.05)
    )
    return Stacks(store, config=config)


def commits(store: SQLStore) -> list[int]:
    """A counter of committed transactions on ``store``'s engine."""
    count = [0]
    engine = store._db.engine

    @sa.event.listens_for(engine, "commit")
    def _count(*_: Any) -> None:
        count[0] += 1

    return count


def test_members_cost_a_fraction_of_a_transaction(tmp_path: Path) -> None:
    store = SQLStore(f"sqlite:///{tmp_path / 'batch.db'}")
    try:
        stacks = open_stacks(store)
        counted = commits(store)
        made = stacks.create("p", "s", group(40))
        shown = stacks.wait(made["id"], timeout=60)
        assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
        [refs] = [o["output_value"] for o in shown["outputs"] if o["output_key"] == "refs"]
        members = {s.id: s for s in store.list_stacks("p") if s.nested_depth == 2}
        # Members are template resources: each ref is its stack's ARN.
        arns = [f"arn:openstack:heat::p:stacks/{s.name}/{s.id}" for s in members.values()]
        assert sorted(refs) == sorted(arns) and len(members) == 40
        assert {(s.action, s.status) for s in members.values()} == {("CREATE", "COMPLETE")}
        outs = sorted(s.outputs[0]["output_value"] for s in members.values())
        assert outs == sorted(f"{i}-x" for i in range(40))
        # One at a time, a member cost about 30 transactions (a create of
        # 40 was 1,200); batched, under 4 each (most of those are reads).
        assert counted[0] < 4 * 40, counted[0]
        counted[0] = 0
        stacks.delete("p", made["id"])
        assert stacks.wait(made["id"], timeout=60)["stack_status"] == "DELETE_COMPLETE"
        assert counted[0] < 8 * 40, counted[0]  # was about 23 a member
        assert [s.name for s in store.list_stacks("p")] == []
    finally:
        store.close()


def test_a_batch_over_the_limit_goes_one_by_one(store: Store) -> None:
    # The root's group (1), the group's child (3 members) and three member
    # stacks of 2: 10 > 8, so the turn's batch of members is refused whole
    # and each asks on its own: two fit.
    stacks = open_stacks(store, max_resources_per_stack=8)
    made = stacks.create("p", "s", group(3))
    shown = stacks.wait(made["id"], timeout=60)
    assert shown["stack_status"] == "CREATE_FAILED"
    assert "You have reached the maximum resources per stack" in shown["stack_status_reason"]
    root = store.get_stack_by_id(made["id"])
    assert root is not None and (root.resource_count, root.nested_resources) == (1, 3 + 2 + 2)


@pytest.fixture
def no_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Owners whose polls would sleep for ten minutes: only a wake ends them."""
    monkeypatch.setattr(StackResourcePlugin, "poll_seconds", 600.0)
    monkeypatch.setattr(StackResourcePlugin, "_delete_wait", lambda *_: Wait(600.0))


@pytest.mark.usefixtures("no_polls")
def test_a_childs_end_wakes_its_owner_on_create_and_delete(store: Store) -> None:
    stacks = open_stacks(store)
    made = stacks.create("p", "s", group(5))
    shown = stacks.wait(made["id"], timeout=30)
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    stacks.delete("p", made["id"])
    assert stacks.wait(made["id"], timeout=30)["stack_status"] == "DELETE_COMPLETE"
    root = store.get_stack_by_id(made["id"])
    assert root is not None and root.nested_resources == 0
