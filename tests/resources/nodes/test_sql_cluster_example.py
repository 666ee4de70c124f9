"""examples/sql-cluster: nine steps, three local nodes, a replicated database.

The example runs for real: PostgreSQL from the machine's packages, one
primary and two streaming standbys, each supervised by its node. The test
writes a row on the primary and reads it back from both replicas, then
deletes the stack and checks every server process is gone.
"""

from __future__ import annotations

import glob
import os
import pwd
import socket
import subprocess
import time
from pathlib import Path

import pytest

from convection.service.sources import read_inputs

from .conftest import Env

EXAMPLE = Path(__file__).parents[3] / "examples" / "sql-cluster"
ADDRESSES = ["127.0.10.1", "127.0.10.2", "127.0.10.3"]


def pg_bin() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not found:
        pytest.fail("PostgreSQL binaries are missing under /usr/lib/postgresql")
    return found[-1]


def free_port() -> int:
    """A port free on every node's address (each address gets its own socket)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind((ADDRESSES[0], 0))
            port = int(probe.getsockname()[1])
        ok = True
        for address in ADDRESSES[1:]:
            with socket.socket() as s:
                try:
                    s.bind((address, port))
                except OSError:
                    ok = False
        if ok:
            return port
    raise RuntimeError("no free port on all three addresses")


def psql(dsn: str, sql: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [f"{pg_bin()}/psql", dsn, "-v", "ON_ERROR_STOP=1", "-qAtc", sql],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )


def eventually(dsn: str, sql: str, expect: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        last = psql(dsn, sql)
        if last.returncode == 0 and last.stdout.strip() == expect:
            return
        time.sleep(0.3)
    raise AssertionError(f"{dsn}: {sql!r} never gave {expect!r}: {last}")


def postgres_pids(root: Path) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(root).encode() in part for part in cmdline) and b"postgres" in cmdline[0]:
            pids.append(int(entry))
    return pids


def test_the_sql_cluster_replicates_a_row_to_both_replicas(
    env: Env, node_root: Path, test_user: pwd.struct_passwd
) -> None:
    user = test_user.pw_name if os.geteuid() == 0 else ""
    inputs = read_inputs(
        EXAMPLE / "template.yaml",
        parameters=[
            f"node_user={user}",
            f"port={free_port()}",
            f"pg_bin={pg_bin()}",
        ],
    )
    env.stacks.create("p", "s", inputs)
    done = env.wait()
    assert done["stack_status"] == "CREATE_COMPLETE", (done, env.events()[-5:])
    outputs = env.outputs()
    primary, replicas = outputs["primary_dsn"], outputs["replica_dsns"]
    port = inputs.parameters["port"]
    assert primary == f"postgresql://app@127.0.10.1:{port}/app"
    assert replicas == [
        f"postgresql://app@127.0.10.2:{port}/app",
        f"postgresql://app@127.0.10.3:{port}/app",
    ]
    assert outputs["roles"] == {"db0": "primary", "db1": "replica", "db2": "replica"}

    eventually(primary, "select 1", "1")
    written = psql(
        primary,
        "create table greeting (id int primary key, said text); "
        "insert into greeting values (1, 'hello from the primary')",
    )
    assert written.returncode == 0, written.stderr
    for replica in replicas:
        eventually(replica, "select said from greeting where id = 1", "hello from the primary")
        standby = psql(replica, "select pg_is_in_recovery()")
        assert standby.stdout.strip() == "t"
    refused = psql(replicas[0], "insert into greeting values (2, 'no')")
    assert "read-only transaction" in refused.stderr

    assert postgres_pids(node_root)
    assert env.delete()["stack_status"] == "DELETE_COMPLETE"
    deadline = time.monotonic() + 10
    while postgres_pids(node_root) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert postgres_pids(node_root) == []
    assert list(node_root.iterdir()) in ([], [node_root / "ssh-known-hosts"])
