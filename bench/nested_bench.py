"""Nested stacks: N members, each a 3-resource nested template, on SQLite.

    .venv/bin/python bench/nested_bench.py [N] [group|direct] [--delete] [--rolling B]

``group`` puts the members in one OS::Heat::ResourceGroup (issue 4's
target: 1,000 members in 5 s); ``direct`` makes N template resources in the
parent itself. Prints the wall and CPU time of the create (engine
included), and per member the SQL statements and transactions it took
(counted with SQLAlchemy's event hooks): on a shared machine the counts
are the steadier figure. ``--delete`` then deletes the stack the same way;
``--rolling B`` instead creates a group with ``rolling_update:
{max_batch_size: B, pause_time: 0}`` and times an update that changes
every member's parameter. ``engine_bench.py`` imports the templates and
the setup from here for its nested-group rows, so both measure the same
thing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

from convection.common.limits import Limits
from convection.convergence import EngineConfig
from convection.model.compiler import StackInputs
from convection.service.stacks import Stacks, StacksConfig
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


class Counts:
    """SQL statements and transactions on one store, by SQLAlchemy events."""

    def __init__(self, store: SQLStore) -> None:
        self.statements = self.transactions = 0
        engine = store._db.engine
        sa.event.listen(engine, "before_cursor_execute", self._statement)
        sa.event.listen(engine, "commit", self._transaction)

    def _statement(self, *_: object) -> None:
        self.statements += 1

    def _transaction(self, *_: object) -> None:
        self.transactions += 1

    def snapshot(self) -> tuple[int, int]:
        return self.statements, self.transactions


def measure(label: str, count: int, counts: Counts, work: Callable[[], str]) -> None:
    """Run ``work`` (which returns the stack status) and print its cost."""
    before, wall, cpu = counts.snapshot(), time.perf_counter(), time.process_time()
    status = work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    statements, transactions = (a - b for a, b in zip(counts.snapshot(), before, strict=True))
    print(
        f"{label} x{count}: {status} in {wall:.2f} s (CPU {cpu:.2f} s); per member "
        f"{statements / count:.1f} SQL statements, {transactions / count:.1f} transactions"
    )


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("count", nargs="?", type=int, default=100, help="members (100)")
    parser.add_argument("kind", nargs="?", choices=("group", "direct"), default="group")
    parser.add_argument("--delete", action="store_true", help="then delete the stack")
    parser.add_argument(
        "--rolling", type=int, default=0, metavar="B", help="time a rolling update, batch B"
    )
    return parser.parse_args()


def main() -> None:
    args = arguments()
    count, kind = args.count, args.kind
    with tempfile.TemporaryDirectory() as tmp:
        stacks = open_stacks(Path(tmp) / "bench.db")
        assert isinstance(stacks.store, SQLStore)
        counts = Counts(stacks.store)

        def settle(stack_id: str) -> str:
            return str(stacks.wait(stack_id, timeout=3600)["stack_status"])

        if args.rolling:
            text = group(count, rolling_batch=args.rolling)
            made = stacks.create("bench", "nested", inputs(text))
            settle(made["id"])
            changed = group(count, index="%index%-v2", rolling_batch=args.rolling)

            def update() -> str:
                stacks.update("bench", made["id"], inputs(changed))
                return settle(made["id"])

            measure(f"rolling b{args.rolling}", count, counts, update)
        else:
            made = {}

            def create() -> str:
                made.update(stacks.create("bench", "nested", inputs(parent(count, kind))))
                return settle(made["id"])

            measure(kind, count, counts, create)
            if args.delete:

                def delete() -> str:
                    stacks.delete("bench", made["id"])
                    return settle(made["id"])

                measure(f"{kind} delete", count, counts, delete)
        stacks.store.close()


if __name__ == "__main__":
    main()
