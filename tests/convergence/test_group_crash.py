"""A rolling update survives ``kill -9``: engine processes are killed in the
middle of the rollout (in a batch or in a pause) and another one, on the
same SQLite file, finishes it. No batch is lost, no member is made twice,
and the group keeps its one child stack."""

from __future__ import annotations

import textwrap
from pathlib import Path

from convection.model.compiler import StackInputs
from convection.service.stacks import Stacks
from convection.store.sql import SQLStore

from .test_crash_resume import run_worker

TEMPLATE = textwrap.dedent(
    """\
    heat_template_version: 2018-08-31
    parameters:
      value: {type: string, default: v}
    resources:
      group:
        type: OS::Heat::ResourceGroup
        update_policy:
          rolling_update: {max_batch_size: 1, pause_time: 0.4}
        properties:
          count: 4
          resource_def:
            type: OS::Heat::TestResource
            properties:
              value: {list_join: ['-', [{get_param: value}, '%index%']]}
    """
)


def test_a_killed_rolling_update_resumes_and_finishes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'stacks.db'}"
    store = SQLStore(url)
    stacks = Stacks(store)
    stack_id = stacks.create("p", "s", StackInputs.from_text(TEMPLATE))["id"]
    assert stacks.wait(stack_id, timeout=60)["stack_status"] == "CREATE_COMPLETE"
    group = {r.name: r for r in store.list_resources(stack_id)}["group"]
    child = group.physical_id
    assert child is not None

    stacks.update("p", "s", StackInputs.from_text(TEMPLATE, parameters={"value": "w"}))
    interrupted = 0
    for kill_after in (0.5, 0.7, 0.6):
        run_worker(url, None, kill_after)
        if store.get_stack_by_id(stack_id).status == "IN_PROGRESS":  # type: ignore[union-attr]
            interrupted += 1
    run_worker(url, None, None)

    assert interrupted >= 1  # the kills landed in the middle of the rollout
    shown = stacks.show("p", stack_id)
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    group = {r.name: r for r in store.list_resources(stack_id)}["group"]
    assert group.physical_id == child  # the same child stack throughout
    rows = store.list_resources(child)
    assert sorted(r.name for r in rows) == ["0", "1", "2", "3"]  # none made twice
    assert {r.name: r.properties["value"] for r in rows} == {str(i): f"w-{i}" for i in range(4)}
    reasons = [e["resource_status_reason"] for e in stacks.events("p", "s")]
    for n in range(1, 5):  # every batch was applied (a re-run may apply one again)
        assert f"Applying batch {n} of 4 (4 members)" in reasons
    store.close()
