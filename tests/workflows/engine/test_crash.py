"""kill -9 a workflow engine at random moments: the execution ends as a
crash-free run does, and an action that must not run twice never does.

A real subprocess (``crash_worker.py``) starts an execution of
:data:`WORKFLOWS` (a chain, a with-items of 20 items at concurrency 4, a
task that fails once and is retried, a sub-workflow, a join, publishes
feeding later inputs) and runs it. It is SIGKILLed at a seeded moment within
the time a crash-free run takes, and then ``convection engine --until-idle``
(the installed CLI, a fresh process) takes the execution up and runs it to
its end. Every action is ``test.ledger`` (``ledger_actions.py``), which
records each run in a ledger file and is installed for both processes
through a real ``convection.actions`` entry point.

What "the state of a crash-free run" is, given Mistral's redelivery rule
------------------------------------------------------------------------

``test.ledger`` is not ``safe_to_rerun``: the engine records its action
execution RUNNING, durably, before it starts it. An action execution the
killed engine left RUNNING (its action ran, or was running, but its end
was not recorded) is, after the take-up:

* run again, under the same action execution id, if its task is
  ``safe-rerun: true``;
* otherwise failed with Mistral's message ("Request to run an action was
  redelivered, but it cannot be re-run safely. The only safe thing to do
  is fail it [action=test.ledger].") as its result, and so the task fails
  as an action failure does: with that message as its ``state_info``, or
  with-items' "One or more actions had failed."; unless a ``retry`` policy
  runs it again (as Mistral's retry handles any action failure).

So the workflow is written as a careful Mistral user writes one whose
actions may be failed that way: every task that is not ``safe-rerun`` has
an ``on-error`` that goes where its ``on-success`` goes (``noop`` at the
end) and a ``publish-on-error`` that publishes what its success would
(from the task's input, not its result), or a retry (``flaky``). Then the
rule is exact and every trial is compared for equality:

* every execution (the parent and the sub-workflow's) ends as in the
  crash-free run: the same state, state_info and output;
* every task has the name, state, state_info and ``published`` of the
  crash-free run, except that a task that is not ``safe-rerun``, has no
  retry, and had an action execution left RUNNING by the kill is ERROR
  with the redelivery message (with-items: "One or more actions had
  failed."), and those action executions are ERROR with exactly the
  redelivery message as their result;
* only what was running is redelivered: a task had at most as many action
  executions left RUNNING as may run at once (with-items' concurrency,
  else one); an item that had finished kept its result;
* never twice: in the ledger, an action execution of a task that is not
  ``safe-rerun`` started at most once; one of a ``safe-rerun`` task at
  most twice, and twice only if the kill left it RUNNING; every action
  execution that ended SUCCESS has a run that finished (``done``);
* nothing is left: no traversal in progress, no task RUNNING, WAITING,
  DELAYED or IDLE, no action execution RUNNING.

The kill moments are drawn within the crash-free run's time on the same
backend (from the worker's "started", printed once its execution exists),
so they land in the work however fast the machine is. Trials: 12 seeds on
SQLite and 10 on PostgreSQL (a fresh database each), two at a time.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from convection.store.sql import SQLStore
from convection.workflows.engine.items import FAILED_ITEMS, REDELIVERED

from .conftest import _store_conftest as pg
from .ledger_actions import read

WORKER = Path(__file__).with_name("crash_worker.py")
PLUGIN = Path(__file__).with_name("ledger_actions.py")
PROJECT = "crash"
KEYS = [f"host-{i:02d}" for i in range(20)]
SEEDS = {"sqlite": range(12), "postgresql": range(100, 110)}  # 22 killed runs
REDELIVERED_MESSAGE = REDELIVERED.format(name="test.ledger")

WORKFLOWS = """
version: '2.0'

crash_main:
  description: Prepare a release, deploy it to every host, check it, note it, announce it.
  input:
    - ledger
    - flag
    - keys
  tasks:
    prepare:
      action: test.ledger
      input:
        path: <% $.ledger %>
        key: release-7
        seconds: 0.25
      safe-rerun: true
      publish:
        release: <% task().result %>
      on-success: [deploy, check]

    deploy:
      with-items: host in <% $.keys %>
      concurrency: 4
      action: test.ledger
      input:
        path: <% $.ledger %>
        key: <% $.host %>
        seconds: 0.04
      publish:
        deployed: <% task().result %>
      publish-on-error:
        deployed: <% $.keys %>
      on-success: [joined]
      on-error: [joined]

    check:
      action: test.ledger
      input:
        path: <% $.ledger %>
        key: <% $.release + '-checked' %>
        seconds: 0.1
        fail_once: <% $.flag %>
      retry:
        count: 5
        delay: 0
      publish:
        checked: <% task().result %>
      on-success: [note]

    note:
      workflow: crash_child
      input:
        ledger: <% $.ledger %>
        subject: <% $.checked %>
      publish:
        notes: <% task().result.recorded %>
      on-success: [joined]

    joined:
      join: all
      action: test.ledger
      input:
        path: <% $.ledger %>
        key: <% $.release + ' on ' + str(len($.deployed)) + ' hosts, ' + $.notes %>
        seconds: 0.15
      safe-rerun: true
      publish:
        summary: <% task().result %>
      on-success: [announce]

    announce:
      action: test.ledger
      input:
        path: <% $.ledger %>
        key: <% 'announced ' + $.summary %>
        seconds: 0.1
      publish:
        announced: <% task().result %>
      publish-on-error:
        announced: <% 'announced ' + $.summary %>
      on-error: [noop]

  output:
    deployed: <% $.deployed %>
    checked: <% $.checked %>
    summary: <% $.summary %>
    announced: <% $.announced %>

crash_child:
  input:
    - ledger
    - subject
  tasks:
    draft:
      action: test.ledger
      input:
        path: <% $.ledger %>
        key: <% $.subject + ' drafted' %>
        seconds: 0.1
      safe-rerun: true
      publish:
        draft: <% task().result %>
      on-success: [record]
    record:
      action: test.ledger
      input:
        path: <% $.ledger %>
        key: <% $.draft + ' and recorded' %>
        seconds: 0.05
      publish:
        recorded: <% task().result %>
      publish-on-error:
        recorded: <% $.draft + ' and recorded' %>
      on-error: [noop]
  output:
    recorded: <% $.recorded %>
"""

#: (workflow, task) of the tasks that are ``safe-rerun: true``.
SAFE = {("crash_main", "prepare"), ("crash_main", "joined"), ("crash_child", "draft")}
#: Tasks whose failed action is retried (its end is the crash-free one).
RETRIED = {("crash_main", "check")}
#: Actions of a task that may run at once (with-items' ``concurrency``):
#: at most so many can have been running when the engine died.
AT_ONCE = {("crash_main", "deploy"): 4}


# -- the processes ----------------------------------------------------------------------------
def plugin_path(root: Path) -> Path:
    """A directory that installs ``test.ledger`` as a plugin package does:
    the module and a dist-info naming it in ``convection.actions``."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(PLUGIN, root / "ledger_actions.py")
    info = root / "ledger_actions-0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ledger-actions\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[convection.actions]\nledger = ledger_actions:ACTIONS\n"
    )
    return root


def environment(plugins: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "EAGER_IMPORT"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(plugins), env.get("PYTHONPATH")) if p)
    return env


def cli() -> list[str]:
    """``convection`` as installed beside this interpreter (or as a module)."""
    installed = Path(sys.executable).with_name("convection")
    return [str(installed)] if installed.exists() else [sys.executable, "-m", "convection"]


def run_worker(
    url: str, workdir: Path, env: dict[str, str], kill_after: float | None
) -> tuple[str, float]:
    """Start an execution in a worker; with ``kill_after``, SIGKILL the
    worker that many seconds after it started the execution. Returns the
    execution's id and the seconds the worker ran after starting it."""
    given = {"ledger": str(workdir / "ledger.tsv"), "flag": str(workdir / "flag"), "keys": KEYS}
    workflows = workdir / "workflows.yaml"
    workflows.write_text(WORKFLOWS)
    # Every layer loaded before "started" (lazy_loader's switch): the kill
    # moments are drawn within the work's time, not first-use imports'.
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), url, str(workflows), json.dumps(given)],
        env={**env, "EAGER_IMPORT": "1"}, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    assert line[:1] == ["started"], f"the worker did not start: {line}"
    started = time.monotonic()
    try:
        proc.wait(timeout=60 if kill_after is None else kill_after)
    except subprocess.TimeoutExpired:
        if kill_after is None:
            raise
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    else:
        assert kill_after is not None or proc.returncode == 0
    return line[1], time.monotonic() - started


def resume(url: str, env: dict[str, str]) -> float:
    """``convection --db URL engine --until-idle`` to its end; its seconds."""
    started = time.monotonic()
    done = subprocess.run(
        [*cli(), "--db", url, "engine", "--until-idle"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Engine idle" in done.stdout, done.stdout
    return time.monotonic() - started


# -- what the store says ------------------------------------------------------------------------
@dataclass
class Result:
    """A run's end, without the ids and times that differ between runs."""

    executions: list[tuple[Any, ...]]
    tasks: list[tuple[Any, ...]]
    #: Action executions' (state, result) by id, with their (workflow, task).
    actions: dict[str, tuple[str, Any, tuple[str, str]]]
    ledger: list[tuple[str, str, str, str]]
    leftovers: list[str]
    seconds: float = 0.0
    #: Action executions the kill left RUNNING, with their (workflow, task).
    interrupted: dict[str, tuple[str, str]] = field(default_factory=dict)


def owners(store: SQLStore) -> dict[str, tuple[str, str]]:
    """Each task id's (workflow, task name)."""
    flows = {e.id: e.workflow_name for e in store.workflows.list_executions(PROJECT)}
    return {t.id: (flows[t.execution_id], t.name) for t in store.workflows.list_tasks(PROJECT)}


def running_actions(url: str) -> dict[str, tuple[str, str]]:
    store = SQLStore(url)
    try:
        tasks = owners(store)
        rows = store.workflows.list_action_executions(PROJECT)
        return {r.id: tasks[str(r.task_execution_id)] for r in rows if r.state == "RUNNING"}
    finally:
        store.close()


def result_of(url: str, ledger: Path) -> Result:
    store = SQLStore(url)
    try:
        rows = store.workflows
        executions = rows.list_executions(PROJECT)
        flows = {e.id: e.workflow_name for e in executions}
        tasks = rows.list_tasks(PROJECT)
        by_task = owners(store)
        actions = rows.list_action_executions(PROJECT)
        leftovers = [f"traversal {t.id} {t.status}" for t in store.active_traversals()]
        leftovers += [f"execution {e.workflow_name} {e.state}" for e in executions
                      if e.state not in ("SUCCESS", "ERROR", "CANCELLED")]  # fmt: skip
        leftovers += [f"task {t.name} {t.state}" for t in tasks
                      if t.state in ("RUNNING", "WAITING", "DELAYED", "IDLE")]  # fmt: skip
        leftovers += [f"action {a.id} RUNNING" for a in actions if a.state == "RUNNING"]
        return Result(
            executions=sorted(
                (e.workflow_name, e.state, e.state_info, json.dumps(e.output, sort_keys=True))
                for e in executions
            ),
            tasks=sorted(
                (
                    flows[t.execution_id],
                    t.name,
                    t.state,
                    t.state_info,
                    json.dumps(t.published, sort_keys=True),
                )
                for t in tasks
            ),
            actions={
                a.id: (a.state, a.output.get("result"), by_task[str(a.task_execution_id)])
                for a in actions
            },
            ledger=read(ledger),
            leftovers=leftovers,
        )
    finally:
        store.close()


def trial(url: str, workdir: Path, env: dict[str, str], kill_after: float | None) -> Result:
    """One run: crash-free (``kill_after`` None), or killed and resumed."""
    workdir.mkdir(parents=True, exist_ok=True)
    _, seconds = run_worker(url, workdir, env, kill_after)
    interrupted: dict[str, tuple[str, str]] = {}
    if kill_after is not None:
        interrupted = running_actions(url)
        seconds += resume(url, env)
    got = result_of(url, workdir / "ledger.tsv")
    got.seconds, got.interrupted = seconds, interrupted
    return got


def expected(reference: Result, got: Result) -> list[tuple[Any, ...]]:
    """The crash-free run's tasks, with the redelivery rule applied to the
    tasks the kill interrupted (see the module's docstring)."""
    failed = {
        owner for owner in got.interrupted.values() if owner not in SAFE and owner not in RETRIED
    }
    out = []
    for flow, name, state, info, published in reference.tasks:
        if (flow, name) in failed:
            with_items = name == "deploy"
            state, info = "ERROR", FAILED_ITEMS if with_items else REDELIVERED_MESSAGE
        out.append((flow, name, state, info, published))
    return sorted(out)


def check(reference: Result, got: Result, label: str) -> None:
    assert got.leftovers == [], f"{label}: left behind {got.leftovers}"
    assert got.executions == reference.executions, f"{label}: the executions ended otherwise"
    assert got.tasks == expected(reference, got), f"{label}: the tasks ended otherwise"
    starts = Counter(aid for event, _, aid, _ in got.ledger if event == "start")
    done = Counter(aid for event, _, aid, _ in got.ledger if event == "done")
    for aid, (state, result, owner) in got.actions.items():
        runs = starts[aid]
        if aid in got.interrupted and owner not in SAFE:
            assert (state, result) == ("ERROR", REDELIVERED_MESSAGE), f"{label}: {aid} {owner}"
            assert runs <= 1, f"{label}: {owner} ran an unsafe action twice"
        elif aid in got.interrupted:
            assert runs <= 2, f"{label}: {owner} ran {runs} times"
        else:
            assert runs == 1, f"{label}: {owner}'s action ran {runs} times, not interrupted"
        if state == "SUCCESS":
            assert done[aid] >= 1, f"{label}: {owner} succeeded without finishing its run"
    assert set(starts) <= set(got.actions), f"{label}: a run without an action execution"
    # Only what was running when the engine died is redelivered: an action
    # that had finished keeps its result (Mistral's executor reported it).
    for owner, count in Counter(got.interrupted.values()).items():
        assert count <= AT_ONCE.get(owner, 1), f"{label}: {count} of {owner} left RUNNING"


# -- the trials -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return plugin_path(tmp_path_factory.mktemp("plugins"))


@pytest.fixture(scope="module")
def env(plugins: Path) -> dict[str, str]:
    return environment(plugins)


@pytest.fixture
def databases(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A factory of empty stores (URLs) on the parametrized backend."""
    backend = request.param
    made: list[str] = []
    if backend == "postgresql":
        pg.require_postgres()

    def make(name: str) -> str:
        if backend == "sqlite":
            return f"sqlite:///{tmp_path / name / 'store.db'}"
        made.append(pg.create_postgres_database("convection_wfcrash"))
        return str(pg.postgres_url(made[-1]))

    yield make
    for database in made:
        pg.drop_postgres_database(database)


def test_the_plugin_is_found_through_its_entry_point(env: dict[str, str]) -> None:
    probe = (
        "import importlib.metadata as m;"
        "print(sorted(e.value for e in m.entry_points(group='convection.actions')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "ledger_actions:ACTIONS" in out


#: How many trials had an action execution left RUNNING by their kill, by
#: whether its task is safe-rerun.
LANDED: Counter[str] = Counter()


@pytest.mark.parametrize("databases", ["sqlite", "postgresql"], indirect=True)
def test_killed_executions_end_as_crash_free_ones(
    databases: Any, tmp_path: Path, env: dict[str, str], request: pytest.FixtureRequest
) -> None:
    backend = request.node.callspec.params["databases"]
    started = time.monotonic()
    (tmp_path / "reference").mkdir()
    reference = trial(databases("reference"), tmp_path / "reference", env, None)
    assert reference.leftovers == []
    assert [e[:2] for e in reference.executions] == [
        ("crash_child", "SUCCESS"), ("crash_main", "SUCCESS"),
    ]  # fmt: skip
    output = json.loads(reference.executions[1][3])
    assert output["deployed"] == KEYS
    assert output["announced"] == (
        "announced release-7 on 20 hosts, release-7-checked drafted and recorded"
    )
    assert {t[2] for t in reference.tasks} == {"SUCCESS"}
    # The first check failed, the retry passed; everything else ran once.
    events = Counter(event for event, *_ in reference.ledger)
    assert events == {"start": 27, "done": 26, "fail": 1}

    moments = {
        seed: random.Random(seed).uniform(0.02, 0.95 * reference.seconds) for seed in SEEDS[backend]
    }
    urls = {seed: databases(f"seed{seed}") for seed in moments}

    def one(seed: int) -> tuple[int, Result]:
        return seed, trial(urls[seed], tmp_path / f"seed{seed}", env, moments[seed])

    with ThreadPoolExecutor(2) as pool:
        results = dict(pool.map(one, moments))
    for seed, got in sorted(results.items()):
        label = f"{backend} seed {seed} (killed at {moments[seed]:.2f}s)"
        check(reference, got, label)
        owners_hit = set(got.interrupted.values())
        if owners_hit - SAFE:
            LANDED["unsafe"] += 1
        if owners_hit & SAFE:
            LANDED["safe"] += 1
        starts = Counter(aid for event, _, aid, _ in got.ledger if event == "start")
        if any(n > 1 for n in starts.values()):
            LANDED["ran again"] += 1
        print(f"{label}: interrupted {sorted(owners_hit)}; {got.seconds:.1f}s")
    print(f"{backend}: {len(results)} trials in {time.monotonic() - started:.1f}s")


def test_kills_landed_mid_action() -> None:
    """The moments did interrupt running actions, of both kinds of task."""
    print(f"kills that left an action RUNNING: {dict(LANDED)}")
    assert LANDED["unsafe"] >= 5
    assert LANDED["safe"] >= 2
    assert LANDED["ran again"] >= 1  # a safe-rerun action did run again
