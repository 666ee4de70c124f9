"""Run every atheris harness for a fixed time and print what each did.

    python tests/fuzz/run.py [--seconds 60] [--only hot,yaql] [--artifacts DIR]

Each harness runs in a process of its own over a seed corpus written to a
temporary directory from the fixtures. A crash (an unclean outcome, a
timeout, running out of memory) is written to the artifacts directory,
and the harness starts again for the time left, so one crash does not end
its run. Exits 1 if any harness crashed.
"""

from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESSES = ("hot", "environment", "mistral", "yaql", "jinja")
#: libFuzzer's flags for every harness: inputs as large as the fixtures,
#: one input may take at most this many seconds (a hang is a crash).
FLAGS = ("-max_len=65536", "-timeout=20", "-rss_limit_mb=3072", "-print_final_stats=1")
CRASH_PREFIXES = ("crash-", "timeout-", "oom-", "leak-")
_EXECUTED = re.compile(r"^stat::number_of_executed_units:\s*(\d+)", re.M)
_PROGRESS = re.compile(r"^#(\d+)\s", re.M)


@dataclass
class Result:
    name: str
    executions: int = 0
    seconds: float = 0.0
    crashes: int = 0
    restarts: int = 0

    @property
    def rate(self) -> float:
        return self.executions / self.seconds if self.seconds else 0.0


def executions_of(output: str) -> int:
    """What libFuzzer says it ran: its final stats, or else its last progress
    line (a crash ends it before the stats)."""
    found = _EXECUTED.findall(output)
    if found:
        return int(found[-1])
    progress = _PROGRESS.findall(output)
    return int(progress[-1]) if progress else 0


def run_one(name: str, seconds: float, artifacts: Path, work: Path) -> Result:
    sys.path.insert(0, str(HERE))
    harness = importlib.import_module(f"fuzz_{name}")
    from _fuzzlib import write_seeds

    corpus = work / name
    write_seeds(harness, corpus)
    out = artifacts / name
    out.mkdir(parents=True, exist_ok=True)
    result = Result(name)
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) >= 2:
        command = [
            sys.executable,
            str(HERE / f"fuzz_{name}.py"),
            str(corpus),
            f"-max_total_time={int(left)}",
            f"-artifact_prefix={out}/",
            *FLAGS,
        ]
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, errors="replace")
        result.seconds += time.monotonic() - started
        result.executions += executions_of(done.stderr)
        if done.returncode == 0:
            break
        result.restarts += 1
        (out / f"log-{result.restarts}.txt").write_text(done.stderr[-20000:])
    result.crashes = sum(1 for p in out.iterdir() if p.name.startswith(CRASH_PREFIXES))
    return result


def table(results: list[Result]) -> str:
    rows = [("harness", "executions", "exec/s", "crashes")]
    rows += [(r.name, str(r.executions), f"{r.rate:.0f}", str(r.crashes)) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for i, row in enumerate(rows):
        numbers = zip(row[1:], widths[1:], strict=True)
        cells = [row[0].ljust(widths[0]), *(c.rjust(w) for c, w in numbers)]
        lines.append("  ".join(cells))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="per harness (default 60)")
    parser.add_argument("--only", default="", help="comma-separated harness names")
    parser.add_argument("--artifacts", type=Path, default=None, help="where crashes go")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(HARNESSES)
    unknown = sorted(set(names) - set(HARNESSES))
    if unknown:
        parser.error(f"unknown harness {unknown}; there are {list(HARNESSES)}")
    artifacts = args.artifacts or Path(tempfile.mkdtemp(prefix="convection-fuzz-"))
    results = []
    with tempfile.TemporaryDirectory(prefix="convection-corpus-") as work:
        for name in names:
            print(f"fuzzing {name} for {args.seconds:g} s ...", file=sys.stderr, flush=True)
            results.append(run_one(name, args.seconds, artifacts, Path(work)))
    print(table(results))
    crashed = sum(r.crashes for r in results)
    if crashed:
        print(f"\n{crashed} crash(es); inputs and logs in {artifacts}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
