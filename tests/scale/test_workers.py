"""Engines and workers as separate processes on one PostgreSQL store:
jobs routed by queue, claims recovered by their lease, outcomes fenced.

Every process here is a real ``convection`` subprocess; the store is a
fresh database on the machine's PostgreSQL.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from convection.store import open_store

CLI = [sys.executable, "-m", "convection"]
LEASE = "3"

ROUTED = """\
heat_template_version: 2018-08-31
resources:
  config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      config: |
        #!/bin/sh
        echo ran
{nodes}
"""
NODE = """\
  node_{site}{i}:
    type: Convection::Local::Node
    properties:
      queue: site-{site}
  deploy_{site}{i}:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {{get_resource: config}}
      server: {{get_resource: node_{site}{i}}}
"""


class Cluster:
    """Engine and worker subprocesses on one store, stopped at the end."""

    def __init__(self, url: str, home: Path) -> None:
        self.url = url
        self.env = {
            **os.environ,
            "CONVECTION_DB": url,
            "CONVECTION_ENGINE_LEASE_SECONDS": LEASE,
            "XDG_DATA_HOME": str(home),
            "HOME": str(home),
        }
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.home = home

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = (self.home / f"{name}.log").open("wb")
        proc = subprocess.Popen([*CLI, *args], env=self.env, stdout=log, stderr=log)
        self.procs[name] = proc
        return proc

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [*CLI, *args], env=self.env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def log(self, name: str) -> str:
        return (self.home / f"{name}.log").read_text()

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture
def cluster(fresh_postgres_database: Callable[[], str], tmp_path: Path) -> Iterator[Cluster]:
    found = Cluster(fresh_postgres_database(), tmp_path)
    found.cli("stack", "list")  # creates the schema before processes race for it
    try:
        yield found
    finally:
        found.stop()


def _wait(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _resource_states(cluster: Cluster, stack: str) -> dict[str, str]:
    store = open_store(cluster.url)
    found = next(s for s in store.list_stacks(None) if s.name == stack)
    return {r.name: f"{r.action}_{r.status}" for r in store.list_resources(found.id) if r.current}


def _stack_status(cluster: Cluster, stack: str) -> str:
    store = open_store(cluster.url)
    found = [s for s in store.list_stacks(None) if s.name == stack]
    return f"{found[0].action}_{found[0].status}" if found else "ABSENT"


def test_jobs_go_only_to_workers_of_their_queue(cluster: Cluster, tmp_path: Path) -> None:
    nodes = "".join(NODE.format(site=site, i=i) for site in "ab" for i in range(2))
    template = tmp_path / "routed.yaml"
    template.write_text(ROUTED.format(nodes=nodes))
    cluster.start("engine", "engine", "--workers")
    cluster.start("default", "worker", "--queue", "default")
    cluster.start("site-b", "worker", "--queue", "site-b")
    cluster.cli("stack", "create", "-t", str(template), "routed")

    def site_b_done() -> bool:
        states = _resource_states(cluster, "routed")
        return all(states.get(f"deploy_b{i}") == "CREATE_COMPLETE" for i in range(2))

    _wait(site_b_done, "site-b's deployments")
    time.sleep(2 * float(LEASE))  # ample time for a wrongly routed job to run
    states = _resource_states(cluster, "routed")
    # No worker listens on site-a: its nodes' jobs wait in their queue.
    assert all(states.get(f"node_a{i}") != "CREATE_COMPLETE" for i in range(2)), states
    assert all(states.get(f"deploy_a{i}") != "CREATE_COMPLETE" for i in range(2)), states
    assert _stack_status(cluster, "routed") == "CREATE_IN_PROGRESS"

    cluster.start("site-a", "worker", "--queue", "site-a")
    _wait(lambda: _stack_status(cluster, "routed") == "CREATE_COMPLETE", "the stack")
    status = cluster.cli("status", "--format", "json")
    assert '"kind": "worker"' in status and "site-a" in status and "site-b" in status


def test_a_claim_whose_job_was_never_deferred_is_recovered_by_its_lease(
    cluster: Cluster, tmp_path: Path
) -> None:
    """An engine that died between claiming nodes and deferring their jobs
    left them running under its lease: they are run once it lapses."""
    template = tmp_path / "three.yaml"
    template.write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        + "".join(f"  r{i}:\n    type: OS::Heat::RandomString\n" for i in range(3))
    )
    cluster.cli("stack", "create", "-t", str(template), "orphan")
    store = open_store(cluster.url)
    stack = next(s for s in store.list_stacks(None) if s.name == "orphan")
    assert stack.traversal_id is not None
    until = datetime.now(UTC) + timedelta(seconds=float(LEASE))
    claimed = store.claim_ready(stack.traversal_id, "engine-dead", 10, until)
    assert len(claimed) == 3  # claimed, and no job deferred: as if killed right here
    started = time.monotonic()
    cluster.start("engine", "engine", "--workers")
    cluster.start("worker", "worker")
    _wait(lambda: _stack_status(cluster, "orphan") == "CREATE_COMPLETE", "the stack")
    assert time.monotonic() - started < 4 * float(LEASE) + 10
    nodes = store.list_nodes(stack.traversal_id)
    assert {n.state for n in nodes} == {"done"}
    assert all(n.attempt == 2 for n in nodes)  # each ran once more, not twice more
