"""Engine benchmark: Convection beside TaskFlow on the same graph shapes.

Convection runs the real thing: a stack of no-op resources created, updated
(one resource changed) and deleted on the durable SQLite store, every state
change journaled. TaskFlow (its parallel engine, in memory, no persistence)
runs a graph flow of no-op tasks of the same shape in the same process and
run, because on a noisy 2-core machine only ratios hold.

Shapes (N resources):
  wide         N independent resources
  chain        N resources in a line
  layered      round(sqrt N) layers of round(sqrt N); each resource depends on
               2 resources of the previous layer, chosen with a fixed seed
  sleepy-wide  N independent resources whose create takes 50 ms (a timer in
               Convection, a thread sleeping in TaskFlow), concurrency 100

Usage: .venv/bin/python bench/engine_bench.py [--sizes 100,1000,10000]
       [--shapes wide,chain,layered,sleepy-wide] [--no-taskflow]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from convection.compiler import StackInputs
from convection.engine import EngineConfig
from convection.limits import Limits
from convection.stacks import Stacks, StacksConfig
from convection.store.sql import open_store

Deps = dict[str, list[str]]


def shape(name: str, n: int) -> Deps:
    """Resource name -> names it depends on."""
    if name in ("wide", "sleepy-wide"):
        return {f"r{i}": [] for i in range(n)}
    if name == "chain":
        return {f"r{i}": ([f"r{i - 1}"] if i else []) for i in range(n)}
    side = round(math.sqrt(n))
    rng = random.Random(42)
    deps: Deps = {}
    for layer in range(side):
        for j in range(side):
            below = [f"r{layer - 1}_{k}" for k in rng.sample(range(side), 2)] if layer else []
            deps[f"r{layer}_{j}"] = below
    return deps


def template(deps: Deps, *, sleepy: bool, changed: str | None = None) -> str:
    """A JSON template (what Heat's API carries) of OS::Heat::None-like resources."""
    resources: dict[str, Any] = {}
    for name, needs in deps.items():
        if sleepy:
            body: dict[str, Any] = {
                "type": "OS::Heat::TestResource",
                "properties": {"action_wait_secs": {"create": 0.05}},
            }
        else:
            body = {"type": "OS::Heat::None", "properties": {"tag": name}}
        if needs:
            body["depends_on"] = needs
        if name == changed:
            body["properties"] = {**body.get("properties", {}), "tag": "changed"}
        resources[name] = body
    return json.dumps({"heat_template_version": "2018-08-31", "resources": resources})


def convection_run(deps: Deps, *, sleepy: bool, db: Path) -> dict[str, float]:
    limits = Limits(max_template_size=1 << 30, max_resources_per_stack=-1)
    engine = EngineConfig(concurrency=100 if sleepy else 64)
    stacks = Stacks(
        open_store(f"sqlite:///{db}"), config=StacksConfig(limits=limits, engine=engine)
    )
    times: dict[str, float] = {}

    def timed(label: str, op: Callable[[], Any]) -> None:
        gc.collect()
        start = time.perf_counter()
        op()
        times[label] = time.perf_counter() - start

    def create() -> None:
        text = template(deps, sleepy=sleepy)
        ref = stacks.create("bench", "s", StackInputs.from_text(text, limits=limits))
        shown = stacks.wait(ref["id"])
        assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]

    def update() -> None:
        last = list(deps)[-1]
        text = template(deps, sleepy=sleepy, changed=last)
        stacks.update("bench", "s", StackInputs.from_text(text, limits=limits))
        shown = stacks.wait(stacks.show("bench", "s")["id"])
        assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]

    def delete() -> None:
        stack_id = stacks.show("bench", "s")["id"]
        stacks.delete("bench", "s")
        stacks.wait(stack_id)

    timed("create", create)
    if not sleepy:
        timed("update1", update)
    timed("delete", delete)
    return times


def taskflow_run(deps: Deps, *, sleepy: bool) -> float:
    from taskflow import engines, task
    from taskflow.patterns import graph_flow

    class Noop(task.Task):  # type: ignore[misc]
        def execute(self) -> None:
            if sleepy:
                time.sleep(0.05)

    flow = graph_flow.Flow("bench")
    tasks = {name: Noop(name=name) for name in deps}
    flow.add(*tasks.values())
    for name, needs in deps.items():
        for need in needs:
            flow.link(tasks[need], tasks[name])
    start = time.perf_counter()
    engine = engines.load(flow, engine="parallel", max_workers=100 if sleepy else 64)
    engine.run()
    return time.perf_counter() - start


def peak_memory_mb(deps: Deps, db: Path) -> float:
    tracemalloc.start()
    convection_run(deps, sleepy=False, db=db)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--shapes", default="wide,chain,layered,sleepy-wide")
    parser.add_argument("--no-taskflow", action="store_true")
    parser.add_argument("--memory", action="store_true", help="also measure peak memory")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    header = (
        f"{'shape':<12} {'N':>6} {'create s':>9} {'update1 s':>9} {'delete s':>9}"
        f" {'taskflow s':>10} {'tf/create':>9}"
    )
    print(header)
    print("-" * len(header))
    rows: dict[tuple[str, int], dict[str, float]] = {}
    for name in args.shapes.split(","):
        for n in sizes:
            if name == "sleepy-wide" and n > 1000:
                continue
            deps = shape(name, n)
            sleepy = name == "sleepy-wide"
            with tempfile.TemporaryDirectory() as tmp:
                t = convection_run(deps, sleepy=sleepy, db=Path(tmp) / "bench.db")
            tf = float("nan") if args.no_taskflow else taskflow_run(deps, sleepy=sleepy)
            rows[(name, n)] = t
            ratio = tf / t["create"] if t["create"] else float("nan")
            print(
                f"{name:<12} {n:>6} {t['create']:>9.3f} {t.get('update1', float('nan')):>9.3f}"
                f" {t['delete']:>9.3f} {tf:>10.3f} {ratio:>8.1f}x",
                flush=True,
            )
    for name in ("wide", "chain", "layered"):
        small, big = rows.get((name, 1000)), rows.get((name, 10000))
        if small and big:
            print(
                f"growth {name}: create 10k/1k = {big['create'] / small['create']:.1f}x "
                f"(target <= 12x)"
            )
    if args.memory and 10000 in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            mb = peak_memory_mb(shape("layered", 10000), Path(tmp) / "mem.db")
        print(
            f"peak traced memory, layered 10,000 create+update+delete: {mb:.0f} MB "
            "(target <= 150 MB)"
        )


if __name__ == "__main__":
    main()
