"""The fuzz harnesses work: each one's one-input function takes every seed
of its corpus once, with a clean outcome (``make fuzz`` runs them under
atheris; here they run plainly, in well under the time of a CI step), and
``run.py`` reads libFuzzer's figures."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402


def harness(name: str) -> ModuleType:
    return importlib.import_module(f"fuzz_{name}")


@pytest.mark.parametrize("name", run.HARNESSES)
def test_every_seed_has_a_clean_outcome(name: str) -> None:
    module = harness(name)
    seeds = module.seeds()
    assert len(seeds) >= 5, f"{name}: too few seeds ({len(seeds)})"
    started = time.monotonic()
    for seed in seeds:
        module.one_input(seed)
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("name", run.HARNESSES)
def test_harnesses_take_what_libfuzzer_makes_of_a_seed(name: str) -> None:
    """Truncated, empty and byte-flipped seeds: the mutations libFuzzer
    starts with."""
    module = harness(name)
    for seed in module.seeds()[:3]:
        for data in (b"", seed[:1], seed[: len(seed) // 2], bytes(b ^ 0x20 for b in seed)):
            module.one_input(data)


def test_run_reads_libfuzzers_figures() -> None:
    final = "#4096\tpulse  cov: 1\nDone 5000 runs\nstat::number_of_executed_units: 5000\n"
    assert run.executions_of(final) == 5000
    assert run.executions_of("#128\tNEW cov: 3\n#256\tREDUCE cov: 4\n==1== ERROR") == 256
    result = run.Result("x", executions=300, seconds=2.0, crashes=1)
    text = run.table([result])
    assert text.splitlines()[0].split() == ["harness", "executions", "exec/s", "crashes"]
    assert text.splitlines()[2].split() == ["x", "300", "150", "1"]
