"""REST API benchmark: python-heatclient against a live ``convection server``.

Issue 6's two figures, each printed beside peers taken in the same run,
because on the shared 2-core machine only ratios within one run hold:

* **Load**: ``--stacks`` stacks of 10 resources (OS::Heat::None,
  RandomString and Value, with ``get_attr`` and ``depends_on`` edges)
  created by ``--clients`` heatclient threads at once; stacks per second
  from the first create until every stack is CREATE_COMPLETE, and the
  p50/p99 latency of ``stack show`` measured by ``--show-clients`` extra
  threads during that load.
* **Outputs**: ``stacks.output_list``, ``stacks.output_show`` and
  ``stacks.get`` of stacks of 10, 100 and 1,000 resources (three outputs
  each), ``--calls`` times each; per-call latency, and the ratio of the
  largest stack to the smallest, which must stay near 1 (outputs are
  stored when an operation ends, so reading them is O(1) in resources).

Peers, in the same run: **in-process**, the same operations through the
``Stacks`` service with its engine in a thread (what the server runs, minus
HTTP); and the **HTTP floor**, a trivial FastAPI endpoint on uvicorn, in a
process of its own and called the way heatclient calls (a new
``requests`` connection per call), under the same load. Heat itself
cannot run here.

Show probes pause 20 ms between calls on both sides (sampling, not load);
the reads take turns across sizes and sides, so load from elsewhere hits
all of them alike; each read row gives the median and, in brackets, the
best call, which moves least on a busy machine.

Usage: .venv/bin/python bench/api_bench.py [--stacks 100] [--clients 16]
       [--show-clients 2] [--sizes 10,100,1000] [--calls 100] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import requests
from heatclient.client import Client  # type: ignore[import-untyped]

from convection.api.engine_thread import EngineThread
from convection.cli.context import Invocation
from convection.model.compiler import StackInputs
from convection.service.stacks import Stacks

PROJECT = "bench"
START_SECONDS = 120
SETTLE_SECONDS = 900
FLOOR_APP = """\
import sys
import uvicorn
from fastapi import FastAPI

app = FastAPI()


@app.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_config=None, access_log=False)
"""


# -- templates -----------------------------------------------------------------


def value(name: str, source: str) -> str:
    """An OS::Heat::Value that reads ``source``'s ``value`` attribute."""
    read = f"{{get_attr: [{source}, value]}}"
    return f"  {name}: {{type: OS::Heat::Value, properties: {{value: {read}}}}}\n"


def cell(i: int) -> str:
    """Ten resources: three RandomString, five Value, two None, with
    get_attr edges inside the cell and one to the cell before."""
    joined = f"{{list_join: ['-', [{{get_attr: [s{i}a, value]}}, {{get_attr: [s{i}b, value]}}]]}}"
    return (
        f"  s{i}a: {{type: OS::Heat::RandomString, properties: {{length: 8}}}}\n"
        f"  s{i}b: {{type: OS::Heat::RandomString, properties: {{length: 8}}}}\n"
        f"  s{i}c: {{type: OS::Heat::RandomString, properties: {{length: 4}}}}\n"
        + value(f"v{i}a", f"s{i}a")
        + f"  v{i}b: {{type: OS::Heat::Value, properties: {{value: {joined}}}}}\n"
        + value(f"v{i}c", f"v{i}b")
        + value(f"v{i}d", f"v{i - 1}c" if i else f"v{i}a")
        + value(f"v{i}e", f"s{i}c")
        + f"  n{i}a: {{type: OS::Heat::None, depends_on: [v{i}c]}}\n"
        f"  n{i}b: {{type: OS::Heat::None, depends_on: [v{i}d, v{i}e]}}\n"
    )


def template(resources: int) -> str:
    """``resources`` (a multiple of 10) resources and three outputs, the
    same three whatever the size."""
    cells = max(1, resources // 10)
    last = cells - 1
    return (
        "heat_template_version: 2018-08-31\ndescription: api bench\nresources:\n"
        + "".join(cell(i) for i in range(cells))
        + "outputs:\n"
        + "  first: {description: the first cell, value: {get_attr: [v0b, value]}}\n"
        + f"  last: {{description: the last cell, value: {{get_attr: [v{last}c, value]}}}}\n"
        + "  both: {value: {list_join: [',', [{get_attr: [v0a, value]}, "
        + f"{{get_attr: [v{last}d, value]}}]]}}}}\n"
    )


# -- figures -------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``values``, in milliseconds."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[rank] * 1000


@dataclass
class Load:
    """One load run: its rate and the show latencies taken during it."""

    stacks_per_s: float = 0.0
    create_calls: list[float] = field(default_factory=list)
    shows: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)


@dataclass
class Calls:
    """Per-call latencies of each read, by stack size."""

    by_op: dict[tuple[str, int], list[float]] = field(default_factory=dict)


# -- processes -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
    env["CONVECTION_CONFIG"] = str(tmp / "absent.toml")
    return env


@contextmanager
def process(argv: list[str], env: dict[str, str], log: Path, health: str) -> Iterator[str]:
    """A server subprocess, once ``health`` answers 200; killed at the end."""
    with log.open("ab") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=sink, env=env)
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{argv[:2]} exited {proc.returncode}: see {log}")
            try:
                if requests.get(health, timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{argv[:2]} did not start: see {log}")
            time.sleep(0.2)
        yield health.rsplit("/", 1)[0]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def convection_server(tmp: Path) -> Any:
    port = free_port()
    argv = [str(Path(sys.executable).parent / "convection"), "server", "--no-auth"]
    argv += ["--bind", f"127.0.0.1:{port}", "--db", f"sqlite:///{tmp / 'api.db'}"]
    return process(argv, clean_env(tmp), tmp / "server.log", f"http://127.0.0.1:{port}/healthz")


def floor_server(tmp: Path) -> Any:
    port = free_port()
    argv = [sys.executable, "-c", FLOOR_APP, str(port)]
    return process(argv, clean_env(tmp), tmp / "floor.log", f"http://127.0.0.1:{port}/healthz")


@contextmanager
def local_service(tmp: Path) -> Iterator[Stacks]:
    """``Stacks`` built as ``convection server`` builds it, engine in a thread."""
    for key in [k for k in os.environ if k.startswith("CONVECTION_")]:
        del os.environ[key]
    os.environ["CONVECTION_CONFIG"] = str(tmp / "absent.toml")  # defaults, as the server's
    inv = Invocation(flags={"db": f"sqlite:///{tmp / 'in.db'}"})
    stacks = inv.local_stacks
    runner = EngineThread(stacks)
    runner.start()
    try:
        yield stacks
    finally:
        runner.stop(60)
        stacks.store.close()


# -- the two sides -------------------------------------------------------------


class Side(Protocol):
    """The operations a run needs, over HTTP (:class:`Api`) or in process
    (:class:`Local`): each row of the table runs the same calls on both."""

    def create(self, name: str, text: str) -> str: ...

    def show(self, ref: str) -> Any: ...

    def output_list(self, ref: str) -> Any: ...

    def output_show(self, ref: str, key: str) -> Any: ...

    def states(self) -> dict[str, str]:
        """Every stack's ``stack_status``, by name."""
        ...


class Api:
    """python-heatclient, one client per thread (heatclient's own
    ``requests`` call per request). A stack is named ``name/id``, as
    heatclient's own commands do after their first lookup."""

    def __init__(self, url: str) -> None:
        self.endpoint = f"{url}/v1/{PROJECT}"
        self.local = threading.local()

    @property
    def heat(self) -> Client:
        client = getattr(self.local, "client", None)
        if client is None:
            client = self.local.client = Client("1", endpoint=self.endpoint, token="bench")
        return client

    def create(self, name: str, text: str) -> str:
        made = self.heat.stacks.create(stack_name=name, template=text)
        return f"{name}/{made['stack']['id']}"

    def show(self, ref: str) -> Any:
        return self.heat.stacks.get(ref)

    def output_list(self, ref: str) -> Any:
        return self.heat.stacks.output_list(ref)

    def output_show(self, ref: str, key: str) -> Any:
        return self.heat.stacks.output_show(ref, key)

    def states(self) -> dict[str, str]:
        return {s.stack_name: s.stack_status for s in self.heat.stacks.list()}


class Local:
    def __init__(self, stacks: Stacks) -> None:
        self.stacks = stacks

    def create(self, name: str, text: str) -> str:
        return str(self.stacks.create(PROJECT, name, StackInputs.from_text(text))["id"])

    def show(self, ref: str) -> Any:
        return self.stacks.show(PROJECT, ref)

    def output_list(self, ref: str) -> Any:
        return self.stacks.outputs(PROJECT, ref)

    def output_show(self, ref: str, key: str) -> Any:
        return self.stacks.output(PROJECT, ref, key)

    def states(self) -> dict[str, str]:
        return {s["stack_name"]: s["stack_status"] for s in self.stacks.list(PROJECT)}


def settle(side: Side, names: set[str]) -> None:
    """Until every named stack is CREATE_COMPLETE (a failure stops the bench)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        states = side.states()
        failed = {n: s for n, s in states.items() if n in names and s.endswith("FAILED")}
        if failed:
            raise RuntimeError(f"stacks failed: {failed}")
        if all(states.get(n) == "CREATE_COMPLETE" for n in names):
            return
        if time.monotonic() > deadline:
            raise RuntimeError("stacks did not complete in time")
        time.sleep(0.1)


def floor_call(floor: str) -> Callable[[], Any]:
    return lambda: requests.get(f"{floor}/healthz", timeout=30).raise_for_status()


#: Pause between two probes of one probing thread: probes sample latency
#: at a steady rate on both sides instead of competing for the CPU (in
#: process, a probe with no pause would hold the GIL against the engine).
PROBE_PAUSE = 0.02


def load(side: Side, floor: str, stacks: int, clients: int, show_clients: int) -> Load:
    """Create ``stacks`` 10-resource stacks with ``clients`` threads; probe
    show (and the floor) from other threads until all are complete."""
    text = template(10)
    result = Load()
    warm = f"warm-{uuid.uuid4().hex[:6]}"
    first = side.create(warm, text)
    settle(side, {warm})
    names = [f"load-{i:04d}" for i in range(stacks)]
    todo: queue.Queue[str] = queue.Queue()
    for n in names:
        todo.put(n)
    created = [first]
    done = threading.Event()

    def creator() -> None:
        while True:
            try:
                name = todo.get_nowait()
            except queue.Empty:
                return
            started = time.perf_counter()
            ref = side.create(name, text)
            result.create_calls.append(time.perf_counter() - started)
            created.append(ref)

    def prober(call: Callable[[], Any], into: list[float]) -> None:
        while not done.is_set():
            started = time.perf_counter()
            call()
            into.append(time.perf_counter() - started)
            done.wait(PROBE_PAUSE)

    def show_latest() -> Any:
        return side.show(created[-1])

    probes = [
        threading.Thread(target=prober, args=(show_latest, result.shows))
        for _ in range(show_clients)
    ] + [threading.Thread(target=prober, args=(floor_call(floor), result.floor))]
    workers = [threading.Thread(target=creator) for _ in range(clients)]
    started = time.perf_counter()
    for t in probes + workers:
        t.start()
    for t in workers:
        t.join()
    settle(side, set(names))
    took = time.perf_counter() - started
    done.set()
    for t in probes:
        t.join()
    result.stacks_per_s = stacks / took
    return result


def read_ops(side: Side, sizes: list[int]) -> dict[tuple[str, int], Callable[[], Any]]:
    """Output list, output show and stack show of a new stack of each size."""
    names = {n: f"outputs-{n}-{uuid.uuid4().hex[:6]}" for n in sizes}
    refs = {n: side.create(names[n], template(n)) for n in sizes}
    settle(side, set(names.values()))
    ops: dict[tuple[str, int], Callable[[], Any]] = {}
    for n, ref in refs.items():
        ops[("output list", n)] = partial(side.output_list, ref)
        ops[("output show", n)] = partial(side.output_show, ref, "last")
        ops[("stack show", n)] = partial(side.show, ref)
    return ops


def reads(api: Side, local: Side, floor: str, sizes: list[int], calls: int) -> tuple[Calls, Calls]:
    """Per-call latency of each read by size, over the API and in process,
    and of the floor. The calls take turns (every op on every size on both
    sides, then again), so a burst of load from elsewhere hits them alike."""
    sides = {"api": read_ops(api, sizes), "local": read_ops(local, sizes)}
    out = {label: Calls({key: [] for key in ops}) for label, ops in sides.items()}
    floor_times = out["api"].by_op[("floor", 0)] = []
    bare = floor_call(floor)
    for turn in range(calls + 3):  # three untimed turns first
        for label, ops in sides.items():
            for key, call in ops.items():
                took = _timed(call)
                if turn >= 3:
                    out[label].by_op[key].append(took)
                if label == "api":  # the floor right after each API call, alike
                    took = _timed(bare)
                    if turn >= 3:
                        floor_times.append(took)
    return out["api"], out["local"]


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


# -- the table -----------------------------------------------------------------


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b else ""


def table(api: Load, local: Load, api_reads: Calls, local_reads: Calls) -> str:
    head = (
        "| operation | API (heatclient) | in-process `Stacks` | API / in-process "
        "| HTTP floor | API / floor |\n|---|---:|---:|---:|---:|---:|\n"
    )
    rows = [
        f"| create until all complete, stacks/s | {api.stacks_per_s:.1f} "
        f"| {local.stacks_per_s:.1f} | {ratio(api.stacks_per_s, local.stacks_per_s)} | | |",
        f"| create call p50 ms | {pct(api.create_calls, 0.5):.1f} "
        f"| {pct(local.create_calls, 0.5):.1f} "
        f"| {ratio(pct(api.create_calls, 0.5), pct(local.create_calls, 0.5))} "
        f"| {pct(api.floor, 0.5):.1f} | {ratio(pct(api.create_calls, 0.5), pct(api.floor, 0.5))} |",
    ]
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        a, b, f = pct(api.shows, q), pct(local.shows, q), pct(api.floor, q)
        rows.append(
            f"| stack show under load, {label} ms | {a:.1f} | {b:.1f} | {ratio(a, b)} "
            f"| {f:.1f} | {ratio(a, f)} |"
        )
    floor = api_reads.by_op[("floor", 0)]
    for (op, n), values in api_reads.by_op.items():
        if op == "floor":
            continue
        local_values = local_reads.by_op[(op, n)]
        a, b, f = pct(values, 0.5), pct(local_values, 0.5), pct(floor, 0.5)
        a0, b0, f0 = pct(values, 0), pct(local_values, 0), pct(floor, 0)
        rows.append(
            f"| {op}, {n:,} resources, p50 (best) ms | {a:.2f} ({a0:.2f}) | {b:.3f} ({b0:.3f}) "
            f"| {ratio(a, b)} ({ratio(a0, b0)}) | {f:.2f} ({f0:.2f}) "
            f"| {ratio(a, f)} ({ratio(a0, f0)}) |"
        )
    return head + "\n".join(rows) + "\n"


def growth(api_reads: Calls, local_reads: Calls, sizes: list[int]) -> str:
    small, large = min(sizes), max(sizes)
    lines = [f"\nGrowth, {large:,} resources / {small:,}, p50 (best); constant time is ~1.0x:"]
    for op in ("output list", "output show", "stack show"):
        cells = []
        for label, reads in (("API", api_reads), ("in-process", local_reads)):
            big, little = reads.by_op[(op, large)], reads.by_op[(op, small)]
            mid = pct(big, 0.5) / pct(little, 0.5)
            best = pct(big, 0) / pct(little, 0)
            cells.append(f"{label} {mid:.2f}x ({best:.2f}x)")
        lines.append(f"- {op}: " + ", ".join(cells))
    return "\n".join(lines)


def options() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stacks", type=int, default=100, help="stacks created under load")
    p.add_argument("--clients", type=int, default=16, help="client threads creating")
    p.add_argument("--show-clients", type=int, default=2, help="threads probing show")
    p.add_argument("--sizes", default="10,100,1000", help="stack sizes for the reads")
    p.add_argument("--calls", type=int, default=100, help="calls of each read per size")
    p.add_argument("--quick", action="store_true", help="20 stacks, 4 clients, 20 calls")
    args = p.parse_args()
    if args.quick:
        args.stacks, args.clients, args.calls = 20, 4, 20
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    if any(n % 10 for n in args.sizes):
        p.error("--sizes must be multiples of 10")
    return args


def main() -> None:
    args = options()
    print(
        f"# {platform.python_version()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}; {args.stacks} stacks x 10 resources, "
        f"{args.clients} clients, {args.show_clients} show probes; reads x{args.calls}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        with floor_server(tmp) as floor, convection_server(tmp) as url:
            api = Api(url)
            api_load = load(api, floor, args.stacks, args.clients, args.show_clients)
            print(f"API load done: {api_load.stacks_per_s:.1f} stacks/s", flush=True)
            with local_service(tmp) as stacks:
                local = Local(stacks)
                local_load = load(local, floor, args.stacks, args.clients, args.show_clients)
                print(f"in-process load done: {local_load.stacks_per_s:.1f} stacks/s", flush=True)
                api_reads, local_reads = reads(api, local, floor, args.sizes, args.calls)
    print()
    print(table(api_load, local_load, api_reads, local_reads))
    print(growth(api_reads, local_reads, args.sizes))


if __name__ == "__main__":
    main()
