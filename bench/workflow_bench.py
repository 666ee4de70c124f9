"""Workflow benchmark: Mistral v2 executions end to end, beside TaskFlow.

Convection runs the real thing: a workflow written as Mistral users write
it (``version: '2.0'``, YAML text generated for the size) is uploaded with
``create_workflows`` to a fresh SQLite store file, and each figure is
``create_execution`` + ``wait_execution`` (the embedded engine, every task,
action execution and state change journaled) until the execution is
SUCCESS. TaskFlow runs flows of the same shape in the same run, in a child
process each, because on a noisy 2-core machine only ratios hold.

Workloads (default size; target, printed beside each figure):
  items     with-items over 10,000 items of std.noop             <= 2 s
  chain     1,000 std.noop tasks, each on-success the next       <= 1 s
  fanout    one task on-success 1,000 branches, into a
            ``join: all`` task                                   <= 1 s
  sleep     with-items over 1,000 items of std.sleep 0.05,
            concurrency 100                                      <= 1.3 x ideal
            (ideal: ceil(N / 100) rounds of 0.05 s = 0.5 s)
  context   a 10 MiB input (one string) through a 100-task
            chain of std.noop                                    peak <= 3 x 10 MiB
                                                                 above the baseline
  linearity with-items over 1,000 vs 10,000 items               10k <= 12 x 1k

TaskFlow peers: ``items`` is an unordered flow of N no-op tasks, ``sleep``
the same with tasks that ``time.sleep(0.05)``, both on the parallel engine;
``fanout`` a linear flow of (a task, an unordered flow of N, a final task)
on the parallel engine; ``chain`` and ``context`` linear flows on the
serial engine (nothing in them can overlap; it is TaskFlow's faster
engine there), the context's tasks each requiring the 10 MiB ``blob`` from
the engine's store. The parallel engine gets a thread pool made
beforehand of 64 workers (Convection's engine concurrency), 100 for
``sleep``. Persistence (``--taskflow-store``): ``sqlite`` (for fairness: TaskFlow's
SQLAlchemy backend on a fresh SQLite file, schema made beforehand, every
atom's state and result saved as it changes; it needs SQLAlchemy-Utils,
from TaskFlow's ``database`` extra) or ``memory`` (its default in-memory
backend); ``auto``, the default, is ``sqlite`` when SQLAlchemy-Utils is
installed and ``memory`` otherwise. The header says which ran. A TaskFlow figure is
``engines.load`` + ``run`` of a built flow; a run not finished after
``--taskflow-budget`` seconds is suspended (the child killed if that does
not take effect soon after) and reads ``>budget``.

Before each timed run the collector runs and ``os.sync()`` flushes the
page cache (an earlier row's SQLite writes would otherwise slow this
row's commits). Each figure is the best of ``--runs`` (wall seconds, and beside it the
best CPU seconds of the process, ``time.process_time``, the steadier one on
a shared machine). TaskFlow stops repeating a row once a run took more
than 10 s.

Memory (``context``): each side in fresh child processes, after one
untimed warm-up execution of the same workflow with a small input (so
imports and caches are not counted): the tracemalloc peak of
create + wait, traced from just after the 10 MiB input was built (the
baseline: the caller's own input is not counted), and, in a second
untraced child, the RSS high-water mark (``VmHWM``, reset through
``/proc/self/clear_refs`` just before) minus the RSS at the baseline.

Usage: .venv/bin/python bench/workflow_bench.py [--runs 3] [--quick]
       [--sizes items=10000,chain=1000,fanout=1000,sleep=1000,context=10]
       [--workloads items,chain,fanout,sleep,context,linearity]
       [--no-taskflow] [--no-convection] [--taskflow-store auto|sqlite|memory]
       [--taskflow-budget 60] [--timeout 120] [--no-memory]

``--quick`` divides every size by 10 and runs once (targets that only hold
at full size then read ``-``). ``context`` is in MiB.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import math
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT = "bench"
MIB = 1 << 20
NAN = float("nan")
#: Convection's engine concurrency (EngineConfig's default), and TaskFlow's pool.
CONCURRENCY = 64
ITEMS_CONCURRENCY = 100
SLEEP_SECONDS = 0.05
CONTEXT_TASKS = 100
FULL_SIZES: dict[str, int] = {
    "items": 10_000,
    "chain": 1_000,
    "fanout": 1_000,
    "sleep": 1_000,
    "context": 10,
}
#: Wall-time targets in seconds, at the full size only.
TIME_TARGETS: dict[str, float] = {"items": 2.0, "chain": 1.0, "fanout": 1.0}
SLEEP_FACTOR = 1.3
MEMORY_FACTOR = 3.0
LINEAR_FACTOR = 12.0
#: TaskFlow repeats a row only while its runs take less than this.
TASKFLOW_REPEAT_UNDER = 10.0
ALL_WORKLOADS = ("items", "chain", "fanout", "sleep", "context", "linearity")
LABELS = {
    "items": "with-items std.noop",
    "chain": "chain of std.noop",
    "fanout": "fan-out, join: all",
    "sleep": "with-items std.sleep 0.05 c100",
    "context": "{mib} MiB input, 100-task chain",
}


# -- the workflows, as Mistral users write them ---------------------------------------------


def _doc(name: str, description: str, lines: list[str]) -> str:
    head = ["---", "version: '2.0'", "", f"{name}:", f"  description: {description}"]
    return "\n".join([*head, *lines]) + "\n"


def _chain_tasks(n: int) -> list[str]:
    lines = ["  tasks:"]
    for i in range(n):
        lines += [f"    step_{i}:", "      action: std.noop"]
        if i + 1 < n:
            lines.append(f"      on-success: step_{i + 1}")
    return lines


def workflow_text(workload: str, n: int) -> str:
    """The Mistral document of ``workload`` at size ``n``; its workflow is
    named after the workload."""
    if workload == "items":
        return _doc(
            "items",
            f"a no-op for each of {n} items",
            [
                "  input:",
                "    - hosts",
                "  tasks:",
                "    touch_all:",
                "      with-items: host in <% $.hosts %>",
                "      action: std.noop",
            ],
        )
    if workload == "sleep":
        return _doc(
            "sleep",
            f"a short sleep for each of {n} items, {ITEMS_CONCURRENCY} at a time",
            [
                "  input:",
                "    - hosts",
                f"    - seconds: {SLEEP_SECONDS}",
                "  tasks:",
                "    wait_all:",
                "      with-items: host in <% $.hosts %>",
                f"      concurrency: {ITEMS_CONCURRENCY}",
                "      action: std.sleep seconds=<% $.seconds %>",
            ],
        )
    if workload == "chain":
        return _doc("chain", f"{n} steps in a row", _chain_tasks(n))
    if workload == "fanout":
        lines = ["  tasks:", "    fork:", "      action: std.noop", "      on-success:"]
        lines += [f"        - branch_{i}" for i in range(n)]
        for i in range(n):
            lines += [f"    branch_{i}:", "      action: std.noop", "      on-success: join"]
        lines += ["    join:", "      join: all", "      action: std.noop"]
        return _doc("fanout", f"{n} branches into one join", lines)
    if workload == "context":
        return _doc(
            "context",
            f"a large input carried through {n} steps",
            ["  input:", "    - blob", *_chain_tasks(n)],
        )
    raise ValueError(workload)


def workflow_input(workload: str, n: int, blob_bytes: int = 0) -> dict[str, Any]:
    if workload in ("items", "sleep"):
        return {"hosts": [f"host-{i}" for i in range(n)]}
    if workload == "context":
        return {"blob": "x" * blob_bytes}
    return {}


def task_count(workload: str, n: int) -> int:
    """Task executions a successful run leaves."""
    return {"items": 1, "sleep": 1, "chain": n, "fanout": n + 2, "context": n}[workload]


# -- measurements ------------------------------------------------------------------------------


@dataclass(slots=True)
class Figure:
    """Best wall and CPU seconds of a row's runs; ``done`` False when a run
    did not finish (then ``wall`` is the budget)."""

    wall: float = NAN
    cpu: float = NAN
    done: bool = True
    note: str = ""

    def add(self, wall: float, cpu: float) -> None:
        self.wall = wall if math.isnan(self.wall) else min(self.wall, wall)
        self.cpu = cpu if math.isnan(self.cpu) else min(self.cpu, cpu)


def settle() -> None:
    """Before a timed run: no garbage of an earlier run, and no dirty pages
    of one (TaskFlow's SQLite file, say) for this run's commits to wait on."""
    gc.collect()
    os.sync()


@contextlib.contextmanager
def convection_service(db: Path, text: str) -> Iterator[Any]:
    """A ``Stacks`` over a fresh SQLite store file with the workflow
    uploaded and the workflow front-end registered on its engine."""
    from convection.convergence import EngineConfig
    from convection.service.stacks import Stacks, StacksConfig
    from convection.store.sql import open_store
    from convection.workflows import create_workflows, engine_for

    config = StacksConfig(engine=EngineConfig(concurrency=CONCURRENCY))
    stacks = Stacks(open_store(f"sqlite:///{db}"), config=config)
    try:
        create_workflows(stacks.store, PROJECT, text)
        engine_for(stacks)
        yield stacks
    finally:
        stacks.store.close()


def convection_execute(stacks: Any, workload: str, given: dict[str, Any], timeout: float) -> None:
    """create_execution + wait_execution; raises unless SUCCESS."""
    from convection.workflows import create_execution, wait_execution

    body = create_execution(stacks.store, PROJECT, workload, input=given, params={})
    body = wait_execution(stacks, body["id"], timeout=timeout)
    if body["state"] != "SUCCESS":
        raise RuntimeError(f"{workload}: {body['state']}: {body.get('state_info')}")


def convection_once(
    workload: str, n: int, timeout: float, blob_bytes: int = 0
) -> tuple[float, float]:
    from convection.workflows import list_tasks

    text = workflow_text(workload, n)
    with tempfile.TemporaryDirectory() as tmp, convection_service(Path(tmp) / "wf.db", text) as st:
        given = workflow_input(workload, n, blob_bytes)
        settle()
        start, cpu = time.perf_counter(), time.process_time()
        convection_execute(st, workload, given, timeout)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        found = len(list_tasks(st.store, PROJECT))
        if found != task_count(workload, n):
            raise RuntimeError(f"{workload}: {found} tasks, expected {task_count(workload, n)}")
        return wall, cpu


def convection_figure(workload: str, n: int, runs: int, timeout: float, blob: int = 0) -> Figure:
    figure = Figure()
    for _ in range(runs):
        try:
            figure.add(*convection_once(workload, n, timeout, blob))
        except TimeoutError:
            return Figure(wall=timeout, done=False, note=f"(not done at {timeout:.0f} s)")
        except Exception as error:  # an engine bug: report it, keep going
            return Figure(done=False, note=f"(FAILED: {type(error).__name__}: {error})")
    return figure


# -- TaskFlow ------------------------------------------------------------------------------


def taskflow_flow(workload: str, n: int) -> Any:
    from taskflow import task  # type: ignore[import-untyped]
    from taskflow.patterns import linear_flow, unordered_flow  # type: ignore[import-untyped]

    class Noop(task.Task):  # type: ignore[misc]
        def execute(self) -> None:
            return None

    class Nap(task.Task):  # type: ignore[misc]
        def execute(self) -> None:
            time.sleep(SLEEP_SECONDS)

    class Carry(task.Task):  # type: ignore[misc]
        def execute(self, blob: str) -> None:
            return None

    if workload == "items":
        return unordered_flow.Flow("items").add(*(Noop(name=f"item_{i}") for i in range(n)))
    if workload == "sleep":
        return unordered_flow.Flow("sleep").add(*(Nap(name=f"item_{i}") for i in range(n)))
    if workload == "chain":
        return linear_flow.Flow("chain").add(*(Noop(name=f"step_{i}") for i in range(n)))
    if workload == "fanout":
        branches = unordered_flow.Flow("branches").add(*(Noop(name=f"b_{i}") for i in range(n)))
        return linear_flow.Flow("fanout").add(Noop(name="fork"), branches, Noop(name="join"))
    if workload == "context":
        return linear_flow.Flow("context").add(*(Carry(name=f"step_{i}") for i in range(n)))
    raise ValueError(workload)


def taskflow_backend(kind: str, tmp: Path) -> Any:
    """TaskFlow's persistence: its SQLAlchemy backend on a SQLite file
    (schema made here, untimed), or None for its in-memory default."""
    if kind == "memory":
        return None
    from taskflow.persistence import backends  # type: ignore[import-untyped]

    backend = backends.fetch({"connection": f"sqlite:///{tmp / 'taskflow.db'}"})
    with contextlib.closing(backend.get_connection()) as conn:
        conn.upgrade()
    return backend


def taskflow_once(
    workload: str, n: int, store_kind: str, budget: float, blob_bytes: int = 0
) -> tuple[float, float, bool]:
    """(wall, cpu, finished) of engines.load + run of a built flow."""
    from taskflow import engines, states

    parallel = workload in ("items", "sleep", "fanout")
    workers = ITEMS_CONCURRENCY if workload == "sleep" else CONCURRENCY
    flow = taskflow_flow(workload, n)
    store = {"blob": "x" * blob_bytes} if workload == "context" else None
    with tempfile.TemporaryDirectory() as tmp, futures.ThreadPoolExecutor(workers) as pool:
        backend = taskflow_backend(store_kind, Path(tmp))
        options: dict[str, Any] = {"engine": "parallel", "executor": pool} if parallel else {}
        settle()
        start, cpu = time.perf_counter(), time.process_time()
        engine = engines.load(flow, store=store, backend=backend, **options)
        watchdog = threading.Timer(budget, engine.suspend)
        watchdog.start()
        try:
            engine.run()
        finally:
            watchdog.cancel()
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        done = engine.storage.get_flow_state() == states.SUCCESS
        if backend is not None:
            backend.close()
        return wall, cpu, done


def taskflow_child(spec: str, budget: float) -> None:
    workload, n, store_kind, blob = spec.split(":")
    wall, cpu, done = taskflow_once(workload, int(n), store_kind, budget, int(blob))
    print(json.dumps({"wall": wall, "cpu": cpu, "done": done}))


def taskflow_figure(
    workload: str, n: int, runs: int, store_kind: str, budget: float, blob: int = 0
) -> Figure:
    """Each run in a child process of its own."""
    figure = Figure()
    grace = min(60.0, max(10.0, budget / 2))
    for _ in range(runs):
        args = [sys.executable, __file__, "--taskflow-child", f"{workload}:{n}:{store_kind}:{blob}"]
        args += ["--taskflow-budget", str(budget)]
        try:
            done = subprocess.run(
                args, check=True, capture_output=True, text=True, timeout=budget + grace
            )
        except subprocess.TimeoutExpired:
            note = f"(not done at {budget:.0f} s; killed when it did not stop)"
            return Figure(wall=budget, done=False, note=note)
        except subprocess.CalledProcessError as error:
            tail = (error.stderr or "").strip().splitlines()[-1:]
            return Figure(done=False, note=f"(FAILED: {' '.join(tail)})")
        found = json.loads(done.stdout.strip().splitlines()[-1])
        if not found["done"]:
            return Figure(wall=budget, done=False, note=f"(suspended at {budget:.0f} s)")
        figure.add(float(found["wall"]), float(found["cpu"]))
        if found["wall"] > TASKFLOW_REPEAT_UNDER:
            break
    return figure


# -- memory ------------------------------------------------------------------------------------


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return NAN


def _reset_peak_rss() -> bool:
    """Linux resets VmHWM to the current RSS on a write of 5."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def memory_child(spec: str, timeout: float, budget: float) -> None:
    """One side's context run after a warm-up; prints MB above the baseline."""
    side, blob, traced = spec.split(":")
    blob_bytes, use_trace = int(blob), traced == "traced"
    found: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if side == "convection":
            text = workflow_text("context", CONTEXT_TASKS)
            with convection_service(Path(tmp) / "wf.db", text) as stacks:
                convection_execute(stacks, "context", {"blob": "warm-up"}, timeout)
                given = workflow_input("context", CONTEXT_TASKS, blob_bytes)
                found = _measure(
                    lambda: convection_execute(stacks, "context", given, timeout), use_trace
                )
        else:
            from taskflow import engines

            flow = taskflow_flow("context", CONTEXT_TASKS)
            backend = taskflow_backend(side.split("-", 1)[1], Path(tmp))
            engines.load(flow, store={"blob": "warm-up"}, backend=backend).run()
            store = {"blob": "x" * blob_bytes}
            flow = taskflow_flow("context", CONTEXT_TASKS)
            found = _measure(
                lambda: engines.load(flow, store=store, backend=backend).run(), use_trace
            )
            if backend is not None:
                backend.close()
    print(json.dumps(found))


def _measure(work: Callable[[], None], traced: bool) -> dict[str, float]:
    gc.collect()
    if traced:
        tracemalloc.start()
        work()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return {"traced": peak / MIB}
    reset = _reset_peak_rss()
    before = _status_mb("VmRSS")
    work()
    return {"rss": _status_mb("VmHWM") - before if reset else NAN}


def memory_figures(side: str, blob_bytes: int, timeout: float, budget: float) -> dict[str, float]:
    found: dict[str, float] = {}
    for mode in ("traced", "rss"):
        args = [sys.executable, __file__, "--memory-child", f"{side}:{blob_bytes}:{mode}"]
        args += ["--timeout", str(timeout), "--taskflow-budget", str(budget)]
        try:
            out = subprocess.run(
                args, check=True, capture_output=True, text=True, timeout=timeout + 60
            ).stdout
            found.update(json.loads(out.strip().splitlines()[-1]))
        except subprocess.CalledProcessError as error:
            tail = (error.stderr or "").strip().splitlines()[-1:]
            found[f"{mode} error"] = NAN
            print(f"  memory {side} {mode} FAILED: {' '.join(tail)}", flush=True)
        except subprocess.TimeoutExpired:
            print(f"  memory {side} {mode}: not done in {timeout + 60:.0f} s", flush=True)
    return found


# -- the table ---------------------------------------------------------------------------------


def machine(with_taskflow: bool) -> str:
    line = (
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )
    if with_taskflow:
        import taskflow.version  # type: ignore[import-untyped]

        line += f", TaskFlow {taskflow.version.version_string()}"
    return line


def _cell(value: float, done: bool = True, width: int = 8) -> str:
    if math.isnan(value) and done:
        return f"{'-':>{width}}"
    if not done and math.isnan(value):
        return f"{'failed':>{width}}"
    return f"{'>' if not done else ''}{value:.3f}".rjust(width)


HEADER = (
    f"{'workload':<31} {'N':>6} {'conv s':>8} {'cpu s':>8} {'target':>10} {'verdict':>7}"
    f" {'taskflow s':>10} {'cpu s':>8} {'tf/conv':>8}"
)


def target_of(workload: str, n: int, full: bool) -> float:
    if workload == "sleep":
        return SLEEP_FACTOR * math.ceil(n / ITEMS_CONCURRENCY) * SLEEP_SECONDS
    if full and workload in TIME_TARGETS and n == FULL_SIZES[workload]:
        return TIME_TARGETS[workload]
    return NAN


def row(
    workload: str, n: int, conv: Figure | None, tf: Figure | None, target: float, mib: int = 0
) -> str:
    conv = conv or Figure()
    tf = tf or Figure()
    if math.isnan(target) or math.isnan(conv.wall):
        target_cell, verdict = "-", "-"
    else:
        target_cell = f"<= {target:.2f} s"
        verdict = "met" if conv.done and conv.wall <= target else "MISSED"
    ratio = tf.wall / conv.wall if conv.done and conv.wall else NAN
    ratio_cell = "-" if math.isnan(ratio) else f"{'>' if not tf.done else ''}{ratio:.1f}x"
    label = LABELS[workload].format(mib=mib)
    line = (
        f"{label:<31} {n:>6} {_cell(conv.wall, conv.done)} {_cell(conv.cpu)}"
        f" {target_cell:>10} {verdict:>7} {_cell(tf.wall, tf.done, 10)} {_cell(tf.cpu)}"
        f" {ratio_cell:>8}"
    )
    notes = " ".join(note for note in (conv.note, tf.note and f"TaskFlow {tf.note}") if note)
    return f"{line} {notes}".rstrip()


def parse_sizes(text: str, quick: bool) -> dict[str, int]:
    sizes = {k: (max(1, v // 10) if quick else v) for k, v in FULL_SIZES.items()}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        if key not in sizes:
            raise SystemExit(f"--sizes: unknown workload {key!r} (one of {', '.join(sizes)})")
        sizes[key] = int(value)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="sizes / 10, one run")
    parser.add_argument("--sizes", default="", help="e.g. items=10000,chain=1000,context=10")
    parser.add_argument("--workloads", default=",".join(ALL_WORKLOADS))
    parser.add_argument("--no-taskflow", action="store_true")
    parser.add_argument("--no-convection", action="store_true")
    parser.add_argument("--taskflow-store", choices=("auto", "sqlite", "memory"), default="auto")
    parser.add_argument("--taskflow-budget", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=120.0, help="Convection's, per run")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--taskflow-child", help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.taskflow_child:
        taskflow_child(args.taskflow_child, args.taskflow_budget)
        return
    if args.memory_child:
        memory_child(args.memory_child, args.timeout, args.taskflow_budget)
        return

    runs = 1 if args.quick else args.runs
    sizes = parse_sizes(args.sizes, args.quick)
    full = not args.quick and not args.sizes
    chosen = [w for w in args.workloads.split(",") if w]
    unknown = set(chosen) - set(ALL_WORKLOADS)
    if unknown:
        raise SystemExit(f"--workloads: unknown {', '.join(sorted(unknown))}")
    conv_on, tf_on = not args.no_convection, not args.no_taskflow
    store_kind = args.taskflow_store
    if store_kind == "auto":
        # TaskFlow's SQLAlchemy backend needs its ``database`` extra's SQLAlchemy-Utils.
        store_kind = "sqlite" if importlib.util.find_spec("sqlalchemy_utils") else "memory"

    print(machine(tf_on))
    if conv_on:
        print(
            f"# Convection: fresh SQLite store file per run, embedded engine, "
            f"concurrency {CONCURRENCY}; create_execution + wait_execution; best of {runs}"
        )
    if tf_on:
        persistence = (
            "SQLite persistence (SQLAlchemy backend, a fresh file per run)"
            if store_kind == "sqlite"
            else "in-memory persistence (its default)"
        )
        if store_kind == "memory" and args.taskflow_store == "auto":
            persistence += " [no SQLAlchemy-Utils: pip install SQLAlchemy-Utils for SQLite]"
        print(
            f"# TaskFlow: {persistence}; parallel engine ({CONCURRENCY} workers, "
            f"{ITEMS_CONCURRENCY} for sleep) for items/fanout/sleep, serial for chains; "
            f"load + run, best of {runs}, budget {args.taskflow_budget:.0f} s"
        )
    print(HEADER)
    print("-" * len(HEADER), flush=True)

    def figures(workload: str, n: int, blob: int = 0) -> tuple[Figure | None, Figure | None]:
        conv = convection_figure(workload, n, runs, args.timeout, blob) if conv_on else None
        tf = None
        if tf_on:
            tf = taskflow_figure(workload, n, runs, store_kind, args.taskflow_budget, blob)
        return conv, tf

    done: dict[tuple[str, int], tuple[Figure | None, Figure | None]] = {}
    for workload in ("items", "chain", "fanout", "sleep"):
        if workload not in chosen:
            continue
        n = sizes[workload]
        done[(workload, n)] = found = figures(workload, n)
        print(row(workload, n, *found, target_of(workload, n, full)), flush=True)
    if "context" in chosen:
        blob = sizes["context"] * MIB
        found = figures("context", CONTEXT_TASKS, blob)
        print(row("context", CONTEXT_TASKS, *found, NAN, sizes["context"]), flush=True)

    if "linearity" in chosen:
        big = sizes["items"]
        small = max(1, big // 10)
        if ("items", big) not in done:
            done[("items", big)] = figures("items", big)
        done[("items", small)] = found = figures("items", small)
        print(row("items", small, *found, NAN), flush=True)
        print(linearity(small, big, done[("items", small)], done[("items", big)]))

    if "context" in chosen and not args.no_memory:
        print(memory_rows(sizes["context"], conv_on, tf_on, store_kind, args))


def _ratio(small: Figure | None, big: Figure | None) -> tuple[float, bool]:
    if small is None or big is None or math.isnan(small.wall) or math.isnan(big.wall):
        return NAN, True
    return big.wall / small.wall, small.done and big.done


def linearity(
    small: int,
    big: int,
    low: tuple[Figure | None, Figure | None],
    high: tuple[Figure | None, Figure | None],
) -> str:
    cells = []
    conv, conv_done = _ratio(low[0], high[0])
    if not math.isnan(conv):
        verdict = "met" if conv_done and conv <= LINEAR_FACTOR else "MISSED"
        assert low[0] is not None and high[0] is not None
        cpu = high[0].cpu / low[0].cpu if low[0].cpu else NAN
        cells.append(
            f"Convection {conv:.1f}x (CPU {cpu:.1f}x) (target <= {LINEAR_FACTOR:.0f}x) {verdict}"
        )
    tf, tf_done = _ratio(low[1], high[1])
    if not math.isnan(tf) and tf_done:
        cells.append(f"TaskFlow {tf:.1f}x")
    elif low[1] is not None:  # a capped run gives no ratio
        cells.append("TaskFlow - (a size did not finish within the budget)")
    label = f"linearity with-items {big:,} / {small:,}"
    return f"{label}: " + ("; ".join(cells) or "-")


def memory_rows(mib: int, conv_on: bool, tf_on: bool, store_kind: str, args: Any) -> str:
    target = MEMORY_FACTOR * mib
    lines = [
        f"\npeak memory above the baseline, {mib} MiB input through a {CONTEXT_TASKS}-task chain"
        f" (target <= {target:.0f} MiB; fresh process each, after a warm-up run)",
        f"{'side':<31} {'tracemalloc MiB':>15} {'RSS MiB':>8} {'verdict':>7}",
    ]
    sides = (["convection"] if conv_on else []) + ([f"taskflow-{store_kind}"] if tf_on else [])
    for side in sides:
        found = memory_figures(side, mib * MIB, args.timeout, args.taskflow_budget)
        traced, rss = found.get("traced", NAN), found.get("rss", NAN)
        verdict = "-"
        if side == "convection" and not math.isnan(traced):
            verdict = "met" if traced <= target else "MISSED"
        label = "Convection" if side == "convection" else f"TaskFlow ({store_kind})"
        lines.append(f"{label:<31} {traced:>15.1f} {rss:>8.1f} {verdict:>7}")
    lines.append("(verdict on the tracemalloc peak; RSS: VmHWM after, reset before, minus VmRSS)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
