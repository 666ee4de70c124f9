"""REST API benchmark: python-heatclient and python-mistralclient against
a live ``convection server``.

Issue 6's two figures and issue 15's workflow rows, each printed beside
peers taken in the same run, because on the shared 2-core machine only
ratios within one run hold:

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
* **Workflows** (second table): ``--executions`` executions of a one-task
  direct workflow (``std.echo``) started by ``--flow-clients`` threads at
  once over ``POST /v2/executions`` (python-mistralclient); starts per
  second until the last start call returned, executions per second until
  every one is SUCCESS, and the p50/p99 of ``GET /v2/executions/{id}``
  measured by ``--show-clients`` threads during those starts and, idle,
  ``--calls`` times before them. In process: ``create_execution``,
  ``get_execution`` and ``list_executions`` (the operations the routes
  call) on the same ``Stacks`` as the stack rows. Its floor is the same
  endpoint called as mistralclient calls: one kept-alive session.

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
       [--show-clients 2] [--sizes 10,100,1000] [--calls 100]
       [--executions 400] [--flow-clients 16] [--no-workflows] [--quick]
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
from mistralclient.api.v2.client import Client as Mistral  # type: ignore[import-untyped]

from convection.api.engine_thread import EngineThread
from convection.cli.context import Invocation
from convection.model.compiler import StackInputs
from convection.service.stacks import Stacks
from convection.store import Store
from convection.workflows import (
    create_execution,
    create_workflows,
    get_execution,
    list_executions,
)

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
#: The workflow the workflow rows start: direct, one task, one action.
FLOW = "bench_echo"
FLOW_TEXT = f"""\
version: '2.0'
{FLOW}:
  tasks:
    echo:
      action: std.echo output="ok"
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
    until_all(side.states, names, "CREATE_COMPLETE", "stacks")


def until_all(states: Callable[[], dict[str, str]], keys: set[str], wanted: str, what: str) -> None:
    """Until ``states()`` gives ``wanted`` for every key; a state ending in
    FAILED or ERROR stops the bench."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        now = states()
        failed = {k: s for k, s in now.items() if k in keys and s.endswith(("FAILED", "ERROR"))}
        if failed:
            raise RuntimeError(f"{what} failed: {failed}")
        if all(now.get(k) == wanted for k in keys):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not reach {wanted} in time")
        time.sleep(0.1)


def floor_call(floor: str, *, keep_alive: bool = False) -> Callable[[], Any]:
    """A call of the floor as heatclient calls (a new connection each) or,
    ``keep_alive``, as mistralclient calls (one ``requests`` session; one
    thread only)."""
    get = requests.Session().get if keep_alive else requests.get
    return lambda: get(f"{floor}/healthz", timeout=30).raise_for_status()


#: Pause between two probes of one probing thread: probes sample latency
#: at a steady rate on both sides instead of competing for the CPU (in
#: process, a probe with no pause would hold the GIL against the engine).
PROBE_PAUSE = 0.02


@dataclass(frozen=True)
class Crowd:
    """Who takes part in a burst: ``clients`` threads making the calls,
    ``show_clients`` threads probing show of the newest ref, and one thread
    probing the floor, both every :data:`PROBE_PAUSE`."""

    clients: int
    show_clients: int
    floor: Callable[[], Any]


@dataclass
class Burst:
    """One burst: its calls' and probes' latencies, and its wall times."""

    called_s: float = 0.0  # first call until the last call returned
    done_s: float = 0.0  # first call until ``finish`` returned
    calls: list[float] = field(default_factory=list)
    shows: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    #: How many of ``shows`` and of ``floor`` were taken before the last
    #: call returned (the rest, while ``finish`` ran).
    split: tuple[int, int] = (0, 0)

    def shows_in(self, *, after: bool) -> list[float]:
        """The shows taken while the calls ran, or ``after``."""
        return self.shows[self.split[0] :] if after else self.shows[: self.split[0]]

    def floor_in(self, *, after: bool) -> list[float]:
        return self.floor[self.split[1] :] if after else self.floor[: self.split[1]]


def burst(
    crowd: Crowd,
    names: list[str],
    call: Callable[[str], str],
    show: Callable[[str], Any],
    first: str,
    finish: Callable[[list[str]], None],
) -> Burst:
    """``call`` every name from ``crowd.clients`` threads, then ``finish``
    the refs they returned, with the probes running throughout (the first
    show probes ``first``, made and settled beforehand)."""
    result = Burst(refs=[first])
    todo: queue.Queue[str] = queue.Queue()
    for n in names:
        todo.put(n)
    done = threading.Event()

    def caller() -> None:
        while True:
            try:
                name = todo.get_nowait()
            except queue.Empty:
                return
            started = time.perf_counter()
            ref = call(name)
            result.calls.append(time.perf_counter() - started)
            result.refs.append(ref)

    def prober(probe: Callable[[], Any], into: list[float]) -> None:
        while not done.is_set():
            into.append(_timed(probe))
            done.wait(PROBE_PAUSE)

    def show_latest() -> Any:
        return show(result.refs[-1])

    probes = [
        threading.Thread(target=prober, args=(show_latest, result.shows))
        for _ in range(crowd.show_clients)
    ] + [threading.Thread(target=prober, args=(crowd.floor, result.floor))]
    workers = [threading.Thread(target=caller) for _ in range(crowd.clients)]
    started = time.perf_counter()
    for t in probes + workers:
        t.start()
    for t in workers:
        t.join()
    result.called_s = time.perf_counter() - started
    result.split = (len(result.shows), len(result.floor))
    finish(result.refs)
    result.done_s = time.perf_counter() - started
    done.set()
    for t in probes:
        t.join()
    return result


def load(side: Side, floor: str, stacks: int, clients: int, show_clients: int) -> Load:
    """Create ``stacks`` 10-resource stacks with ``clients`` threads; probe
    show (and the floor) from other threads until all are complete."""
    text = template(10)
    warm = f"warm-{uuid.uuid4().hex[:6]}"
    first = side.create(warm, text)
    settle(side, {warm})
    names = [f"load-{i:04d}" for i in range(stacks)]
    crowd = Crowd(clients, show_clients, floor_call(floor))
    run = burst(
        crowd, names, partial(_create, side, text), side.show, first,
        lambda _refs: settle(side, set(names)),
    )  # fmt: skip
    return Load(stacks / run.done_s, run.calls, run.shows, run.floor)


def _create(side: Side, text: str, name: str) -> str:
    return side.create(name, text)


Ops = dict[tuple[str, int], Callable[[], Any]]


def read_ops(side: Side, sizes: list[int]) -> Ops:
    """Output list, output show and stack show of a new stack of each size."""
    names = {n: f"outputs-{n}-{uuid.uuid4().hex[:6]}" for n in sizes}
    refs = {n: side.create(names[n], template(n)) for n in sizes}
    settle(side, set(names.values()))
    ops: Ops = {}
    for n, ref in refs.items():
        ops[("output list", n)] = partial(side.output_list, ref)
        ops[("output show", n)] = partial(side.output_show, ref, "last")
        ops[("stack show", n)] = partial(side.show, ref)
    return ops


def reads(api: Side, local: Side, floor: str, sizes: list[int], calls: int) -> tuple[Calls, Calls]:
    """Per-call latency of each read by size, over the API and in process,
    and of the floor (``("floor", 0)`` in the API's calls)."""
    return turns(read_ops(api, sizes), read_ops(local, sizes), floor_call(floor), calls)


def turns(api: Ops, local: Ops, bare: Callable[[], Any], calls: int) -> tuple[Calls, Calls]:
    """Each op ``calls`` times, timed, after three untimed turns. The calls
    take turns (every op on both sides, then again), so a burst of load
    from elsewhere hits them alike; ``bare`` (the floor, under
    ``("floor", 0)`` in the API's calls) right after each API call."""
    sides = {"api": api, "local": local}
    out = {label: Calls({key: [] for key in ops}) for label, ops in sides.items()}
    floor_times = out["api"].by_op[("floor", 0)] = []
    for turn in range(calls + 3):
        for label, ops in sides.items():
            for key, call in ops.items():
                took = _timed(call)
                if turn >= 3:
                    out[label].by_op[key].append(took)
                if label == "api":
                    took = _timed(bare)
                    if turn >= 3:
                        floor_times.append(took)
    return out["api"], out["local"]


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


# -- workflows -------------------------------------------------------------------


class Flows(Protocol):
    """The workflow operations the workflow rows need, over HTTP
    (:class:`ApiFlows`) or in process (:class:`LocalFlows`)."""

    def upload(self, text: str) -> None: ...

    def start(self) -> str:
        """Start :data:`FLOW`; the execution's id."""
        ...

    def show(self, ref: str) -> Any: ...

    def states(self) -> dict[str, str]:
        """Every execution's state, by id."""
        ...


class ApiFlows:
    """python-mistralclient, one client per thread (a kept-alive
    ``requests`` session each, as mistralclient keeps)."""

    def __init__(self, url: str) -> None:
        self.endpoint = f"{url}/v2"
        self.local = threading.local()

    @property
    def mistral(self) -> Mistral:
        client = getattr(self.local, "client", None)
        if client is None:
            client = Mistral(mistral_url=self.endpoint, auth_token="bench", project_id=PROJECT)
            self.local.client = client
        return client

    def upload(self, text: str) -> None:
        self.mistral.workflows.create(text)

    def start(self) -> str:
        return str(self.mistral.executions.create(FLOW).id)

    def show(self, ref: str) -> Any:
        return self.mistral.executions.get(ref)

    def states(self) -> dict[str, str]:
        listed = self.mistral.executions.list(limit=MAX_EXECUTIONS, fields=["id", "state"])
        return {e.id: e.state for e in listed}


class LocalFlows:
    """The operations the ``/v2/executions`` routes call, on a store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def upload(self, text: str) -> None:
        create_workflows(self.store, PROJECT, text)

    def start(self) -> str:
        return str(create_execution(self.store, PROJECT, FLOW)["id"])

    def show(self, ref: str) -> Any:
        return get_execution(self.store, PROJECT, ref)

    def states(self) -> dict[str, str]:
        return {e["id"]: e["state"] for e in list_executions(self.store, PROJECT)}


#: One page of Mistral's listing (the server's cap), which ``states`` reads.
MAX_EXECUTIONS = 1000


def warm_flow(side: Flows) -> str:
    """Upload :data:`FLOW` and run one execution to SUCCESS; its id."""
    side.upload(FLOW_TEXT)
    first = side.start()
    until_all(side.states, {first}, "SUCCESS", "executions")
    return first


def flow_load(side: Flows, first: str, crowd: Crowd, executions: int) -> Burst:
    """Start ``executions`` executions from ``crowd.clients`` threads, then
    wait for all to be SUCCESS, show probed throughout."""
    names = [str(i) for i in range(executions)]

    def wait(refs: list[str]) -> None:
        until_all(side.states, set(refs), "SUCCESS", "executions")

    return burst(crowd, names, lambda _name: side.start(), side.show, first, wait)


def idle_shows(
    api: Flows, local: Flows, refs: tuple[str, str], floor: str, calls: int
) -> tuple[Calls, Calls]:
    """Execution show of a finished execution on each side, nothing else
    running, taking turns (the kept-alive floor after each API call)."""
    key = ("execution show", 0)
    api_ops: Ops = {key: partial(api.show, refs[0])}
    local_ops: Ops = {key: partial(local.show, refs[1])}
    return turns(api_ops, local_ops, floor_call(floor, keep_alive=True), calls)


# -- the table -----------------------------------------------------------------


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b else ""


def table(api: Load, local: Load, api_reads: Calls, local_reads: Calls) -> str:
    head = (
        "| operation | API (heatclient) | in-process `Stacks` | API / in-process "
        "| HTTP floor | API / floor |\n|---|---:|---:|---:|---:|---:|\n"
    )
    rows = [
        row("create until all complete, stacks/s", api.stacks_per_s, local.stacks_per_s),
        row("create call p50 ms", pct(api.create_calls, 0.5), pct(local.create_calls, 0.5),
            pct(api.floor, 0.5)),
    ]  # fmt: skip
    for q, label in ((0.5, "p50"), (0.99, "p99")):
        a, b, f = pct(api.shows, q), pct(local.shows, q), pct(api.floor, q)
        rows.append(row(f"stack show under load, {label} ms", a, b, f))
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


def row(label: str, a: float, b: float, f: float | None = None) -> str:
    """A row of figures to one decimal: API, in process, and the floor if given."""
    tail = f"| {f:.1f} | {ratio(a, f)} |" if f is not None else "| | |"
    return f"| {label} | {a:.1f} | {b:.1f} | {ratio(a, b)} {tail}"


def flow_table(api: Burst, local: Burst, api_idle: Calls, local_idle: Calls) -> str:
    """The workflow rows, in :func:`table`'s columns."""
    head = (
        "| operation | API (mistralclient) | in-process operations | API / in-process "
        "| HTTP floor (kept alive) | API / floor |\n|---|---:|---:|---:|---:|---:|\n"
    )
    n = len(api.refs) - 1  # the warm-up execution is not counted
    rows = [row(f"{n} starts, until the last returned, starts/s", n / api.called_s,
                n / local.called_s)]  # fmt: skip
    for q, name in ((0.5, "p50"), (0.99, "p99")):
        a, b = pct(api.calls, q), pct(local.calls, q)
        rows.append(row(f"start call {name} ms", a, b, pct(api.floor_in(after=False), q)))
    rows.append(row("starts until all SUCCESS, executions/s", n / api.done_s, n / local.done_s))
    key = ("execution show", 0)
    idle = (api_idle.by_op[key], local_idle.by_op[key], api_idle.by_op[("floor", 0)])
    phases = {"idle": idle}
    for label, after in (("while starting", False), ("while the engine finishes them", True)):
        phases[label] = (api.shows_in(after=after), local.shows_in(after=after),
                         api.floor_in(after=after))  # fmt: skip
    for label, (shows, local_shows, floor) in phases.items():
        for q, name in ((0.5, "p50"), (0.99, "p99")):
            figures = pct(shows, q), pct(local_shows, q), pct(floor, q)
            rows.append(row(f"execution show {label}, {name} ms", *figures))
    counts = ", ".join(f"{label} {len(a)}/{len(b)}" for label, (a, b, _) in phases.items())
    return head + "\n".join(rows) + f"\n\nExecution show samples (API/in-process): {counts}\n"


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
    p.add_argument("--executions", type=int, default=400, help="executions started under load")
    p.add_argument("--flow-clients", type=int, default=16, help="client threads starting")
    p.add_argument("--no-workflows", action="store_true", help="stack rows only")
    p.add_argument(
        "--quick", action="store_true", help="20 stacks, 4 clients, 20 calls, 48 executions"
    )
    args = p.parse_args()
    if args.quick:
        args.stacks, args.clients, args.calls, args.executions = 20, 4, 20, 48
    if not 0 < args.executions < MAX_EXECUTIONS:
        p.error(f"--executions must be between 1 and {MAX_EXECUTIONS - 1}")
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    if any(n % 10 for n in args.sizes):
        p.error("--sizes must be multiples of 10")
    return args


def main() -> None:
    args = options()
    flows_note = f"; {args.executions} executions, {args.flow_clients} clients"
    print(
        f"# {platform.python_version()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}; {args.stacks} stacks x 10 resources, "
        f"{args.clients} clients, {args.show_clients} show probes; reads x{args.calls}"
        f"{'' if args.no_workflows else flows_note}",
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
                flows = None if args.no_workflows else workflows(url, stacks.store, floor, args)
    print()
    print(table(api_load, local_load, api_reads, local_reads))
    print(growth(api_reads, local_reads, args.sizes))
    if flows is not None:
        print()
        print(flow_table(*flows))


FlowFigures = tuple[Burst, Burst, Calls, Calls]


def workflows(url: str, store: Store, floor: str, args: argparse.Namespace) -> FlowFigures:
    """The workflow rows' figures: idle shows, then each side's burst."""
    api, local = ApiFlows(url), LocalFlows(store)
    firsts = (warm_flow(api), warm_flow(local))
    api_idle, local_idle = idle_shows(api, local, firsts, floor, args.calls)
    crowd = Crowd(args.flow_clients, args.show_clients, floor_call(floor, keep_alive=True))
    api_run = flow_load(api, firsts[0], crowd, args.executions)
    print(f"API workflow load done: {api_run.called_s:.1f} s to start", flush=True)
    local_run = flow_load(local, firsts[1], crowd, args.executions)
    print(f"in-process workflow load done: {local_run.called_s:.1f} s to start", flush=True)
    return api_run, local_run, api_idle, local_idle


if __name__ == "__main__":
    main()
