"""The multi-host test infrastructure does what the scale tests will rely on.

Each test checks the network for real (psql from inside a namespace), so a
broken link, a wrong listen address or a leaked namespace fails it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from .netns import PSQL, Host, Hosts, PrivatePostgres, _other_pid_residues, remove_stale

MakeHosts = Callable[[int], list[Host]]


def psql(
    host: Host, pg: PrivatePostgres, sql: str, **params: str | int
) -> subprocess.CompletedProcess[str]:
    """Run one query with psql inside ``host``'s namespace (2 s connect timeout by default)."""
    params.setdefault("connect_timeout", 2)
    return host.run([str(PSQL), "-X", "-qAt", "-c", sql, pg.dsn(host, **params)])


def ip_names() -> tuple[str, str]:
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return netns, links


def gone(pid: int, timeout: float = 5) -> bool:
    """Whether ``pid`` is dead (or a zombie awaiting its reaper) within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_hosts_reach_cluster_on_own_link_and_not_root_loopback(
    make_hosts: MakeHosts, make_private_pg: Callable[[list[Host]], PrivatePostgres]
) -> None:
    hosts = make_hosts(2)
    pg = make_private_pg(hosts)
    assert len({h.name for h in hosts}) == 2
    for host in hosts:
        done = psql(host, pg, "SELECT 1, inet_client_addr()")
        assert done.returncode == 0, done.stderr
        # The server saw the namespace's own address: the query crossed that host's veth.
        assert done.stdout.strip() == f"1|{host.address}"

        # 127.0.0.1 inside a namespace is its own loopback, where nothing listens.
        start = time.monotonic()
        local = host.run(
            [
                str(PSQL),
                "-X",
                "-qAt",
                "-c",
                "SELECT 1",
                f"host=127.0.0.1 port={pg.port} user=postgres dbname=convection connect_timeout=2",
            ]
        )
        assert local.returncode != 0
        assert "refused" in local.stderr, local.stderr
        assert time.monotonic() - start < 5

    # url(host) is a working SQLAlchemy URL from inside the host.
    code = (
        "import sqlalchemy as sa, sys\n"
        "e = sa.create_engine(sys.argv[1])\n"
        "with e.connect() as c: print(c.execute(sa.text('SELECT current_database()')).scalar())\n"
    )
    done = hosts[0].run([sys.executable, "-c", code, pg.url(hosts[0])])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "convection"


def test_link_down_cuts_one_host_off_and_link_up_restores_it(
    make_hosts: MakeHosts, private_pg: PrivatePostgres
) -> None:
    cut, other = make_hosts(2)
    assert psql(cut, private_pg, "SELECT 1").returncode == 0

    cut.link_down()
    start = time.monotonic()
    done = psql(cut, private_pg, "SELECT 1", connect_timeout=2)
    elapsed = time.monotonic() - start
    assert done.returncode != 0, done.stdout
    assert elapsed < 5, f"took {elapsed:.1f}s to fail"
    # Only that host is cut off.
    assert psql(other, private_pg, "SELECT 1").returncode == 0

    cut.link_up()
    deadline = time.monotonic() + 5  # the peer's carrier comes back asynchronously
    while (done := psql(cut, private_pg, "SELECT 1")).returncode != 0:
        assert time.monotonic() < deadline, done.stderr
        time.sleep(0.1)
    assert done.stdout.strip() == "1"


def test_restart_drops_sessions_and_new_connections_succeed(
    make_hosts: MakeHosts, private_pg: PrivatePostgres
) -> None:
    (host,) = make_hosts(1)
    before = psql(host, private_pg, "SELECT pg_postmaster_start_time()")
    assert before.returncode == 0, before.stderr
    old = psycopg.connect(private_pg.dsn(), autocommit=True)
    try:
        private_pg.restart()
        with pytest.raises(psycopg.OperationalError):
            old.execute("SELECT 1")
    finally:
        old.close()
    after = psql(host, private_pg, "SELECT pg_postmaster_start_time()")
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() != before.stdout.strip()


def test_terminate_backends_kills_other_sessions(private_pg: PrivatePostgres) -> None:
    engine = sa.create_engine(private_pg.url(), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar() == 1
            assert private_pg.terminate_backends() >= 1
            with pytest.raises(sa.exc.OperationalError):
                conn.execute(sa.text("SELECT 1"))
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar() == 1
    finally:
        engine.dispose()


def test_hosts_exit_removes_every_namespace_and_link_even_on_failure() -> None:
    group = Hosts(2)
    with pytest.raises(RuntimeError, match="boom"), group as hosts:
        names = group.names()
        netns, links = ip_names()
        assert all(h.name in netns for h in hosts)
        assert all(h.root_link in links for h in hosts)
        # A process still running in a namespace would keep it (and its veth) alive.
        sleeper = hosts[0].spawn(["sleep", "60"])
        # So would one it did not start itself (a daemon); its pid is found by namespace.
        orphan = int(hosts[1].run(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"]).stdout)
        raise RuntimeError("boom")
    assert sleeper.poll() is not None
    assert gone(orphan)
    netns, links = ip_names()
    leaked = {n for n in names if n in netns or f" {n}:" in links or f" {n}@" in links}
    assert not leaked
    hosts[0].close()  # idempotent


def test_stale_names_removed_only_when_no_live_process_matches() -> None:
    live = _other_pid_residues()
    own = os.getpid() % 10000
    dead = next(r for r in range(9999, 0, -1) if r not in live and r != own)
    alive = next(iter(live))
    stale_ns, stale_link, stale_peer = f"cvt{dead}h250", f"cvt{dead}r250", f"cvt{dead}n250"
    kept_ns = f"cvt{alive}h250"
    try:
        for argv in (
            ["ip", "netns", "add", stale_ns],
            ["ip", "link", "add", stale_link, "type", "veth", "peer", "name", stale_peer],
            ["ip", "netns", "add", kept_ns],
        ):
            subprocess.run(argv, check=True, capture_output=True)
        removed = remove_stale()
        assert stale_ns in removed and stale_link in removed
        netns, links = ip_names()
        assert stale_ns not in netns
        assert f" {stale_link}@" not in links and f" {stale_peer}@" not in links
        assert kept_ns in netns  # a live process might own it
    finally:
        for argv in (
            ["ip", "netns", "del", stale_ns],
            ["ip", "link", "del", stale_link],
            ["ip", "netns", "del", kept_ns],
        ):
            subprocess.run(argv, capture_output=True)
