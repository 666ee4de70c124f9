"""kill -9 of the engine while a deployment runs: a completed deployment is
never run again, an interrupted one runs again only when its config says
``rerun_safe``, and otherwise fails saying why."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from convection.convergence import EngineConfig
from convection.resources.registry import TypeRegistry, builtin_plugins
from convection.service.stacks import Stacks, StacksConfig

from .conftest import Env

WORKER = Path(__file__).with_name("engine_worker.py")

TEMPLATE = """
resources:
  node: {type: Convection::Local::Node}
  first:
    type: OS::Heat::SoftwareConfig
    properties:
      config: |
        #!/bin/sh
        echo first >> "LOG"
  slow:
    type: OS::Heat::SoftwareConfig
    properties:
      options: {rerun_safe: RERUN}
      config: |
        #!/bin/sh
        echo "slow $$" >> "LOG"
        if [ ! -e "LOG.again" ]; then touch "LOG.again"; sleep 60; fi
        echo done >> "LOG"
  step1:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: first}, server: {get_resource: node}}
  step2:
    type: OS::Heat::SoftwareDeployment
    depends_on: step1
    properties: {config: {get_resource: slow}, server: {get_resource: node}}
"""


@pytest.fixture
def orphans() -> Iterator[list[int]]:
    """Scripts the killed engine left running, stopped after the test."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(os.getpgid(pid), signal.SIGKILL)


def crash_during_step2(env: Env, log: Path, rerun: bool, orphans: list[int]) -> None:
    text = TEMPLATE.replace("LOG", str(log)).replace("RERUN", "true" if rerun else "false")
    env.stacks.create("p", "s", env.inputs(text))
    worker = subprocess.Popen(
        [sys.executable, str(WORKER), f"sqlite:///{env.db}"], env=dict(os.environ)
    )
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and "slow" in log.read_text()):
            assert worker.poll() is None, "the engine ended before step2 ran"
            assert time.monotonic() < deadline, "step2 never started"
            time.sleep(0.05)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    slow = next(line for line in log.read_text().splitlines() if line.startswith("slow"))
    orphans.append(int(slow.split()[1]))


def resume(env: Env) -> dict[str, object]:
    """A fresh engine in this process, taking the work up after the lease ends."""
    stacks = Stacks(
        env.store,
        TypeRegistry(builtin_plugins()),
        config=StacksConfig(engine=EngineConfig(lease_seconds=0.6, scan_seconds=0.05)),
    )
    stack = env.store.get_stack("p", "s")
    assert stack is not None
    return stacks.wait(stack.id, timeout=120)


def test_interrupted_deployment_is_not_rerun_without_rerun_safe(
    env: Env, tmp_path: Path, orphans: list[int]
) -> None:
    log = tmp_path / "log"
    crash_during_step2(env, log, rerun=False, orphans=orphans)
    shown = resume(env)
    assert shown["stack_status"] == "CREATE_FAILED"
    lines = log.read_text().splitlines()
    assert lines.count("first") == 1  # completed before the crash: never again
    assert [line for line in lines if line.startswith("slow")] == lines[1:2]
    reason = env.resources()["step2"]["resource_status_reason"]
    assert "did not finish" in reason and "rerun_safe" in reason


def test_interrupted_rerun_safe_deployment_runs_again(
    env: Env, tmp_path: Path, orphans: list[int]
) -> None:
    log = tmp_path / "log"
    crash_during_step2(env, log, rerun=True, orphans=orphans)
    shown = resume(env)
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    lines = log.read_text().splitlines()
    assert lines.count("first") == 1
    assert len([line for line in lines if line.startswith("slow")]) == 2
    assert lines[-1] == "done"
