"""examples/cluster-workflow: the nine steps of the SQL cluster as a
Mistral workflow held by a stack, on real software.

Real processes throughout: five Convection::Local::Node sandboxes (as the
unprivileged user convection-test when the tests run as root, since
PostgreSQL refuses root), OpenLDAP's slapd as a provider and a syncrepl
consumer, PostgreSQL as a primary and two streaming standbys, all
supervised by their nodes. The first test starts the workflow with a
signal and makes one secondary fail its first two attempts (retried, then
it succeeds); the second starts it with ``create_execution`` and every
input, and makes one secondary always fail (reported, while the other
finishes). Both delete the stack and check that no server is left.

Both stacks run at once, on one engine, to keep the time down: the
deployments happen in a module fixture, and each test asserts on its own.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from convection.convergence import EngineConfig
from convection.resources.registry import TypeRegistry, builtin_plugins
from convection.service.sources import read_inputs
from convection.service.stacks import Stacks, StacksConfig
from convection.store.sql import SQLStore
from convection.workflows import (
    create_execution,
    engine_for,
    get_execution,
    list_action_executions,
    list_executions,
    list_tasks,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster-workflow"
PROJECT = "p"
TEST_USER = "convection-test"
SECRETS = ("replication_password", "ldap_admin_password")


def pg_bin() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not found:
        pytest.fail("PostgreSQL binaries are missing under /usr/lib/postgresql")
    return found[-1]


def require_slapd() -> None:
    missing = [t for t in ("/usr/sbin/slapd", "/usr/bin/ldapsearch") if not os.access(t, os.X_OK)]
    if missing:
        pytest.fail(f"{', '.join(missing)} missing: run scripts/ensure-test-deps.sh as root")


def free_port(addresses: list[str]) -> int:
    """A port free on every one of ``addresses``."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind((addresses[0], 0))
            port = int(probe.getsockname()[1])
        ok = True
        for address in addresses[1:]:
            with socket.socket() as s:
                try:
                    s.bind((address, port))
                except OSError:
                    ok = False
        if ok:
            return port
    raise RuntimeError(f"no free port on {addresses}")


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


def server_pids(root: Path) -> list[tuple[int, str]]:
    """postgres and slapd processes whose command line names a sandbox under ``root``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        program = os.path.basename(argv[0]).decode(errors="replace")
        if any(str(root).encode() in a for a in argv) and program in ("postgres", "slapd"):
            found.append((int(entry), program))
    return found


@dataclass
class Cluster:
    """One stack of the example and the execution that deployed it."""

    name: str
    addresses: list[str]
    directory_addresses: list[str]
    port: int
    ldap_port: int
    execution_id: str = ""
    secrets: dict[str, str] = field(default_factory=dict)

    @property
    def workflow(self) -> str:
        return f"{self.name}-deploy"


class World:
    """The store, the Stacks service with the workflow engine attached, and
    the two clusters."""

    def __init__(self, db: Path, node_user: str) -> None:
        self.store = SQLStore(f"sqlite:///{db}")
        config = StacksConfig(engine=EngineConfig(scan_seconds=0.05))
        self.stacks = Stacks(self.store, TypeRegistry(builtin_plugins()), config=config)
        engine_for(self.stacks)
        self.node_user = node_user
        self.clusters: dict[str, Cluster] = {}

    def create(self, cluster: Cluster) -> None:
        inputs = read_inputs(
            EXAMPLE / "template.yaml",
            parameters=[
                f"node_user={self.node_user}",
                f"addresses={','.join(cluster.addresses)}",
                f"directory_addresses={','.join(cluster.directory_addresses)}",
                f"port={cluster.port}",
                f"ldap_port={cluster.ldap_port}",
                f"pg_bin={pg_bin()}",
            ],
        )
        made = self.stacks.create(PROJECT, cluster.name, inputs)
        shown = self.stacks.wait(made["id"], timeout=60)
        assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
        for secret in SECRETS:
            value = self.resource(cluster.name, secret)["attributes"]["value"]
            assert isinstance(value, str) and len(value) == 32
            cluster.secrets[secret] = value
        self.clusters[cluster.name] = cluster

    def resource(self, stack: str, name: str) -> dict[str, Any]:
        return self.stacks.resource(PROJECT, stack, name)

    def outputs(self, stack: str) -> dict[str, Any]:
        return {o["output_key"]: o["output_value"] for o in self.stacks.outputs(PROJECT, stack)}

    def settle(self, timeout: float = 170) -> None:
        """Run the engine until every cluster's execution has ended."""

        def done() -> bool:
            return all(
                get_execution(self.store, PROJECT, c.execution_id)["state"] != "RUNNING"
                for c in self.clusters.values()
            )

        self.stacks.run_engine(until=done, timeout=timeout)

    def execution(self, cluster: Cluster) -> dict[str, Any]:
        return get_execution(self.store, PROJECT, cluster.execution_id)

    def tasks(self, execution_id: str) -> dict[str, dict[str, Any]]:
        found = list_tasks(self.store, PROJECT, execution_id=execution_id)
        return {t["name"]: t for t in found}

    def sub_executions(self, task_id: str) -> list[dict[str, Any]]:
        return list_executions(self.store, PROJECT, filters={"task_execution_id": task_id})

    def children(self, task_id: str) -> dict[str, dict[str, Any]]:
        """Step 9's child executions (one per secondary), by node name."""
        return {c["input"]["node"]["name"]: c for c in self.sub_executions(task_id)}

    def actions(self, task_id: str) -> list[dict[str, Any]]:
        return list_action_executions(self.store, PROJECT, task_execution_id=task_id)

    def everything_shown(self, cluster: Cluster) -> str:
        """Every text a reader sees of the stack and its executions, but the
        executions' own input (the caller's data, as in Mistral): outputs,
        events, tasks (published, state_info, result), action executions
        (input, output), execution outputs and state_info."""
        shown: list[Any] = [
            self.outputs(cluster.name),
            self.stacks.events(PROJECT, cluster.name),
        ]
        pending = [cluster.execution_id]
        while pending:
            ex_id = pending.pop()
            ex = get_execution(self.store, PROJECT, ex_id)
            shown.append({k: v for k, v in ex.items() if k != "input"})
            for task in self.tasks(ex_id).values():
                shown.append(task)
                shown.extend(self.actions(task["id"]))
                pending.extend(child["id"] for child in self.sub_executions(task["id"]))
        return json.dumps(shown, default=str)

    def delete(self, cluster: Cluster) -> dict[str, Any]:
        stack = self.store.get_stack(PROJECT, cluster.name)
        assert stack is not None
        self.stacks.delete(PROJECT, cluster.name)
        return self.stacks.wait(stack.id, timeout=60)

    def close(self) -> None:
        for stack in self.stacks.list(PROJECT):
            try:
                self.stacks.delete(PROJECT, stack["id"])
                self.stacks.wait(stack["id"], timeout=60)
            except Exception:  # best effort at teardown
                pass
        self.store.close()


@pytest.fixture(scope="module")
def node_root() -> Iterator[Path]:
    """A fresh node root under /tmp, open to the nodes' user (0755)."""
    root = Path(tempfile.mkdtemp(prefix="convection-cluster-", dir="/tmp"))
    root.chmod(0o755)
    saved = os.environ.get("CONVECTION_NODE_ROOT")
    os.environ["CONVECTION_NODE_ROOT"] = str(root)
    yield root
    if saved is None:
        os.environ.pop("CONVECTION_NODE_ROOT", None)
    else:
        os.environ["CONVECTION_NODE_ROOT"] = saved
    shutil.rmtree(root, ignore_errors=True)


def node_user() -> str:
    """As root, the nodes run as convection-test (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return ""
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        pytest.fail(f"user {TEST_USER} is missing: run scripts/ensure-test-deps.sh as root")
    return TEST_USER


FLAKY = Cluster(
    "flaky",
    ["127.0.20.1", "127.0.20.2", "127.0.20.3"],
    ["127.0.21.1", "127.0.21.2"],
    port=0,
    ldap_port=0,
)
BROKEN = Cluster(
    "broken",
    ["127.0.22.1", "127.0.22.2", "127.0.22.3"],
    ["127.0.23.1", "127.0.23.2"],
    port=0,
    ldap_port=0,
)


@pytest.fixture(scope="module")
def world(node_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, str]]:
    """Both clusters created, started (one by a signal, one by
    create_execution) and run to their end on one engine; the log of it."""
    require_slapd()
    pg_bin()
    w = World(tmp_path_factory.mktemp("cluster") / "store.db", node_user())
    handler = _Capture()
    logging.getLogger().addHandler(handler)
    previous = logging.getLogger().level
    logging.getLogger().setLevel(logging.DEBUG)
    try:
        for c in (FLAKY, BROKEN):
            c.port = free_port(c.addresses)
            c.ldap_port = free_port(c.directory_addresses)
            w.create(c)
        # A signal passes the Workflow resource's input defaults, with these over them.
        body = {"input": {"faults": {"db1": 2}, "secondary_retries": 2}}
        w.stacks.signal(PROJECT, FLAKY.name, "deploy", body)
        started = w.resource(FLAKY.name, "deploy")["attributes"]["executions"]
        FLAKY.execution_id = started[0]["id"]
        # create_execution passes every input itself, as a Heat user would.
        nodes = w.outputs(BROKEN.name)["nodes"]
        made = create_execution(
            w.store,
            PROJECT,
            BROKEN.workflow,
            input={
                **nodes,
                "addresses": dict(zip(["db0", "db1", "db2"], BROKEN.addresses, strict=True)),
                "directory_addresses": dict(
                    zip(["provider", "consumer"], BROKEN.directory_addresses, strict=True)
                ),
                "port": BROKEN.port,
                "ldap_port": BROKEN.ldap_port,
                "base_dn": "dc=broken,dc=test",
                "pg_bin": pg_bin(),
                "db_name": "app",
                "db_user": "app",
                "repl_user": "replicator",
                "repl_password": BROKEN.secrets["replication_password"],
                "ldap_admin_password": BROKEN.secrets["ldap_admin_password"],
                "master_node": "db0",
                "secondary_retries": 1,
                "faults": {"db2": 99},  # db2 fails every attempt of step 9
            },
        )
        BROKEN.execution_id = made["id"]
        w.settle()
        yield w, "\n".join(handler.lines)
    finally:
        logging.getLogger().removeHandler(handler)
        logging.getLogger().setLevel(previous)
        w.close()


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_signal_deploys_the_cluster_and_the_flaky_secondary_is_retried(
    world: tuple[World, str], node_root: Path
) -> None:
    w, log = world
    c = FLAKY
    done = w.execution(c)
    tasks = w.tasks(c.execution_id)
    assert done["state"] == "SUCCESS", (
        done["state_info"],
        {n: t["state"] for n, t in tasks.items()},
    )
    assert "report_failure" not in tasks and "abort" not in tasks

    # What each step published, read by the later ones.
    a0, a1, a2 = c.addresses
    addresses = {"db0": a0, "db1": a1, "db2": a2}
    assert tasks["take_nodes"]["published"] == {
        "node_names": ["db0", "db1", "db2"],
        "master_name": "db0",
    }
    directory = tasks["directory"]["published"]["directory"]
    d0, d1 = c.directory_addresses
    assert directory == {
        "uri": f"ldap://{d1}:{c.ldap_port}/",
        "provider_uri": f"ldap://{d0}:{c.ldap_port}/",
        "base_dn": "dc=cluster,dc=test",
    }
    assert tasks["secondary_ip"]["published"] == {"node_addresses": addresses}
    assert set(tasks["prerequisites"]["published"]["pg_bins"].values()) == {pg_bin()}
    published = tasks["choose_master"]["published"]
    assert published["master"] == {"name": "db0", "host": a0, "port": c.port}
    assert [n["name"] for n in published["secondaries"]] == ["db1", "db2"]
    roles = {"db0": "primary", "db1": "replica", "db2": "replica"}
    assert tasks["know_master"]["published"] == {"roles": roles}
    # Every node read the same roles back from the directory's consumer.
    seen = "db0=primary db1=replica db2=replica"
    assert tasks["install"]["published"]["directory_roles"] == dict.fromkeys(roles, seen)
    assert tasks["standby_setup"]["published"] == {"standbys": ["db1", "db2"]}
    primary = f"postgresql://app@{a0}:{c.port}/app"
    assert tasks["init_primary"]["published"] == {"primary_dsn": primary}
    replicas = {
        "db1": f"postgresql://app@{a1}:{c.port}/app",
        "db2": f"postgresql://app@{a2}:{c.port}/app",
    }
    assert tasks["init_secondaries"]["published"] == {
        "replica_dsns": replicas,
        "secondary_attempts": {"db1": 3, "db2": 1},
    }
    assert done["output"] == {
        "master": {"name": "db0", "host": a0, "port": c.port},
        "addresses": addresses,
        "roles": roles,
        "directory": directory,
        "directory_roles": dict.fromkeys(roles, seen),
        "primary_dsn": primary,
        "replica_dsns": replicas,
        "secondary_attempts": {"db1": 3, "db2": 1},
    }

    # The flaky secondary: its step 9 ran three times (two retries), the other once.
    children = w.children(tasks["init_secondaries"]["id"])
    assert {n: ch["state"] for n, ch in children.items()} == {"db1": "SUCCESS", "db2": "SUCCESS"}
    runs = {}
    for name, child in children.items():
        (init,) = w.tasks(child["id"]).values()
        runs[name] = [a["state"] for a in w.actions(init["id"])]
    assert runs == {"db1": ["ERROR", "ERROR", "SUCCESS"], "db2": ["SUCCESS"]}

    # The directory, asked from here: the consumer holds what step 5 wrote on the provider.
    found = subprocess.run(
        ["ldapsearch", "-x", "-LLL", "-H", directory["uri"], "-b", "ou=roles,dc=cluster,dc=test",
         "(objectClass=organizationalRole)", "cn", "description"],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    assert sorted(_entries(found.stdout)) == [
        ("db0", "primary"),
        ("db1", "replica"),
        ("db2", "replica"),
    ]

    # Replication works: written on the primary, read on both standbys.
    eventually(primary, "select 1", "1")
    written = psql(
        primary,
        "create table greeting (id int primary key, said text); "
        "insert into greeting values (1, 'hello from the primary')",
    )
    assert written.returncode == 0, written.stderr
    for replica in replicas.values():
        eventually(replica, "select said from greeting where id = 1", "hello from the primary")
        assert psql(replica, "select pg_is_in_recovery()").stdout.strip() == "t"

    # The secrets are nowhere a reader looks, nor in the engine's log.
    assert "running hook script" in log  # the log was captured
    shown = w.everything_shown(c)
    for name, value in c.secrets.items():
        assert value not in shown, name
        assert value not in log, name

    _delete_and_check_nothing_is_left(w, c, node_root)
    # The Workflow resources went with the stack, and the executions their
    # signal started (the sub-workflows' too).
    names = {f"{c.name}-{w}" for w in ("deploy", "directory", "secondary")}
    assert [e for e in list_executions(w.store, PROJECT) if e["workflow_name"] in names] == []


def test_a_secondary_that_always_fails_is_reported_and_the_other_finishes(
    world: tuple[World, str], node_root: Path
) -> None:
    w, log = world
    c = BROKEN
    done = w.execution(c)
    tasks = w.tasks(c.execution_id)
    assert done["state"] == "ERROR"
    assert tasks["init_secondaries"]["state"] == "ERROR"
    # Reported: which secondary failed, and that the other one finished.
    a1 = c.addresses[1]
    assert tasks["report_secondaries"]["published"] == {
        "failed_secondaries": ["db2"],
        "replica_dsns": {"db1": f"postgresql://app@{a1}:{c.port}/app"},
    }
    assert tasks["report_failure"]["published"]["failed_step"] == "init_secondaries"
    assert tasks["abort"]["state"] == "ERROR"
    assert "init_secondaries" in done["state_info"] or "abort" in done["state_info"]

    children = w.children(tasks["init_secondaries"]["id"])
    assert {n: ch["state"] for n, ch in children.items()} == {"db1": "SUCCESS", "db2": "ERROR"}
    (failed,) = w.tasks(children["db2"]["id"]).values()
    attempts = w.actions(failed["id"])
    assert [a["state"] for a in attempts] == ["ERROR", "ERROR"]  # once, then its one retry
    assert "injected fault" in json.dumps(attempts[-1]["output"])
    # The secondary that finished is a working standby.
    primary = tasks["init_primary"]["published"]["primary_dsn"]
    eventually(primary, "select 1", "1")
    assert psql(primary, "create table t (x int); insert into t values (7)").returncode == 0
    eventually(f"postgresql://app@{a1}:{c.port}/app", "select x from t", "7")

    shown = w.everything_shown(c)
    for name, value in c.secrets.items():
        assert value not in shown, name
        assert value not in log, name

    _delete_and_check_nothing_is_left(w, c, node_root)


def test_run_sh(node_root: Path, tmp_path: Path) -> None:
    """The example as its README runs it: the real CLI on an SQLite file."""
    require_slapd()
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "TMPDIR": str(tmp_path),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "CONVECTION_NODE_ROOT": str(node_root),
        "PORT": str(free_port(["127.0.20.1", "127.0.20.2", "127.0.20.3"])),
        "LDAP_PORT": str(free_port(["127.0.21.1", "127.0.21.2"])),
    }
    done = subprocess.run(
        [str(EXAMPLE / "run.sh")], env=env, capture_output=True, text=True, timeout=170
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "cluster-deploy" in out and "SUCCESS" in out
    assert '"secondary_attempts": {' in out and '"db2": 2' in out  # one injected fault, retried
    assert "replica db1 says: from the primary" in out
    assert out.rstrip().endswith("Stack cluster DELETE_COMPLETE")
    assert [p for p in server_pids(node_root)] == []
    assert list(node_root.glob("cluster-*")) == []


def _entries(ldif: str) -> list[tuple[str, str]]:
    found = []
    for block in ldif.strip().split("\n\n"):
        attrs = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        found.append((attrs["cn"], attrs["description"]))
    return found


def _delete_and_check_nothing_is_left(w: World, c: Cluster, root: Path) -> None:
    """Delete the stack: every server its nodes ran stops, every sandbox goes."""
    sandboxes = [str(w.resource(c.name, n)["attributes"]["sandbox"]) for n in _NODES]

    def servers() -> list[tuple[str, str]]:
        return sorted(
            (node, program)
            for pid, program in server_pids(root)
            for node, sandbox in zip(_NODES, sandboxes, strict=True)
            if sandbox + "/" in _cmdline(pid)
        )

    running = {node for node, program in servers() if program == "postgres"}
    assert running == ({"db0", "db1", "db2"} if c is FLAKY else {"db0", "db1"})
    assert {node for node, program in servers() if program == "slapd"} == {"dir0", "dir1"}
    assert w.delete(c)["stack_status"] == "DELETE_COMPLETE"
    deadline = time.monotonic() + 10
    while servers() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert servers() == []
    assert not any(Path(s).exists() for s in sandboxes)


_NODES = ("db0", "db1", "db2", "dir0", "dir1")


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
