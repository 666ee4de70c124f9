"""kill -9 at random moments: the work continues, nothing is made twice,
nothing is left behind.

A real subprocess runs the engine on an SQLite file for a create, an update
with replacements and a delete of a 200-resource stack of ledger resources
(some wait on timers). It is SIGKILLed at seeded random moments, then a
fresh process resumes. Every phase must end COMPLETE with the stored state
of a crash-free run, and the ledger file must show each physical resource
created at most once and, after the delete, every one deleted.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from convection.model.compiler import StackInputs
from convection.resources.testing import LEDGER_ENV, read_ledger
from convection.service.stacks import Stacks
from convection.store.sql import SQLStore

WORKER = Path(__file__).with_name("crash_worker.py")
WIDTH, LAYERS = 20, 10
SEEDS = range(7)  # 7 seeds x 3 phases = 21 killed runs


def template(path: str, *, updated: bool = False) -> str:
    """200 ledger resources in layers; the update replaces every third one
    (a new ``path`` string naming the same file) and updates others in place."""
    lines = ["heat_template_version: 2018-08-31", "resources:"]
    for i in range(WIDTH * LAYERS):
        layer = i // WIDTH
        value = f"v{i}" if layer == 0 else f"{{get_attr: [r{i - WIDTH}, value]}}"
        if updated and i % 3 == 1:
            value = f"u{i}" if layer == 0 else f"{{list_join: ['-', [u, {value}]]}}"
        where = path.replace("/ledger", "/./ledger") if updated and i % 3 == 0 else path
        wait = 0.05 if i % 7 == 0 else 0
        lines.append(
            f"  r{i}: {{type: Convection::Test::Ledger, properties: "
            f"{{path: '{where}', value: {value}, wait_secs: {wait}}}}}"
        )
    return "\n".join(lines)


def snapshot(store: SQLStore, stack_id: str) -> list[tuple[Any, ...]]:
    """Stored state without the ids that differ between runs."""
    rows = store.list_resources(stack_id)
    return sorted(
        (
            r.name,
            r.type,
            r.action,
            r.status,
            r.current,
            r.properties.get("value"),
            r.attributes.get("value"),
            r.requires,
        )
        for r in rows
    )


def run_worker(url: str, ledger: Path | None, kill_after: float | None) -> float:
    """Run one engine process; with ``kill_after``, SIGKILL it that many
    seconds after its engine started (imports take a variable while).
    Returns the seconds from its start to its end."""
    env = {**os.environ, LEDGER_ENV: str(ledger)} if ledger else dict(os.environ)
    # Load every layer before "started" (lazy_loader's switch): the kill
    # moments are drawn within the reference run's time, which must be the
    # work's, not first-use imports (or, in a fresh clone, their compiles).
    env["EAGER_IMPORT"] = "1"
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), url], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "started"
    started = time.monotonic()
    if kill_after is None:
        assert proc.wait(timeout=120) == 0
        return time.monotonic() - started
    try:
        proc.wait(timeout=kill_after)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return time.monotonic() - started


#: Kills that landed while the operation was still in progress.
INTERRUPTED: list[int] = []


def drive(
    url: str, ledger: Path, rng: random.Random | None, stack_id: str, seconds: float
) -> float:
    """Run the engine to the end, killing it at random moments first: within
    the time the phase took in the crash-free run (``seconds``), so the
    moments land in the work however fast this machine or the engine is.
    Returns the seconds the last, uninterrupted run took."""
    if rng is not None:
        for _ in range(rng.randint(1, 3)):
            run_worker(url, ledger, kill_after=rng.uniform(0.02, max(0.05, 0.9 * seconds)))
            probe = SQLStore(url)
            stack = probe.get_stack_by_id(stack_id)
            probe.close()
            if stack is not None and stack.status == "IN_PROGRESS":
                INTERRUPTED.append(1)
    return run_worker(url, ledger, kill_after=None)


def scenario(tmp: Path, seed: int | None, took: dict[str, float] | None = None) -> dict[str, Any]:
    """Create, update and delete; ``took``: each phase's seconds in the
    crash-free run (the reference, which records them in ``phases["took"]``)."""
    ledger = tmp / "ledger.tsv"
    url = f"sqlite:///{tmp / 'stacks.db'}"
    store = SQLStore(url)
    stacks = Stacks(store)
    rng = None if seed is None else random.Random(seed)
    phases: dict[str, Any] = {"took": {}}

    def run(phase: str) -> None:
        seconds = drive(url, ledger, rng, stack_id, (took or {}).get(phase, 0.45))
        phases["took"][phase] = seconds

    stack_id = stacks.create("p", "s", StackInputs.from_text(template(str(ledger))))["id"]
    run("create")
    phases["create"] = (stacks.show("p", stack_id)["stack_status"], snapshot(store, stack_id))
    stacks.update("p", "s", StackInputs.from_text(template(str(ledger), updated=True)))
    run("update")
    phases["update"] = (stacks.show("p", stack_id)["stack_status"], snapshot(store, stack_id))
    stacks.delete("p", stack_id)
    run("delete")
    phases["delete"] = (stacks.show("p", stack_id)["stack_status"], snapshot(store, stack_id))
    phases["ledger"] = read_ledger(ledger)
    store.close()
    return phases


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return scenario(tmp_path_factory.mktemp("reference"), None)


def test_reference_run_is_complete(reference: dict[str, Any]) -> None:
    assert reference["create"][0] == "CREATE_COMPLETE"
    assert reference["update"][0] == "UPDATE_COMPLETE"
    assert reference["delete"] == ("DELETE_COMPLETE", [])
    creates = Counter(name for event, name in reference["ledger"] if event == "create")
    # 200 created, a third of them replaced: 67 more.
    assert len(creates) == WIDTH * LAYERS + 67


@pytest.mark.parametrize("seed", SEEDS)
def test_killed_engine_resumes(tmp_path: Path, seed: int, reference: dict[str, Any]) -> None:
    started = time.monotonic()
    result = scenario(tmp_path, seed, reference["took"])
    for phase in ("create", "update", "delete"):
        status, rows = result[phase]
        assert status == reference[phase][0], f"{phase} ended {status} (seed {seed})"
        missing = sorted(set(reference[phase][1]) - set(rows))
        extra = sorted(set(rows) - set(reference[phase][1]))
        assert (missing, extra) == ([], []), f"{phase} state differs after kills (seed {seed})"
    creates = Counter(name for event, name in result["ledger"] if event == "create")
    deletes = Counter(name for event, name in result["ledger"] if event == "delete")
    assert max(creates.values()) == 1, "a physical resource was created twice"
    assert max(deletes.values()) == 1, "a physical resource was deleted twice"
    assert set(deletes) == set(creates), "something was left behind"
    assert time.monotonic() - started < 90


def test_kills_landed_mid_operation() -> None:
    """The random moments did interrupt real work, not idle processes."""
    print(f"{len(INTERRUPTED)} kills interrupted an operation")
    assert len(INTERRUPTED) >= 10
