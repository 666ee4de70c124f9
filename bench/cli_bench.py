"""CLI startup benchmark: ``convection`` beside a bare Typer app and ``openstack``.

Each row is one command run as a user runs it, in a process of its own,
and its figure is the CPU time of that whole process (user + system, from
``os.wait4``): interpreter start, imports, parsing, the work and the exit.
CPU rather than wall time because on a shared machine the CPU a process
spends moves far less than the time it takes.

Rows:
  bare Typer app --help   a two-command Typer app written to a temp file:
                          the floor any Typer CLI with rich help pays
  openstack --help        python-openstackclient, for reference
  convection --help       the root's help (every command listed)
  convection CMD --help   each top-level command and group
  convection config show  the settings and their sources (no store opened)
  convection stack list   on an SQLite store of --stacks stacks (default
                          100), each created from a one-resource
                          OS::Heat::None template and run to
                          CREATE_COMPLETE in the setup

Every command runs once untimed (caches warm), then --runs times (default
5), the rows taking turns; the figure is the best run. Targets, as ratios
to the bare Typer app's --help in the same run: every --help and
``config show`` at most 1.5x, ``stack list`` at most 3x. The last line
says which heavy packages ``convection --help`` imports (``-X
importtime``; none is the target, tests/cli/test_startup.py enforces it).

Children run with no CONVECTION_* variable but a CONVECTION_CONFIG that
names a missing file, so the user's own settings and store stay out.

Usage: .venv/bin/python bench/cli_bench.py [--runs 5] [--stacks 100]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent

BARE_APP = '''\
import typer

app = typer.Typer(add_completion=False)


@app.command()
def hello(name: str) -> None:
    """Say hello."""
    print(f"hello {name}")


@app.command()
def bye(name: str) -> None:
    """Say goodbye."""
    print(f"bye {name}")


if __name__ == "__main__":
    app()
'''

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  nothing:
    type: OS::Heat::None
"""

#: Target ratios to the bare Typer app's --help.
HELP_TARGET = 1.5
LIST_TARGET = 3.0

#: What ``convection --help`` must not import (as tests/cli/test_startup.py).
HEAVY = (
    "convection.convergence",
    "convection.kernel",
    "convection.hot",
    "convection.model",
    "convection.plan",
    "convection.store",
    "convection.service",
    "convection.api",
    "sqlalchemy",
    "yaql",
    "jinja2",
    "fastapi",
    "uvicorn",
    "pydantic",
    "httpx",
    "asyncssh",
)


@dataclass(frozen=True, slots=True)
class Row:
    label: str
    argv: list[str]
    #: Ratio to the bare app's --help; None for the reference rows.
    target: float | None


def convection() -> list[str]:
    script = BIN / "convection"
    return [str(script)] if script.exists() else [sys.executable, "-m", "convection"]


def child_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVECTION_")}
    env["CONVECTION_CONFIG"] = str(tmp / "absent.toml")
    return env


def make_store(db: Path, stacks: int) -> str:
    """``stacks`` complete stacks of one OS::Heat::None each."""
    from convection.model import StackInputs
    from convection.service import Stacks
    from convection.store import open_store

    url = f"sqlite:///{db}"
    service = Stacks(open_store(url))
    try:
        inputs = StackInputs.from_text(TEMPLATE)
        for i in range(stacks):
            service.create("default", f"stack-{i:04d}", inputs)
        service.run_engine()
        states = {s["stack_status"] for s in service.list("default")}
        assert states == {"CREATE_COMPLETE"}, states
    finally:
        service.store.close()
    return url


def cpu_seconds(argv: list[str], env: dict[str, str]) -> float:
    """User + system CPU of one run of ``argv``, which must exit 0."""
    child = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}: {err.decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime


def heavy_imports(env: dict[str, str]) -> list[str]:
    """Top-level heavy packages ``convection --help`` imports."""
    entry = "from convection.cli.main import main; main()"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", entry, "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    found = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            found |= {h for h in HEAVY if name == h or name.startswith(h + ".")}
    return sorted(found)


def rows(bare: Path, url: str, stacks: int) -> list[Row]:
    from convection.cli.main import COMMANDS  # the root's table: light to import

    cli = convection()
    out = [Row("bare Typer app --help", [sys.executable, str(bare), "--help"], None)]
    openstack = BIN / "openstack"
    if openstack.exists() or shutil.which("openstack"):
        out.append(Row("openstack --help", [str(openstack), "--help"], None))
    out.append(Row("convection --help", [*cli, "--help"], HELP_TARGET))
    out += [Row(f"convection {n} --help", [*cli, n, "--help"], HELP_TARGET) for n in COMMANDS]
    out.append(Row("convection config show", [*cli, "config", "show"], HELP_TARGET))
    out.append(
        Row(
            f"convection stack list ({stacks} stacks)",
            [*cli, "--db", url, "stack", "list"],
            LIST_TARGET,
        )
    )
    return out


def table(measured: list[tuple[Row, float]]) -> list[str]:
    base = measured[0][1]
    header = ("command", "CPU s", "x bare", "target", "verdict")
    body = [header]
    for row, seconds in measured:
        ratio = seconds / base
        if row.target is None:
            target, verdict = "-", "-"
        else:
            target = f"<= {row.target:.1f}x"
            verdict = "met" if ratio <= row.target else "MISSED"
        body.append((row.label, f"{seconds:.3f}", f"{ratio:.2f}x", target, verdict))
    widths = [max(len(line[c]) for line in body) for c in range(len(header))]
    lines = []
    for n, line in enumerate(body):
        first = line[0].ljust(widths[0])
        rest = (cell.rjust(w) for cell, w in zip(line[1:], widths[1:], strict=True))
        lines.append("  ".join([first, *rest]))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="best of N runs (default: 5)")
    parser.add_argument(
        "--stacks", type=int, default=100, help="stacks in the store (default: 100)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cli-bench-") as name:
        tmp = Path(name)
        bare = tmp / "bare_typer.py"
        bare.write_text(BARE_APP, encoding="utf-8")
        url = make_store(tmp / "stacks.db", args.stacks)
        env = child_env(tmp)
        plan = rows(bare, url, args.stacks)
        best = {row.label: float("inf") for row in plan}
        for row in plan:  # untimed: caches warm
            cpu_seconds(row.argv, env)
        for _ in range(args.runs):
            for row in plan:
                best[row.label] = min(best[row.label], cpu_seconds(row.argv, env))
        heavy = heavy_imports(env)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"# Python {platform.python_version()}, {os.cpu_count()} cores, load average {load}; "
        f"CPU seconds (user + sys) of the whole process, best of {args.runs}"
    )
    measured = [(row, best[row.label]) for row in plan]
    for line in table(measured):
        print(line)
    print()
    print(f"heavy packages imported by `convection --help`: {', '.join(heavy) or 'none'}")
    missed = [row.label for row, s in measured if row.target and s / measured[0][1] > row.target]
    print(f"targets missed: {', '.join(missed) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
