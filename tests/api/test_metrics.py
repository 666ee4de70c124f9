"""``GET /metrics`` on a live server: Prometheus' text format, no token
needed, aggregate numbers that follow the rows in the store, and no names
of stacks, projects or processes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import sqlalchemy as sa
from prometheus_client.parser import text_string_to_metric_families

from convection.store import (
    ExecutionRecord,
    NodeRecord,
    ProcessRecord,
    StackRecord,
    TraversalRecord,
    UpdateTraversal,
)
from convection.store.sql import SQLStore

from .conftest import AuthServer, LiveServer

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]

STARTED = datetime(2030, 1, 1, tzinfo=UTC)


def scrape(url: str) -> Samples:
    answer = httpx.get(f"{url}/metrics", timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def _process(owner: str, kind: str, **stats: float) -> ProcessRecord:
    return ProcessRecord(
        id=owner, kind=kind, host="secret-host", pid=1, concurrency=4, stats=stats,
        started_at=STARTED,
    )  # fmt: skip


def test_metrics_follow_the_rows_in_the_store(
    launch: Callable[..., LiveServer], tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'metrics.db'}"
    server = launch(db, "--no-engine")  # nothing changes the rows but this test
    empty = scrape(server.url)
    assert empty[("convection_jobs_total", (("outcome", "done"),))] == 0
    assert empty[("convection_processes", (("kind", "engine"), ("state", "live")))] == 0

    store = SQLStore(db)
    try:
        store.beat(
            _process("engine-a", "engine", jobs_done=10, jobs_failed=2, job_seconds_sum=6.5,
                     job_wait_seconds_sum=1.25, takeups=3, lease_losses=1, stale_results=4)
        )  # fmt: skip
        store.beat(_process("engine-b", "engine", jobs_done=5, job_seconds_sum=0.5, takeups=1))
        store.beat(_process("worker-c", "worker", jobs_done=1, jobs_failed=1))
        with sa.create_engine(db).begin() as conn:  # worker-c stopped beating
            old = (datetime.now(UTC) - timedelta(minutes=1)).replace(tzinfo=None)
            conn.execute(sa.text("UPDATE processes SET heartbeat_at = :w WHERE id = 'worker-c'"),
                         {"w": old})  # fmt: skip
        for sid in ("secret-stack-1", "secret-stack-2"):
            store.create_stack(StackRecord(id=sid, project="secret-project", name=sid,
                                           action="CREATE", status="IN_PROGRESS"))  # fmt: skip
            store.start_traversal(TraversalRecord(id=f"t-{sid}", stack_id=sid, action="CREATE"),
                                  [], {})  # fmt: skip
        store.apply([UpdateTraversal("t-secret-stack-2", {"status": "COMPLETE"})])
        execution = ExecutionRecord(
            id="x1", project="secret-project", workflow_id="w", workflow_name="w", state="RUNNING"
        )
        traversal = TraversalRecord(id="t-x1", kind="workflow", execution_id="x1", action="RUN")
        first = NodeRecord(traversal_id="t-x1", key="a", kind="task", resource_name="a",
                           state="ready")  # fmt: skip
        store.workflows.create_execution(execution, traversal=traversal, nodes=[first])
        rows = store.list_processes()
    finally:
        store.close()

    answer = httpx.get(f"{server.url}/metrics", timeout=30)
    for secret in ("secret-stack", "secret-project", "secret-host", "engine-a", "worker-c"):
        assert secret not in answer.text
    got = scrape(server.url)

    def total(key: str) -> float:
        return sum(r.stats.get(key, 0.0) for r in rows)

    done, failed = total("jobs_done"), total("jobs_failed")
    assert (done, failed) == (16, 3)
    assert got[("convection_jobs_total", (("outcome", "done"),))] == done
    assert got[("convection_jobs_total", (("outcome", "failed"),))] == failed
    assert got[("convection_job_seconds_count", ())] == done + failed
    assert got[("convection_job_seconds_sum", ())] == total("job_seconds_sum") == 7.0
    assert got[("convection_job_wait_seconds_count", ())] == done + failed
    assert got[("convection_job_wait_seconds_sum", ())] == 1.25
    assert got[("convection_takeups_total", ())] == 4
    assert got[("convection_lease_losses_total", ())] == 1
    assert got[("convection_stale_results_total", ())] == 4
    assert got[("convection_processes", (("kind", "engine"), ("state", "live")))] == 2
    assert got[("convection_processes", (("kind", "engine"), ("state", "stale")))] == 0
    assert got[("convection_processes", (("kind", "worker"), ("state", "live")))] == 0
    assert got[("convection_processes", (("kind", "worker"), ("state", "stale")))] == 1
    assert got[("convection_traversals", (("kind", "stack"), ("state", "IN_PROGRESS")))] == 1
    assert got[("convection_traversals", (("kind", "stack"), ("state", "COMPLETE")))] == 1
    assert got[("convection_traversals", (("kind", "workflow"), ("state", "IN_PROGRESS")))] == 1
    assert got[("convection_executions", (("state", "RUNNING"),))] == 1
    # SQLite has no task queue: the family is there, with no samples.
    assert not [k for k in got if k[0] == "convection_queue_jobs"]
    assert "# TYPE convection_queue_jobs gauge" in answer.text


def test_metrics_need_no_token_and_are_not_in_the_openapi_schema(
    auth_server: AuthServer, server: LiveServer
) -> None:
    url = auth_server.live.url
    assert httpx.get(f"{url}/v1/p/stacks", timeout=30).status_code == 401
    assert ("convection_jobs_total", (("outcome", "done"),)) in scrape(url)
    schema = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    assert "/metrics" not in schema["paths"]
