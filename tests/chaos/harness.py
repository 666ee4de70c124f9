"""The chaos harness: seeded trials of (operation, store, fault, moment).

A trial prepares an operation in a fresh store (SQLite file, or a fresh
database on the machine's PostgreSQL), starts ``convection --db URL engine
--until-idle`` as a subprocess to run it, and at a seeded moment drawn
uniformly within that operation's crash-free duration on that store hits the
engine with a fault:

* ``sigkill``: SIGKILL; a fresh ``convection engine --until-idle`` takes the
  operation up (after the dead engine's leases lapse) and runs it to its end.
* ``sigstop``: SIGSTOP for longer than a lease; a fresh engine takes the
  operation over and runs it to its end; then SIGCONT: the paused engine
  wakes holding leases it lost, and whatever it still writes must be refused
  (fencing), so the end state is the crash-free one.

It then compares with the crash-free run of the same operation on the same
store (the operation is deterministic; the seed picks everything else):

* stacks (create, update with replacements, delete, an update that fails
  and rolls back): the stack's status, every resource's (name, type,
  action, status, current, value, attribute, requires; a rollback's action
  is timing's and left out), the outputs; the ledger
  (``Convection::Test::Ledger``) shows no physical create or delete twice,
  as many creates and deletes as the crash-free run (but a rollback's: how
  far its update got is timing's), and what physically exists (created, not
  deleted) is exactly what the store holds as current: after a delete,
  nothing;
* the workflow (``tests/workflows/engine/test_crash.py``'s execution: a
  with-items at concurrency 4, a retried task, a sub-workflow, a join): its
  ``check``, Mistral's redelivery rule included: executions, tasks and
  published data equal the crash-free run's, no action of a task that is not
  ``safe-rerun`` ran twice;
* nothing left: no traversal active, no stack or resource IN_PROGRESS, no
  execution, task or action RUNNING.

Everything is real: real processes, real signals, real stores.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convection.convergence import EngineConfig
from convection.model.compiler import StackInputs
from convection.resources.testing import read_ledger
from convection.service.stacks import Stacks, StacksConfig
from convection.store.sql import SQLStore
from convection.workflows import create_execution, create_workflows

TESTS = Path(__file__).resolve().parent.parent
OPERATIONS = ("create", "update", "delete", "rollback", "workflow")
STORES = ("sqlite", "postgresql")
FAULTS = ("sigkill", "sigstop")
#: Every engine's lease (``CONVECTION_ENGINE_LEASE_SECONDS``, whole seconds).
LEASE = 2
#: How long past its lease a paused engine stays paused.
PAUSE = LEASE + 1.0
PROJECT = "default"
WIDTH, LAYERS = 6, 5  # 30 ledger resources


def _load(name: str, path: Path, package: str | None = None) -> types.ModuleType:
    """A test module by path (the tests are not a package)."""
    if package is not None and package not in sys.modules:
        pkg = types.ModuleType(package)
        pkg.__path__ = [str(path.parent)]
        sys.modules[package] = pkg
    full = f"{package}.{name}" if package else name
    spec = importlib.util.spec_from_file_location(full, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


#: The PostgreSQL helpers of the store tests.
pg = _load("_chaos_store_conftest", TESTS / "store" / "conftest.py")
#: The workflow crash trials: their workflows, plugin install, reads and check.
wf = _load("test_crash", TESTS / "workflows" / "engine" / "test_crash.py", "_chaos_wfcrash")


# -- the operations --------------------------------------------------------------------------


def template(ledger: str, *, updated: bool = False, failing: bool = False) -> str:
    """Ledger resources in layers (as ``tests/convergence/test_crash_resume``):
    the update replaces every third one (a new ``path`` naming the same file)
    and updates others in place; some hold their action open on a timer.
    ``failing`` adds a resource after the last layer that fails (the rollback)."""
    lines = ["heat_template_version: 2018-08-31", "resources:"]
    for i in range(WIDTH * LAYERS):
        layer = i // WIDTH
        value = f"v{i}" if layer == 0 else f"{{get_attr: [r{i - WIDTH}, value]}}"
        if updated and i % 3 == 1:
            value = f"u{i}" if layer == 0 else f"{{list_join: ['-', [u, {value}]]}}"
        where = ledger.replace("/ledger", "/./ledger") if updated and i % 3 == 0 else ledger
        wait = 0.15 if i % 4 == 0 else 0
        lines.append(
            f"  r{i}: {{type: Convection::Test::Ledger, properties: "
            f"{{path: '{where}', value: {value}, wait_secs: {wait}}}}}"
        )
    last = WIDTH * LAYERS - 1
    if failing:
        lines.append(
            f"  broken: {{type: OS::Heat::TestResource, depends_on: r{last}, "
            "properties: {fail: true, wait_secs: 0.1}}"
        )
    lines += ["outputs:", f"  last: {{value: {{get_attr: [r{last}, value]}}}}"]
    return "\n".join(lines)


@dataclass
class Workspace:
    """One run's store and files."""

    url: str
    root: Path
    env: dict[str, str]
    cleanup: list[Callable[[], None]] = field(default_factory=list)

    @property
    def ledger(self) -> Path:
        return self.root / "ledger.tsv"


def _in_process(url: str) -> Stacks:
    config = EngineConfig(lease_seconds=float(LEASE), scan_seconds=0.05, concurrency=16)
    return Stacks(SQLStore(url), config=StacksConfig(engine=config))


def prepare(operation: str, ws: Workspace) -> str:
    """Store the operation, unstarted by any engine; returns its owner's id.
    An update or a delete first creates the stack crash-free, in this process."""
    if operation == "workflow":
        store = SQLStore(ws.url)
        try:
            given = {"ledger": str(ws.ledger), "flag": str(ws.root / "flag"), "keys": wf.KEYS}
            create_workflows(store, wf.PROJECT, wf.WORKFLOWS)
            return str(create_execution(store, wf.PROJECT, "crash_main", input=given)["id"])
        finally:
            store.close()
    stacks = _in_process(ws.url)
    try:
        inputs = StackInputs.from_text(template(str(ws.ledger)))
        stack_id = str(stacks.create(PROJECT, "chaos", inputs)["id"])
        if operation == "create":
            return stack_id
        stacks.run_engine(timeout=120)
        if operation in ("update", "rollback"):
            failing = operation == "rollback"
            text = template(str(ws.ledger), updated=True, failing=failing)
            stacks.update(PROJECT, stack_id, StackInputs.from_text(text), rollback=failing)
        else:
            stacks.delete(PROJECT, stack_id)
        return stack_id
    finally:
        stacks.store.close()


def final_state(operation: str, ws: Workspace, owner: str) -> dict[str, Any]:
    """What the store and ledger say once the operation has ended."""
    if operation == "workflow":
        return {"result": wf.result_of(ws.url, ws.ledger)}
    stacks = _in_process(ws.url)
    store = stacks.store
    try:
        stack = store.get_stack_by_id(owner)
        rows = store.list_resources(owner)
        resources = sorted(
            (
                r.name, r.type, r.action, r.status, r.current,
                r.properties.get("value"), r.attributes.get("value"), tuple(r.requires),
            )
            for r in rows
        )  # fmt: skip
        outputs = (
            sorted(
                (o["output_key"], json.dumps(o.get("output_value")))
                for o in stacks.outputs(PROJECT, owner)
            )
            if stack is not None and operation != "delete"
            else []
        )
        leftovers = [f"traversal {t.id} {t.status}" for t in store.active_traversals()]
        if stack is not None and stack.status == "IN_PROGRESS":
            leftovers.append(f"stack {stack.action}_{stack.status}")
        leftovers += [
            f"resource {r.name} {r.action}_{r.status}" for r in rows if r.status == "IN_PROGRESS"
        ]
        status = None if stack is None else f"{stack.action}_{stack.status}"
        if operation == "rollback":
            # How far the update got before its failure (so which resources
            # were updated and rolled back, or replaced and restored) is
            # timing's: the rolled-back values and statuses are not.
            stored: list[tuple[Any, ...]] = [r[:2] + r[3:] for r in resources]
        else:
            stored = list(resources)
        return {
            "status": status,
            "resources": sorted(stored),
            "outputs": outputs,
            "ledger": read_ledger(ws.ledger),
            "live": sorted(str(r.physical_id) for r in rows if r.current and r.physical_id),
            "leftovers": leftovers,
        }
    finally:
        store.close()


def compare(operation: str, reference: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """How ``got`` differs from the crash-free ``reference``; empty: it passed."""
    if operation == "workflow":
        try:
            wf.check(reference["result"], got["result"], "trial")
        except AssertionError as exc:
            return [str(exc).splitlines()[0]]
        return []
    problems = []
    if got["leftovers"]:
        problems.append(f"left in progress: {got['leftovers'][:3]}")
    if got["status"] != reference["status"]:
        problems.append(f"stack {got['status']}, crash-free {reference['status']}")
    if got["resources"] != reference["resources"]:
        missing = sorted(set(reference["resources"]) - set(got["resources"]))
        extra = sorted(set(got["resources"]) - set(reference["resources"]))
        problems.append(f"resources differ: missing {missing[:2]}, extra {extra[:2]}")
    if got["outputs"] != reference["outputs"]:
        problems.append(f"outputs {got['outputs']}, crash-free {reference['outputs']}")
    creates = Counter(name for event, name in got["ledger"] if event == "create")
    deletes = Counter(name for event, name in got["ledger"] if event == "delete")
    twice = [n for n, c in creates.items() if c > 1] + [n for n, c in deletes.items() if c > 1]
    if twice:
        problems.append(f"physical create or delete twice: {sorted(set(twice))[:3]}")
    ref_events = Counter(event for event, _ in reference["ledger"])
    events = Counter(event for event, _ in got["ledger"])
    if operation != "rollback" and events != ref_events:
        problems.append(f"ledger {dict(events)}, crash-free {dict(ref_events)}")
    # Nothing leaked, nothing lost: what exists physically is what is stored
    # as current (after a delete: nothing).
    alive = set(creates) - set(deletes)
    if alive != set(got["live"]):
        leaked = sorted(alive - set(got["live"]))[:3]
        lost = sorted(set(got["live"]) - alive)[:3]
        problems.append(f"physical things left behind {leaked}, stored but gone {lost}")
    return problems


# -- the engine processes ----------------------------------------------------------------------


def engine(ws: Workspace) -> subprocess.Popen[str]:
    """``convection --db URL engine --until-idle``, every layer loaded before
    its first line (lazy_loader's switch), so moments count from the work."""
    env = {**ws.env, "EAGER_IMPORT": "1", "CONVECTION_ENGINE_LEASE_SECONDS": str(LEASE)}
    proc = subprocess.Popen(
        [*wf.cli(), "--db", ws.url, "engine", "--until-idle"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("Engine "):
        proc.kill()
        raise RuntimeError(f"the engine did not start: {line}{proc.stdout.read()}")
    return proc


#: How long an engine taking an operation over may take to end it.
RECOVERY_TIMEOUT = 60.0


class Stuck(RuntimeError):
    """An engine did not end the operation: in time, or at all (it failed)."""


def finish(proc: subprocess.Popen[str], timeout: float = RECOVERY_TIMEOUT) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise Stuck(f"the engine did not end the operation within {timeout:.0f} s") from None
    if proc.returncode != 0:
        last = out.strip().splitlines()[-3:]
        raise Stuck(f"the engine exited {proc.returncode}: {' | '.join(last)}")
    return out


# -- a trial ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trial:
    seed: int
    operation: str
    store: str
    fault: str
    #: The moment, as a fraction of the operation's crash-free duration.
    fraction: float

    @staticmethod
    def draw(seed: int) -> Trial:
        rng = random.Random(seed)
        return Trial(
            seed, rng.choice(OPERATIONS), rng.choice(STORES), rng.choice(FAULTS), rng.random()
        )

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.operation, self.store, self.fault)


@dataclass
class Outcome:
    trial: Trial
    moment: float
    problems: list[str]
    #: Seconds from the fault to the operation's end (the last engine's exit).
    recovery: float
    seconds: float
    #: The fault landed while the operation was still running.
    landed: bool


@dataclass
class Reference:
    """A crash-free run of an operation on a store."""

    seconds: float
    state: dict[str, Any]


@contextmanager
def workspace(store: str, env: dict[str, str]) -> Iterator[Workspace]:
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        root = Path(tmp)
        if store == "sqlite":
            ws = Workspace(f"sqlite:///{root / 'store.db'}", root, env)
        else:
            name = pg.create_postgres_database("convection_chaos")
            ws = Workspace(str(pg.postgres_url(name)), root, env)
            ws.cleanup.append(lambda: pg.drop_postgres_database(name))
        try:
            yield ws
        finally:
            for undo in ws.cleanup:
                undo()


def reference_run(operation: str, store: str, env: dict[str, str]) -> Reference:
    with workspace(store, env) as ws:
        owner = prepare(operation, ws)
        proc = engine(ws)
        started = time.monotonic()
        finish(proc)
        seconds = time.monotonic() - started
        state = final_state(operation, ws, owner)
        if operation == "workflow":
            assert state["result"].leftovers == [], state["result"].leftovers
        else:
            assert state["leftovers"] == [], state["leftovers"]
            assert state["status"] == {
                "create": "CREATE_COMPLETE", "update": "UPDATE_COMPLETE",
                "delete": "DELETE_COMPLETE", "rollback": "ROLLBACK_COMPLETE",
            }[operation], state["status"]  # fmt: skip
        return Reference(seconds, state)


def _active(url: str) -> bool:
    store = SQLStore(url)
    try:
        return bool(store.active_traversals())
    finally:
        store.close()


def run_trial(trial: Trial, reference: Reference, env: dict[str, str]) -> Outcome:
    started = time.monotonic()
    moment = trial.fraction * reference.seconds
    with workspace(trial.store, env) as ws:
        owner = prepare(trial.operation, ws)
        first = engine(ws)
        with contextlib.suppress(subprocess.TimeoutExpired):
            first.wait(timeout=moment)
        fault_at = time.monotonic()
        landed = first.poll() is None and _active(ws.url)
        interrupted: dict[str, tuple[str, str]] = {}
        problems: list[str] = []
        if trial.fault == "sigkill":
            if first.poll() is None:
                first.send_signal(signal.SIGKILL)
            first.wait()
            if trial.operation == "workflow":
                interrupted = wf.running_actions(ws.url)
            try:
                finish(engine(ws))
            except Stuck as exc:
                problems.append(str(exc))
        else:
            if first.poll() is None:
                first.send_signal(signal.SIGSTOP)
            try:
                time.sleep(PAUSE)
                if trial.operation == "workflow":
                    interrupted = wf.running_actions(ws.url)
                finish(engine(ws))
            except Stuck as exc:
                problems.append(f"{exc} while the paused engine was still stopped")
            finally:
                if first.poll() is None:
                    first.send_signal(signal.SIGCONT)
            # The paused engine wakes: it must notice it lost its leases and
            # end, its late writes refused; the state must stay the crash-free one.
            try:
                first.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                first.kill()
                first.communicate()
                problems.append("the resumed stale engine did not end within 60 s")
        recovery = time.monotonic() - fault_at
        got = final_state(trial.operation, ws, owner)
        if trial.operation == "workflow":
            got["result"].interrupted = interrupted
        problems += compare(trial.operation, reference.state, got)
    return Outcome(trial, moment, problems, recovery, time.monotonic() - started, landed)


def environment(root: Path) -> dict[str, str]:
    """The engines' environment: ``test.ledger`` installed as a plugin."""
    return dict(wf.environment(wf.plugin_path(root)))


def replay_command(seed: int) -> str:
    return f"python tests/chaos/run.py --replay {seed}"


def postgres_available() -> str | None:
    reason: str | None = pg.postgres_unavailable()
    return reason


def main_env() -> dict[str, str]:
    """:func:`environment` in a directory removed when this process exits."""
    root = tempfile.TemporaryDirectory(prefix="chaos-plugins-")
    atexit.register(root.cleanup)
    return environment(Path(root.name))
