"""Engine benchmark: Convection beside TaskFlow on the same graph shapes.

Convection runs the real thing: a stack of no-op resources created, updated
(one resource changed) and deleted on the durable SQLite store, every state
change journaled; each figure is the whole operation as ``--wait`` sees it
(compile + plan + start + engine until settled, and the final ``show``).
TaskFlow (its parallel engine, in memory, no persistence) runs a graph flow
of no-op tasks of the same shape in the same process and run, because on a
noisy 2-core machine only ratios hold.

Shapes (N resources):
  wide         N independent resources
  chain        N resources in a line
  layered      round(sqrt N) layers of round(sqrt N); each resource depends on
               2 resources of the previous layer, chosen with a fixed seed
  sleepy-wide  N independent resources whose create takes 50 ms (a timer in
               Convection, a thread sleeping in TaskFlow), concurrency 100

Each row is followed by a ``cpu s`` line: the same operations in CPU
seconds of this process (``time.process_time``), the steadier figure on a
shared machine.

Columns: ``update1`` changes one resource in the process that created the
stack (a long-lived service: the previous compile is in memory, see
``convection.model._recompile``); ``update1 cold`` does the same from a fresh
``Stacks`` with nothing remembered (a new CLI process). ``taskflow`` is
``engines.load`` + ``run`` of an already built flow, on a thread pool made
beforehand with ``max_workers`` equal to Convection's concurrency (so the
pool's start and its idle workers' 1 s shutdown are not counted against
it). TaskFlow runs in a child process: its scheduler grows faster than
linearly on chain and layered graphs, so a run that has not finished after
``--taskflow-budget`` seconds is suspended (and the child killed if the
suspension does not take effect within half the budget more); its cell then
reads ``>budget``. Every row, the 10,000 ones included, runs TaskFlow.

Nested groups (issue 4), after those rows, each in a child process of its
own (no TaskFlow peer): ``group`` is an OS::Heat::ResourceGroup of
``--group-members`` (1,000) members of bench/nested_bench.py's 3-resource
template file, created then deleted; ``rolling`` is a group of
``--rolling-members`` (100) with rolling_update max_batch_size 10 and
pause_time 0, created (not counted) and then updated so that every member
changes. An operation not settled after ``--group-cap`` seconds reads
``>cap`` (the child is killed if it does not stop on its own).

Usage: .venv/bin/python bench/engine_bench.py [--sizes 100,1000,10000]
       [--shapes wide,chain,layered,sleepy-wide] [--no-taskflow]
       [--taskflow-budget 60] [--no-memory] [--group-members 1000]
       [--rolling-members 100] [--group-cap 120] [--no-groups]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import os
import platform
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

from convection.common.limits import Limits
from convection.convergence import EngineConfig
from convection.model import _recompile
from convection.model.compiler import StackInputs
from convection.service.stacks import Stacks, StacksConfig
from convection.store.sql import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nested_bench  # a sibling script: the nested-group setup

Deps = dict[str, list[str]]
LIMITS = Limits(max_template_size=1 << 30, max_resources_per_stack=-1)
NAN = float("nan")


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


def concurrency(sleepy: bool) -> int:
    return 100 if sleepy else 64


def open_stacks(db: Path, sleepy: bool) -> Stacks:
    engine = EngineConfig(concurrency=concurrency(sleepy))
    return Stacks(open_store(f"sqlite:///{db}"), config=StacksConfig(limits=LIMITS, engine=engine))


def forget_compiles() -> None:
    """What a new process starts without: remembered compiles and digests."""
    with _recompile._lock:
        _recompile._cache.clear()
    importlib.import_module("convection.plan.digest")._RECENT.clear()


def convection_run(deps: Deps, *, sleepy: bool, db: Path) -> dict[str, float]:
    stacks = open_stacks(db, sleepy)
    times: dict[str, float] = {}
    last = list(deps)[-1]
    texts = {
        "create": template(deps, sleepy=sleepy),
        "update1": template(deps, sleepy=sleepy, changed=last),
        "update1 cold": template(deps, sleepy=sleepy),  # back again
    }

    def timed(label: str, op: Callable[[], Any]) -> None:
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        op()
        times[label] = time.perf_counter() - start
        # CPU seconds of this process: on a machine shared with other work,
        # wall time measures the neighbours as much as the engine.
        times[f"{label} cpu"] = time.process_time() - cpu

    def create() -> None:
        inputs = StackInputs.from_text(texts["create"], limits=LIMITS)
        ref = stacks.create("bench", "s", inputs)
        shown = stacks.wait(ref["id"])
        assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]

    def update(label: str, service: Stacks) -> None:
        inputs = StackInputs.from_text(texts[label], limits=LIMITS)
        ref = service.update("bench", "s", inputs)
        shown = service.wait(ref["id"])
        assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]

    def delete() -> None:
        stack_id = stacks.show("bench", "s")["id"]
        stacks.delete("bench", "s")
        stacks.wait(stack_id)

    timed("create", create)
    if not sleepy:
        timed("update1", lambda: update("update1", stacks))
        forget_compiles()
        fresh = open_stacks(db, sleepy)
        timed("update1 cold", lambda: update("update1 cold", fresh))
        fresh.store.close()
    timed("delete", delete)
    stacks.store.close()
    return times


def taskflow_run(deps: Deps, *, sleepy: bool, budget: float) -> tuple[float, bool]:
    """TaskFlow's parallel engine on ``deps``: seconds for load + run of a
    built flow, and whether it finished (a watchdog suspends it at
    ``budget``; it then stops once the step in progress ends)."""
    from taskflow import engines, states, task  # type: ignore[import-untyped]
    from taskflow.patterns import graph_flow  # type: ignore[import-untyped]

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
    with futures.ThreadPoolExecutor(max_workers=concurrency(sleepy)) as pool:
        gc.collect()
        start = time.perf_counter()
        engine = engines.load(flow, engine="parallel", executor=pool)
        watchdog = threading.Timer(budget, engine.suspend)
        watchdog.start()
        try:
            engine.run()
        finally:
            watchdog.cancel()
        elapsed = time.perf_counter() - start
        return elapsed, engine.storage.get_flow_state() == states.SUCCESS


def taskflow_child(name: str, n: int, budget: float) -> None:
    """One TaskFlow run, in a process of its own; prints its result."""
    seconds, done = taskflow_run(shape(name, n), sleepy=name == "sleepy-wide", budget=budget)
    print(json.dumps({"seconds": seconds, "done": done}))


def taskflow_capped(name: str, n: int, budget: float) -> tuple[float, bool, str]:
    """TaskFlow on shape ``name`` of ``n`` in a child process: (seconds,
    finished, note). Suspended at ``budget``; killed if it is still going
    half the budget (at least a minute) later: a suspension only takes
    effect between TaskFlow's steps, which can be long on big graphs."""
    args = [sys.executable, __file__, "--taskflow-child", f"{name}:{n}"]
    args += ["--taskflow-budget", str(budget)]
    try:
        out = subprocess.run(
            args, check=True, capture_output=True, text=True, timeout=budget + max(60, budget / 2)
        ).stdout
    except subprocess.TimeoutExpired:
        return budget, False, f"(TaskFlow not done at {budget:.0f} s; killed when it did not stop)"
    found = json.loads(out.strip().splitlines()[-1])
    done = bool(found["done"])
    note = "" if done else f"(TaskFlow suspended at {budget:.0f} s, not finished)"
    return (float(found["seconds"]) if done else budget), done, note


def memory_child(n: int, traced: bool) -> None:
    """Create, update and delete a layered stack; print the peak memory."""
    import tracemalloc

    baseline = peak_rss_mb()
    if traced:
        tracemalloc.start()
    with tempfile.TemporaryDirectory() as tmp:
        convection_run(shape("layered", n), sleepy=False, db=Path(tmp) / "mem.db")
    peak = tracemalloc.get_traced_memory()[1] / 1e6 if traced else NAN
    rss = peak_rss_mb()
    print(json.dumps({"traced": peak, "rss": rss, "baseline": baseline}))


def peak_rss_mb() -> float:
    """This process's peak RSS in MB. Linux's ``VmHWM`` where there is one:
    ``ru_maxrss`` survives fork and exec, so a child started by a big
    parent (this bench, after its 10,000 rows) reports the parent's peak."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory(n: int) -> None:
    """Peak memory of a layered stack's create+update+delete, each in a
    fresh process: traced (tracemalloc) and max RSS (without tracemalloc,
    which itself inflates RSS)."""
    found = {}
    for traced in (True, False):
        args = [sys.executable, __file__, "--memory-child", str(n)]
        out = subprocess.run(
            [*args, *(["--traced"] if traced else [])],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        found[traced] = json.loads(out.strip().splitlines()[-1])
    print(
        f"peak memory, layered {n:,} create+update+delete: tracemalloc "
        f"{found[True]['traced']:.0f} MB; max RSS {found[False]['rss']:.0f} MB "
        f"(of which {found[False]['baseline']:.0f} MB after imports) (target <= 150 MB)"
    )


def machine() -> str:
    import taskflow.version  # type: ignore[import-untyped]

    return (
        f"# {platform.processor() or platform.machine()}, {__import__('os').cpu_count()} cores, "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"TaskFlow {taskflow.version.version_string()}"
    )


def row(name: str, n: int, t: dict[str, float], tf: float, done: bool, note: str) -> str:
    ratio = tf / t["create"] if t["create"] and tf == tf else NAN
    cells = [t["create"], t.get("update1", NAN), t.get("update1 cold", NAN), t["delete"]]
    nums = " ".join(f"{v:>9.3f}" for v in cells)
    over = "" if done else ">"
    tf_cell = f"{over}{tf:.3f}"
    ratio_cell = f"{over}{ratio:.1f}x"
    cpu = [t.get(f"{op} cpu", NAN) for op in ("create", "update1", "update1 cold", "delete")]
    cpu_cells = " ".join(f"{v:>9.3f}" for v in cpu)
    line = f"{name:<12} {n:>6} {nums} {tf_cell:>10} {ratio_cell:>9} {note}".rstrip()
    return f"{line}\n{'  cpu s':<19} {cpu_cells}"


GROUP_OPS = {"group": ("create", "delete"), "rolling": ("update",)}
ROLLING_BATCH = 10


def group_child(kind: str, n: int, cap: float) -> None:
    """One nested-group row, in a process of its own: prints a JSON line
    after each operation (seconds, or null when not settled within ``cap``)
    and leaves at once on a miss, without waiting for the engine."""
    with tempfile.TemporaryDirectory() as tmp:
        stacks = nested_bench.open_stacks(Path(tmp) / "group.db")
        batch = ROLLING_BATCH if kind == "rolling" else 0

        def timed(op: str, start_op: Callable[[], dict[str, Any]], status: str) -> None:
            gc.collect()
            start = time.perf_counter()
            try:
                shown = stacks.wait(start_op()["id"], timeout=cap)
            except TimeoutError:
                print(json.dumps({op: None}), flush=True)
                os._exit(0)
            took = time.perf_counter() - start
            assert shown["stack_status"] == status, (op, shown["stack_status_reason"])
            print(json.dumps({op: took}), flush=True)

        def create() -> dict[str, Any]:
            return stacks.create(
                "bench", "g", nested_bench.inputs(nested_bench.group(n, rolling_batch=batch))
            )

        def update() -> dict[str, Any]:
            text = nested_bench.group(n, index="%index%-v2", rolling_batch=batch)
            return stacks.update("bench", "g", nested_bench.inputs(text))

        def delete() -> dict[str, Any]:
            found = stacks.show("bench", "g")
            stacks.delete("bench", "g")
            return found

        if kind == "rolling":
            timed("setup", create, "CREATE_COMPLETE")
            timed("update", update, "UPDATE_COMPLETE")
        else:
            timed("create", create, "CREATE_COMPLETE")
            timed("delete", delete, "DELETE_COMPLETE")
        stacks.store.close()


def group_row(kind: str, n: int, cap: float) -> str:
    """Run ``group_child`` in a child process; a cell it did not report
    within the cap reads ``>cap``."""
    args = [sys.executable, __file__, "--group-child", f"{kind}:{n}", "--group-cap", str(cap)]
    found: dict[str, float | None] = {}
    try:
        out = subprocess.run(
            args, check=True, capture_output=True, text=True, timeout=3 * cap + 60
        ).stdout
    except subprocess.TimeoutExpired as gone:
        raw = gone.stdout or b""
        out = raw.decode() if isinstance(raw, bytes) else raw
    for line in out.splitlines():
        if line.startswith("{"):
            found.update(json.loads(line))
    cells = []
    for op in GROUP_OPS[kind]:
        if op not in found:
            cells.append(f"{op} not run")  # an operation before it missed the cap
            continue
        took = found[op]
        cells.append(f"{op} {took:.3f} s" if took is not None else f"{op} >{cap:.0f} s")
        if took is None:
            break
    label = "group" if kind == "group" else f"rolling b{ROLLING_BATCH}"
    return f"{label:<12} {n:>6}  " + ", ".join(cells)


def groups(members: int, rolling: int, cap: float) -> None:
    print(f"\nnested ResourceGroup (3 resources a member), cap {cap:.0f} s per operation")
    print(group_row("group", members, cap), flush=True)
    print(group_row("rolling", rolling, cap), flush=True)
    print(
        f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}"
        " (target: a group of 1,000 creates in <= 5 s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--shapes", default="wide,chain,layered,sleepy-wide")
    parser.add_argument("--no-taskflow", action="store_true")
    parser.add_argument("--taskflow-budget", type=float, default=60.0)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--group-members", type=int, default=1000)
    parser.add_argument("--rolling-members", type=int, default=100)
    parser.add_argument("--group-cap", type=float, default=120.0)
    parser.add_argument("--no-groups", action="store_true")
    parser.add_argument("--group-child", help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--taskflow-child", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child, args.traced)
        return
    if args.group_child:
        child_kind, child_n = args.group_child.split(":")
        group_child(child_kind, int(child_n), args.group_cap)
        return
    if args.taskflow_child:
        child_shape, child_n = args.taskflow_child.split(":")
        taskflow_child(child_shape, int(child_n), args.taskflow_budget)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    print(machine())
    header = (
        f"{'shape':<12} {'N':>6} {'create s':>9} {'update1 s':>9} {'upd1 cold':>9}"
        f" {'delete s':>9} {'taskflow s':>10} {'tf/create':>9}"
    )
    print(header)
    print("-" * len(header), flush=True)
    rows: dict[tuple[str, int], dict[str, float]] = {}
    for name in args.shapes.split(","):
        for n in sizes:
            if name == "sleepy-wide" and n > 1000:
                continue
            deps = shape(name, n)
            sleepy = name == "sleepy-wide"
            with tempfile.TemporaryDirectory() as tmp:
                t = convection_run(deps, sleepy=sleepy, db=Path(tmp) / "bench.db")
            rows[(name, n)] = t
            tf, done, note = NAN, True, ""
            if not args.no_taskflow:
                tf, done, note = taskflow_capped(name, n, args.taskflow_budget)
            print(row(name, n, t, tf, done, note), flush=True)
    for name in ("wide", "chain", "layered"):
        small, big = rows.get((name, 1000)), rows.get((name, 10000))
        if small and big:
            print(
                f"growth {name}: create 10k/1k = {big['create'] / small['create']:.1f}x, "
                f"delete {big['delete'] / small['delete']:.1f}x (target <= 12x)"
            )
    if not args.no_memory and 10000 in sizes:
        memory(10000)
    if not args.no_groups:
        groups(args.group_members, args.rolling_members, args.group_cap)


if __name__ == "__main__":
    main()
