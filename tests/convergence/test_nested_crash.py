"""kill -9 during nested stack operations: a fresh engine finishes them.

The parent's template resources each make a child stack of ledger
resources (some waiting on timers); a real engine process on an SQLite file
is SIGKILLed at seeded random moments during the create and the delete,
then a new one runs to the end. Each child stack must exist once, every
ledger resource must be created once, and after the delete every one must
be deleted and every child stack gone.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from convection.model.compiler import StackInputs
from convection.resources.testing import read_ledger
from convection.service.stacks import Stacks
from convection.store.sql import SQLStore

from .test_crash_resume import run_worker

TIERS = 6


def member(ledger: Path) -> str:
    return f"""\
heat_template_version: 2018-08-31
parameters:
  index: {{type: string}}
resources:
  first:
    type: Convection::Test::Ledger
    properties: {{path: '{ledger}', value: {{get_param: index}}, wait_secs: 0.1}}
  second:
    type: Convection::Test::Ledger
    properties: {{path: '{ledger}', value: {{get_attr: [first, value]}}}}
outputs:
  value: {{value: {{get_attr: [second, value]}}}}
"""


def parent() -> str:
    lines = ["heat_template_version: 2018-08-31", "resources:"]
    for i in range(TIERS):
        lines.append(f"  t{i}: {{type: member.yaml, properties: {{index: 'v{i}'}}}}")
    lines.append("outputs:")
    lines.append(
        f"  all: {{value: [{', '.join(f'{{get_attr: [t{i}, value]}}' for i in range(TIERS))}]}}"
    )
    return "\n".join(lines)


def drive(url: str, ledger: Path, rng: random.Random) -> None:
    for _ in range(rng.randint(1, 3)):
        run_worker(url, ledger, kill_after=rng.uniform(0.05, 0.6))
    run_worker(url, ledger, kill_after=None)


@pytest.mark.parametrize("seed", range(4))
def test_killed_engine_resumes_nested_stacks(tmp_path: Path, seed: int) -> None:
    ledger = tmp_path / "ledger.tsv"
    url = f"sqlite:///{tmp_path / 'stacks.db'}"
    store = SQLStore(url)
    stacks = Stacks(store)
    rng = random.Random(seed)
    inputs = StackInputs.from_text(parent(), files={"member.yaml": member(ledger)})
    stack_id = stacks.create("p", "s", inputs)["id"]
    drive(url, ledger, rng)
    shown = stacks.show("p", stack_id)
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    outputs = {o["output_key"]: o["output_value"] for o in shown["outputs"]}
    assert outputs["all"] == [f"v{i}" for i in range(TIERS)]
    children = store.list_stacks("p", parent_id=stack_id)
    assert sorted(c.parent_resource or "" for c in children) == [f"t{i}" for i in range(TIERS)]
    root = store.get_stack_by_id(stack_id)
    assert root is not None and root.nested_resources == 2 * TIERS
    stacks.delete("p", stack_id)
    drive(url, ledger, rng)
    assert stacks.show("p", stack_id)["stack_status"] == "DELETE_COMPLETE"
    assert all(
        c.deleted_at is not None
        for c in store.list_stacks("p", include_deleted=True, parent_id=stack_id)
    )
    creates = Counter(name for event, name in read_ledger(ledger) if event == "create")
    deletes = Counter(name for event, name in read_ledger(ledger) if event == "delete")
    assert len(creates) == 2 * TIERS
    assert max(creates.values()) == 1, "a physical resource was created twice"
    assert set(deletes) == set(creates) and max(deletes.values()) == 1
    store.close()
