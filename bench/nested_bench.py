"""Nested stacks: N members, each a 3-resource nested template, created on SQLite.

    .venv/bin/python bench/nested_bench.py [N] [group|direct]

``group`` puts the members in one OS::Heat::ResourceGroup (issue 4's
target: 1,000 members in 5 s); ``direct`` makes N template resources in the
parent itself. Prints the wall time of the create, engine included.
``engine_bench.py`` imports the templates and the setup from here for its
nested-group rows, so both measure the same thing.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from convection.compiler import StackInputs
from convection.engine import EngineConfig
from convection.limits import Limits
from convection.stacks import Stacks, StacksConfig
from convection.store.sql import SQLStore

MEMBER = """\
heat_template_version: 2018-08-31
parameters:
  index: {type: string}
resources:
  a: {type: OS::Heat::Value, properties: {value: {get_param: index}}}
  b: {type: OS::Heat::RandomString, properties: {length: 8}}
  c:
    type: OS::Heat::Value
    properties:
      value: {list_join: ['-', [{get_attr: [a, value]}, {get_attr: [b, value]}]]}
outputs:
  out: {value: {get_attr: [c, value]}}
"""
FILES = {"member.yaml": MEMBER}
CONCURRENCY = 256


def group(count: int, *, index: str = "%index%", rolling_batch: int = 0) -> str:
    """A parent with one ResourceGroup of ``count`` members; ``index`` is
    what each member's parameter gets (change it to update every member);
    ``rolling_batch`` > 0 adds a rolling_update policy with that
    max_batch_size and pause_time 0."""
    policy = ""
    if rolling_batch:
        policy = (
            "    update_policy:\n      rolling_update:\n"
            f"        max_batch_size: {rolling_batch}\n        pause_time: 0\n"
        )
    return (
        "heat_template_version: 2018-08-31\nresources:\n  g:\n"
        "    type: OS::Heat::ResourceGroup\n" + policy + "    properties:\n"
        f"      count: {count}\n"
        f"      resource_def: {{type: member.yaml, properties: {{index: '{index}'}}}}\n"
    )


def parent(count: int, kind: str) -> str:
    if kind == "group":
        return group(count)
    members = "".join(
        f"  m{i}: {{type: member.yaml, properties: {{index: '{i}'}}}}\n" for i in range(count)
    )
    return "heat_template_version: 2018-08-31\nresources:\n" + members


def open_stacks(db: Path) -> Stacks:
    """Stacks on a fresh SQLite file, without the per-stack resource limit."""
    config = StacksConfig(
        limits=Limits(max_resources_per_stack=-1),
        engine=EngineConfig(concurrency=CONCURRENCY),
    )
    return Stacks(SQLStore(f"sqlite:///{db}"), config=config)


def inputs(text: str) -> StackInputs:
    return StackInputs.from_text(text, files=FILES)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    kind = sys.argv[2] if len(sys.argv) > 2 else "group"
    with tempfile.TemporaryDirectory() as tmp:
        stacks = open_stacks(Path(tmp) / "bench.db")
        started = time.perf_counter()
        made = stacks.create("bench", "nested", inputs(parent(count, kind)))
        shown = stacks.wait(made["id"], timeout=3600)
        took = time.perf_counter() - started
        print(f"{kind} x{count}: {shown['stack_status']} in {took:.2f} s")
        stacks.store.close()


if __name__ == "__main__":
    main()
