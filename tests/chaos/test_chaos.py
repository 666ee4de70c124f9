"""A seeded sample of the chaos trials (``harness.py``; ``make chaos`` runs
1,000). Each trial is a real ``convection engine`` process SIGKILLed or
SIGSTOPped at a seeded moment of a real operation on SQLite or PostgreSQL,
compared with the crash-free run; a failure names each failing seed with
its replay command. A trial takes 4-11 s (SIGSTOP ones wait out a lease).

``CHAOS_CI_TRIALS`` sets the sample's size per fault (default 6: 12 trials,
about 1.5 minutes with their crash-free references); the seeds
are fixed so CI replays the same trials.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

# By path: tests/fuzz has a ``run`` module of its own.
_spec = importlib.util.spec_from_file_location("chaos_run", HERE / "run.py")
assert _spec is not None and _spec.loader is not None
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)

TRIALS = int(os.environ.get("CHAOS_CI_TRIALS", "6"))
FIRST_SEED = 1_000


def failures(fault: str) -> list[str]:
    reason = harness.postgres_available()
    if reason is not None:
        if os.environ.get("CONVECTION_SKIP_POSTGRES") == "1":
            pytest.skip(reason)
        pytest.fail(reason)
    seeds = run.matching(FIRST_SEED, TRIALS, None, None, fault)
    outcomes = run.run(seeds, verbose=True)
    print(run.table(outcomes))
    return [run.report(o) for o in outcomes if o.problems]


def test_killed_engines_leave_the_crash_free_state() -> None:
    failed = failures("sigkill")
    assert not failed, "\n".join(failed)


@pytest.mark.xfail(
    reason="engine batches are fenced by the traversal's lease now, but on SQLite a "
    "process paused holding the write lock still makes the next engine exit 'database "
    "is locked' (python tests/chaos/run.py --replay 59), and seed 39 leaves a stray "
    "placeholder row; this seeded sample passes",
    strict=False,
)
def test_paused_engines_are_fenced() -> None:
    failed = failures("sigstop")
    assert not failed, "\n".join(failed)
