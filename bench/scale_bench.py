"""Scale-out benchmark: jobs on ``convection worker`` processes (issue 16).

Every figure comes from real processes on one fresh PostgreSQL database,
in one run, beside its peer, because on the shared 2-core machine only
ratios within a run hold:

* **Throughput curve**: a stack of ``--jobs`` independent
  ``Convection::Test::Ledger`` resources whose create holds its job
  ``--hold`` seconds (an I/O-bound call in flight, 100 ms by default),
  created by one ``convection engine --workers`` and 1, 2 and 4
  ``convection worker`` processes of ``--concurrency`` each. Peer: the
  in-process executor (``convection engine`` alone) with as many slots
  (workers × concurrency), and the ideal ``jobs × hold / slots``.
* **Overhead per no-op job**: a stack of ``--noops`` ``OS::Heat::None``
  through the queue (one worker) against the in-process executor.
* **stack show under load**: p50/p99 of ``GET /v1/.../stacks/{name}``
  by ``--show-clients`` threads while ``--clients`` threads create
  10-resource stacks, against a ``server --no-engine`` with the engine and
  ``--load-workers`` workers out of process, beside the same server idle,
  and beside the embedded ``convection server`` (engine in its process)
  under the same load.

Usage: .venv/bin/python bench/scale_bench.py [--jobs 2000] [--hold 0.1]
       [--concurrency 16] [--workers 1,2,4] [--noops 1000] [--stacks 64]
       [--clients 16] [--show-clients 2] [--png docs/benchmarks/scale_curve.png]
       [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "convection"]
ADMIN = os.environ.get("CONVECTION_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
LEASE = "30"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextlib.contextmanager
def database() -> Iterator[str]:
    name = f"convection_scale_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    base = ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(ADMIN, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


class Processes:
    """Convection subprocesses on one store, stopped on exit."""

    def __init__(self, url: str, home: Path) -> None:
        self.url = url
        self.home = home
        self.env = {
            **os.environ,
            "CONVECTION_DB": url,
            "CONVECTION_ENGINE_LEASE_SECONDS": LEASE,
            "XDG_DATA_HOME": str(home),
            "HOME": str(home),
            "CONVECTION_TEST_LEDGER": str(home / "ledger"),
        }
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        log = (self.home / f"p{len(self.procs)}.log").open("wb")
        proc = subprocess.Popen([*CLI, *args], env=self.env, stdout=log, stderr=log)
        self.procs.append(proc)
        return proc

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [*CLI, *args], env=self.env, capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            raise RuntimeError(done.stdout + done.stderr)
        return done.stdout

    def stop(self, procs: list[subprocess.Popen[bytes]] | None = None) -> None:
        chosen = self.procs if procs is None else procs
        for proc in chosen:
            if proc.poll() is None:
                proc.terminate()
        for proc in chosen:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs = [p for p in self.procs if p not in chosen]


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu() -> float:
    """CPU time of every PostgreSQL process on this machine (the server's
    backends come and go with connections; the total moves with our load,
    and with anyone else's)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() in ("postgres", "postmaster"):
                    total += cpu_seconds(int(entry.name))
    return total


def status_of(url: str, name: str) -> str:
    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        row = conn.execute(
            "SELECT action, status FROM stacks WHERE name = %s AND deleted_at IS NULL", (name,)
        ).fetchone()
    return "ABSENT" if row is None else f"{row[0]}_{row[1]}"


def reason_of(url: str, name: str) -> str:
    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        row = conn.execute(
            "SELECT r.name, r.status_reason FROM resources r JOIN stacks s ON s.id = r.stack_id "
            "WHERE s.name = %s AND r.status = 'FAILED' LIMIT 1",
            (name,),
        ).fetchone()
    return "" if row is None else f"{row[0]}: {row[1]}"


def timed_create(procs: Processes, templates: list[Path], name: str, timeout: float = 900) -> float:
    """Seconds from the first create call to every stack CREATE_COMPLETE
    (the jobs are split in stacks of at most 1,000 resources, the default
    limit per stack)."""
    names = [f"{name}-{i}" for i in range(len(templates))]
    started = time.perf_counter()
    for stack, template in zip(names, templates, strict=True):
        procs.cli("stack", "create", "-t", str(template), stack)
    deadline = started + timeout
    left = set(names)
    while time.perf_counter() < deadline:
        for stack in list(left):
            state = status_of(procs.url, stack)
            if state == "CREATE_COMPLETE":
                left.discard(stack)
            elif state.endswith("FAILED"):
                raise RuntimeError(f"{stack}: {state}: {reason_of(procs.url, stack)}")
        if not left:
            return time.perf_counter() - started
        time.sleep(0.05)
    raise TimeoutError(name)


PER_STACK = 1000


def templates(path: Path, jobs: int, resource: str) -> list[Path]:
    """Templates of ``jobs`` resources in all, at most PER_STACK each."""
    made = []
    for start in range(0, jobs, PER_STACK):
        lines = ["heat_template_version: 2018-08-31", "resources:"]
        lines += [f"  r{i}: {resource}" for i in range(start, min(jobs, start + PER_STACK))]
        made.append(path.with_name(f"{path.stem}-{start}.yaml"))
        made[-1].write_text("\n".join(lines) + "\n")
    return made


def ledger_templates(path: Path, jobs: int, hold: float) -> list[Path]:
    return templates(
        path, jobs, f"{{type: Convection::Test::Ledger, properties: {{hold_secs: {hold}}}}}"
    )


def none_templates(path: Path, jobs: int) -> list[Path]:
    return templates(path, jobs, "{type: OS::Heat::None}")


#: CPU milliseconds per job, by process kind, per worker count (the figure
#: that does not depend on how many cores the run had).
CPU: dict[int, dict[str, float]] = {}


def curve(args: argparse.Namespace, tmp: Path) -> list[tuple[int, float, float, float]]:
    """(workers, queue seconds, in-process seconds, ideal seconds) per count."""
    rows = []
    template = ledger_templates(tmp / "held.yaml", args.jobs, args.hold)
    for count in args.workers:
        slots = count * args.concurrency
        with database() as url:
            procs = Processes(url, tmp / f"q{count}")
            procs.home.mkdir()
            procs.cli("stack", "list")  # the schema, before processes race for it
            try:
                engine = procs.start("engine", "--workers")
                workers = [
                    procs.start("worker", "--concurrency", str(args.concurrency))
                    for _ in range(count)
                ]
                time.sleep(3)  # procrastinate's schema and the listeners
                before = (cpu_seconds(engine.pid), sum(cpu_seconds(w.pid) for w in workers))
                pg_before = postgres_cpu()
                queued = timed_create(procs, template, f"held{count}")
                per_job = 1000 / args.jobs
                CPU[count] = {
                    "engine": (cpu_seconds(engine.pid) - before[0]) * per_job,
                    "workers": (sum(cpu_seconds(w.pid) for w in workers) - before[1]) * per_job,
                    "PostgreSQL": (postgres_cpu() - pg_before) * per_job,
                }
            finally:
                procs.stop()
        with database() as url:
            procs = Processes(url, tmp / f"l{count}")
            procs.home.mkdir()
            procs.cli("stack", "list")
            try:
                procs.start("engine", "--concurrency", str(slots))
                time.sleep(2)
                local = timed_create(procs, template, f"local{count}")
            finally:
                procs.stop()
        rows.append((count, queued, local, args.jobs * args.hold / slots))
        print(f"  {count} worker(s): queue {queued:.1f} s, in-process {local:.1f} s", flush=True)
    return rows


def noop_overhead(args: argparse.Namespace, tmp: Path) -> tuple[float, float]:
    """Milliseconds per no-op job: (through the queue, in process)."""
    template = none_templates(tmp / "noop.yaml", args.noops)
    results = []
    for workers in (True, False):
        with database() as url:
            procs = Processes(url, tmp / ("nq" if workers else "nl"))
            procs.home.mkdir()
            procs.cli("stack", "list")
            try:
                if workers:
                    procs.start("engine", "--workers")
                    procs.start("worker", "--concurrency", str(args.concurrency))
                else:
                    procs.start("engine", "--concurrency", str(args.concurrency))
                time.sleep(3)
                seconds = timed_create(procs, template, "noop")
            finally:
                procs.stop()
        results.append(seconds * 1000 / args.noops)
    return results[0], results[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_RANDOM = "  v{}: {{type: OS::Heat::RandomString, properties: {{length: 8}}}}\n"
SMALL = "heat_template_version: 2018-08-31\nresources:\n" + "".join(
    _RANDOM.format(i) for i in range(10)
)


class ShowLoad:
    """Creates by ``clients`` threads while ``show_clients`` threads read."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.headers = {"X-Auth-Token": token, "Content-Type": "application/json"}

    def create(self, client: httpx.Client, name: str) -> None:
        body = {"stack_name": name, "template": SMALL}
        client.post(f"{self.base}/stacks", json=body, headers=self.headers).raise_for_status()

    def shows(self, name: str, stop: threading.Event, into: list[float]) -> None:
        with httpx.Client(timeout=30) as client:
            while not stop.is_set():
                t = time.perf_counter()
                client.get(f"{self.base}/stacks/{name}", headers=self.headers).raise_for_status()
                into.append(time.perf_counter() - t)
                time.sleep(0.02)

    def idle(self, name: str, calls: int) -> list[float]:
        out: list[float] = []
        with httpx.Client(timeout=30) as client:
            for _ in range(calls):
                t = time.perf_counter()
                client.get(f"{self.base}/stacks/{name}", headers=self.headers).raise_for_status()
                out.append(time.perf_counter() - t)
                time.sleep(0.02)
        return out

    def loaded(self, name: str, stacks: int, clients: int, show_clients: int) -> list[float]:
        stop = threading.Event()
        samples: list[float] = []
        readers = [
            threading.Thread(target=self.shows, args=(name, stop, samples))
            for _ in range(show_clients)
        ]
        names = iter(f"load-{uuid.uuid4().hex[:8]}" for _ in range(stacks))
        lock = threading.Lock()

        def creator() -> None:
            with httpx.Client(timeout=60) as client:
                while True:
                    with lock:
                        chosen = next(names, None)
                    if chosen is None:
                        return
                    self.create(client, chosen)

        writers = [threading.Thread(target=creator) for _ in range(clients)]
        for t in (*readers, *writers):
            t.start()
        for t in writers:
            t.join()
        stop.set()
        for t in readers:
            t.join()
        return samples


def wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(url)


def show_latency(args: argparse.Namespace, tmp: Path) -> dict[str, tuple[float, float]]:
    """p50/p99 (ms) of stack show: idle, and under load, per arrangement."""
    found: dict[str, tuple[float, float]] = {}
    for label, apart in (("engine and workers apart", True), ("embedded engine", False)):
        with database() as url:
            procs = Processes(url, tmp / ("sa" if apart else "se"))
            procs.home.mkdir()
            procs.cli("stack", "list")
            token = json.loads(
                procs.cli("token", "create", "--project", "bench", "--format", "json")
            )
            port = free_port()
            try:
                server = ["server", "--bind", f"127.0.0.1:{port}"]
                if apart:
                    procs.start(*server, "--no-engine")
                    procs.start("engine", "--workers")
                    for _ in range(args.load_workers):
                        procs.start("worker", "--concurrency", str(args.concurrency))
                else:
                    procs.start(*server)
                wait_http(f"http://127.0.0.1:{port}/healthz")
                time.sleep(2)
                load = ShowLoad(f"http://127.0.0.1:{port}/v1/{token['project']}", token["secret"])
                with httpx.Client(timeout=30) as client:
                    load.create(client, "probe")
                    moved = client.get(f"{load.base}/stacks/probe", headers=load.headers)
                    probe = f"probe/{moved.headers['location'].rsplit('/', 1)[1]}"
                idle = load.idle(probe, args.calls)
                busy = load.loaded(probe, args.stacks, args.clients, args.show_clients)
            finally:
                procs.stop()
        found[f"{label}, idle"] = (pct(idle, 0.5) * 1000, pct(idle, 0.99) * 1000)
        found[f"{label}, under load"] = (pct(busy, 0.5) * 1000, pct(busy, 0.99) * 1000)
    return found


def waits_template(path: Path, count: int) -> Path:
    lines = ["heat_template_version: 2018-08-31", "resources:"]
    for i in range(count):
        lines += [
            f"  h{i}: {{type: OS::Heat::WaitConditionHandle}}",
            f"  w{i}:",
            "    type: OS::Heat::WaitCondition",
            f"    properties: {{handle: {{get_resource: h{i}}}, count: 1, timeout: 600}}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def signal_latency(args: argparse.Namespace, tmp: Path) -> list[float]:
    """Seconds from each signal's HTTP 200 to its wait condition's job
    recording the end (the job's own write, stamped by the worker)."""
    template = waits_template(tmp / "waits.yaml", args.signals)
    with database() as url:
        procs = Processes(url, tmp / "sig")
        procs.home.mkdir()
        procs.cli("stack", "list")
        made = procs.cli("token", "create", "--project", "bench", "--format", "json")
        token = json.loads(made)
        port = free_port()
        try:
            procs.start("server", "--bind", f"127.0.0.1:{port}", "--no-engine")
            procs.start("engine", "--workers")
            procs.start("worker", "--concurrency", str(args.concurrency))
            wait_http(f"http://127.0.0.1:{port}/healthz")
            time.sleep(2)
            base = f"http://127.0.0.1:{port}/v1/bench/stacks/waits"
            headers = {"X-Auth-Token": token["secret"]}
            procs.cli("--project", "bench", "stack", "create", "-t", str(template), "waits")
            until_waiting(url, args.signals)
            sent: dict[str, float] = {}
            with httpx.Client(timeout=30, headers=headers, follow_redirects=True) as client:
                found = client.get(base)
                found.raise_for_status()
                base = f"{base}/{found.json()['stack']['id']}"
                for i in range(args.signals):
                    body = {"status": "SUCCESS", "reason": "bench", "data": "x", "id": "1"}
                    reply = client.post(f"{base}/resources/h{i}/signal", json=body)
                    reply.raise_for_status()
                    sent[f"w{i}"] = time.time()
                    time.sleep(0.05)
            deadline = time.monotonic() + 120
            while status_of(url, "waits") != "CREATE_COMPLETE":
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"waits: {status_of(url, 'waits')}: {reason_of(url, 'waits')}"
                    )
                time.sleep(0.1)
            ended = ended_at(url)
        finally:
            procs.stop()
    return [ended[name] - at for name, at in sent.items()]


def until_waiting(url: str, count: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with psycopg.connect(url.replace("+psycopg", "")) as conn:
            row = conn.execute(
                "SELECT count(*) FROM resources WHERE name LIKE 'w%%' AND current "
                "AND action = 'CREATE' AND status = 'IN_PROGRESS'"
            ).fetchone()
        if row is not None and row[0] == count:
            return
        time.sleep(0.2)
    raise TimeoutError("wait conditions waiting")


def ended_at(url: str) -> dict[str, float]:
    with psycopg.connect(url.replace("+psycopg", "")) as conn:
        rows = conn.execute(
            "SELECT name, updated_at FROM resources WHERE name LIKE 'w%%' AND current"
        ).fetchall()
    return {name: when.timestamp() for name, when in rows}


def plot(rows: list[tuple[int, float, float, float]], jobs: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    ax.plot(counts, [jobs / r[1] for r in rows], "o-", label="convection worker (queue)")
    ax.plot(counts, [jobs / r[2] for r in rows], "s--", label="in-process, same slots")
    ax.plot(counts, [jobs / r[3] for r in rows], ":", label="ideal")
    ax.set_xlabel("workers")
    ax.set_ylabel("jobs per second")
    ax.set_xticks(counts)
    ax.set_title(f"{jobs} jobs holding 100 ms each")
    ax.legend()
    ax.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)


def options() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--hold", type=float, default=0.1)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--noops", type=int, default=1000)
    p.add_argument("--stacks", type=int, default=64)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--show-clients", type=int, default=2)
    p.add_argument("--load-workers", type=int, default=2)
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--signals", type=int, default=50)
    p.add_argument("--png", type=Path, default=ROOT / "docs" / "benchmarks" / "scale_curve.png")
    p.add_argument("--skip", default="", help="parts to skip: curve,noop,show,signal")
    p.add_argument("--quick", action="store_true", help="small sizes, to check it runs")
    args = p.parse_args()
    args.workers = [int(x) for x in args.workers.split(",")]
    if args.quick:
        args.jobs, args.noops, args.stacks, args.calls, args.signals = 200, 100, 16, 20, 10
    args.skip = set(filter(None, args.skip.split(",")))
    return args


def main() -> None:
    args = options()
    print(f"scale_bench on {platform.node()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}")
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as name:
        tmp = Path(name)
        if "curve" not in args.skip:
            print(f"Throughput: {args.jobs} jobs holding {args.hold * 1000:.0f} ms, "
                  f"{args.concurrency} per worker", flush=True)  # fmt: skip
            rows = curve(args, tmp)
            print_curve(rows, args)
            print("\n  CPU ms per job (all of this run's processes; the cores it needs):")
            kinds = list(next(iter(CPU.values())))
            print("  {:>7} {:>10} {:>10} {:>10} {:>7}".format("workers", *kinds, "sum"))
            for count, parts in CPU.items():
                cells = " ".join(f"{v:10.2f}" for v in parts.values())
                print(f"  {count:7d} {cells} {sum(parts.values()):7.2f}")
            plot(rows, args.jobs, args.png)
            print(f"curve written to {args.png}")
        if "noop" not in args.skip:
            queued, local = noop_overhead(args, tmp)
            print(f"\nNo-op jobs ({args.noops} OS::Heat::None), ms per job:")
            print(f"  through the queue (1 worker)  {queued:7.2f}")
            print(f"  in process                    {local:7.2f}")
            print(f"  overhead of the queue         {queued - local:7.2f}  ({queued / local:.1f}x)")
        if "signal" not in args.skip:
            lat = signal_latency(args, tmp)
            print(f"\nSignal to its woken job ({len(lat)} signals, server, engine, worker apart):")
            p50, p99 = pct(lat, 0.5) * 1000, pct(lat, 0.99) * 1000
            print(f"  p50 {p50:.1f} ms   p99 {p99:.1f} ms   max {max(lat) * 1000:.1f} ms")
        if "show" not in args.skip:
            found = show_latency(args, tmp)
            print(f"\nstack show under {args.clients}-client creates of {args.stacks} stacks:")
            print(f"  {'arrangement':42} {'p50 ms':>8} {'p99 ms':>8}")
            for label, (p50, p99) in found.items():
                print(f"  {label:42} {p50:8.1f} {p99:8.1f}")


def print_curve(rows: list[tuple[int, float, float, float]], args: argparse.Namespace) -> None:
    head = ("workers", "queue jobs/s", "in-process jobs/s", "ideal", "speed-up")
    print("\n  {:>7} {:>13} {:>18} {:>8} {:>9}".format(*head))
    first = rows[0][1]
    for count, queued, local, ideal in rows:
        print(
            f"  {count:7d} {args.jobs / queued:13.1f} {args.jobs / local:18.1f} "
            f"{args.jobs / ideal:8.1f} {first / queued:8.2f}x"
        )


if __name__ == "__main__":
    main()
