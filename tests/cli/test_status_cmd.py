"""``convection status``: the processes that beat on the store (--db), with
their leases, a stale mark for a silent one, and ``--format json``."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from convection.cli.status_cmd import ago, leases_text
from convection.store import ProcessRecord, StackRecord, TraversalRecord
from convection.store.sql import SQLStore

from .conftest import Cli

STARTED = datetime(2030, 1, 1, tzinfo=UTC)


def _beat(db: str, *records: ProcessRecord) -> None:
    store = SQLStore(db)
    try:
        for record in records:
            store.beat(record)
    finally:
        store.close()


def _engine(owner: str, host: str = "node-1", **kw: object) -> ProcessRecord:
    return ProcessRecord(
        id=owner, kind="engine", host=host, pid=4242, concurrency=16, started_at=STARTED,
        **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def _age(db: str, owner: str, seconds: float) -> None:
    """Move a row's heartbeat back (a process that stopped beating)."""
    engine = sa.create_engine(db)
    when = (datetime.now(UTC) - timedelta(seconds=seconds)).replace(tzinfo=None)
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE processes SET heartbeat_at = :w WHERE id = :id"),
            {"w": when, "id": owner},
        )
    engine.dispose()


def test_no_process_says_so(cli: Cli) -> None:
    code, out, err = cli("status")
    assert code == 0, err
    assert "No engine, worker or server" in out
    code, out, _ = cli("status", "--format", "json")
    assert code == 0 and json.loads(out) == []


def test_beating_processes_are_listed_with_their_leases(cli: Cli, db: str) -> None:
    cli("status")  # the store exists, migrated
    _beat(
        db,
        _engine("engine-a", running=3, stats={"jobs_done": 12.0, "jobs_failed": 1.0}),
        ProcessRecord(
            id="worker-b", kind="worker", host="node-2", pid=7, queues=("default", "heavy"),
            concurrency=4, started_at=STARTED,
        ),
    )  # fmt: skip
    store = SQLStore(db)
    try:
        store.create_stack(
            StackRecord(id="s1", project="p", name="web", action="CREATE", status="IN_PROGRESS")
        )
        store.start_traversal(TraversalRecord(id="t1", stack_id="s1", action="CREATE"), [], {})
        now = datetime.now(UTC)
        assert store.take_traversal("t1", "engine-a", now + timedelta(minutes=5), now)
    finally:
        store.close()

    code, out, err = cli("status")
    assert code == 0, err
    lines = out.splitlines()
    engine_line = next(line for line in lines if "engine-a" in line)
    for shown in ("engine", "node-1", "4242", "3/16", "12", "live", "1 traversal, 0 nodes"):
        assert shown in engine_line, (shown, engine_line)
    assert "s ago" in engine_line
    worker_line = next(line for line in lines if "worker-b" in line)
    assert "default, heavy" in worker_line and "0 traversals, 0 nodes" in worker_line

    code, out, err = cli("status", "-f", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["kind"], r["id"]) for r in rows] == [("engine", "engine-a"), ("worker", "worker-b")]
    engine = rows[0]
    assert engine["state"] == "live" and engine["leases"] == {"traversals": 1, "nodes": 0}
    assert (engine["running"], engine["concurrency"], engine["jobs_done"]) == (3, 16, 12)
    assert engine["jobs_failed"] == 1 and engine["pid"] == 4242 and engine["host"] == "node-1"
    assert engine["started_at"] == "2030-01-01T00:00:00+00:00"
    assert 0 <= engine["heartbeat_age_seconds"] < 60
    assert rows[1]["queues"] == ["default", "heavy"]


def test_a_process_silent_for_three_beats_is_stale(cli: Cli, db: str) -> None:
    cli("status")
    _beat(db, _engine("fresh"), _engine("silent"), _engine("late"))
    _age(db, "silent", 16)
    _age(db, "late", 14)
    code, out, err = cli("status", "-f", "json")
    assert code == 0, err
    states = {r["id"]: r["state"] for r in json.loads(out)}
    assert states == {"fresh": "live", "silent": "stale", "late": "live"}
    code, out, err = cli("status")
    assert code == 0, err
    silent = next(line for line in out.splitlines() if "silent" in line)
    assert "stale" in silent and re.search(r"1[6-9]s ago", silent), silent


def test_status_is_refused_with_a_server_url(cli: Cli) -> None:
    code, _, err = cli("--url", "http://127.0.0.1:9", "status")
    assert code == 2 and "no server route" in err


def test_ago_and_leases_text() -> None:
    assert [ago(s) for s in (-3, 0, 3.9, 59, 60, 3599, 3600, 86400 * 2)] == [
        "0s ago", "0s ago", "3s ago", "59s ago", "1m ago", "59m ago", "1h ago", "2d ago",
    ]  # fmt: skip
    assert leases_text(2, 14) == "2 traversals, 14 nodes"
    assert leases_text(1, 1) == "1 traversal, 1 node"
