"""How long ``workflow create`` spends parsing and validating a workflow.

A micro-benchmark, not a test. It writes direct workflows of 50, 500 and
5,000 tasks the way Mistral users write them (a chain of steps with inline
parameters, ``publish``, guarded transitions, ``on-error`` to a shared
handler, ``retry`` and ``timeout`` on some steps, ``with-items`` with
``concurrency`` on others, a ``join`` at the end, ``task-defaults``) and
times, in process, the best of N runs of:

* **load**: the text loaded alone (``hot.load``), the floor any YAML tool pays;
* **parse**: ``parse_workflows`` end to end: load, every key's check,
  expression syntax, transitions, start tasks, joins.

Every run parses a text of its own (its expressions differ), so what the
expression checker remembers of one run does not speed up the next.

The target (issue 14) is 500 tasks well under 0.2 s. For scale, Mistral's
jsonschema validation costs about 1.2 s of CPU per spec object: minutes
for the same workflows.

Usage::

    .venv/bin/python bench/workflow_parse_bench.py [--sizes 50,500,5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

from convection.common import Limits
from convection.hot import load
from convection.workflows import parse_workflows

#: Large enough for the 5,000-task document (about 1.3 MB).
_LIMITS = Limits(max_template_size=16 * 1024 * 1024)


def _task(i: int, size: int, salt: int) -> str:
    following = f"step_{i + 1}" if i + 1 < size - 2 else "finish"
    lines = [f"    step_{i}:"]
    if i % 5 == 0:
        lines += [
            "      with-items: host in <% $.hosts %>",
            "      concurrency: 4",
            "      action: std.echo output=<% $.host %>",
        ]
    else:
        lines.append(f'      action: std.echo output="step {i}" n={i}')
    if i % 3 == 0:
        lines += ["      retry:", "        count: 3", "        delay: 5"]
        lines.append("        break-on: <% $.fatal %>")
    if i % 4 == 0:
        lines.append("      timeout: 60")
    lines += [
        "      publish:",
        f"        result_{i}: <% task().result.r{salt} %>",
        "      on-success:",
        f"        - {following}: <% $.ok{salt} %>",
        f"        - handle_error: <% not $.ok{salt} %>",
        "      on-error:",
        "        - handle_error",
    ]
    return "\n".join(lines)


def workflow_text(size: int, salt: int = 0) -> str:
    """``salt`` changes every expression, so that no run reuses what an
    earlier one learnt about the same strings."""
    head = [
        "version: '2.0'",
        "deploy:",
        "  description: a long chain of steps",
        "  input:",
        "    - hosts",
        "    - ok: true",
        "  task-defaults:",
        "    retry: count=2 delay=1",
        "  output:",
        "    last: <% $.result_0 %>",
        "  tasks:",
    ]
    steps = [_task(i, size, salt) for i in range(size - 2)]
    tail = [
        "    finish:",
        "      join: all",
        "      action: std.noop",
        "    handle_error:",
        "      action: std.echo output=<% $.host %>",
        '      on-complete: fail msg="a step failed"',
    ]
    return "\n".join([*head, *steps, *tail]) + "\n"


def best(texts: list[str], work: Callable[[str], object]) -> float:
    """The best time of ``work``, once on each text."""
    times = []
    for text in texts:
        gc.collect()
        start = time.perf_counter()
        work(text)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="50,500,5000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"{'tasks':>6} {'bytes':>9} {'load':>9} {'parse':>9} {'per task':>10}")
    for size in (int(s) for s in args.sizes.split(",")):
        text = workflow_text(size)
        specs, diags = parse_workflows(text, "bench.yaml", limits=_LIMITS)
        if diags.has_errors or len(specs[0].tasks) != size:
            raise SystemExit("\n".join(str(d) for d in diags.errors) or "tasks missing")
        texts = [workflow_text(size, run) for run in range(1, args.runs + 1)]
        load_s = best(texts, lambda t: load(t, "bench.yaml", limits=_LIMITS))
        parse_s = best(texts, lambda t: parse_workflows(t, "bench.yaml", limits=_LIMITS))
        print(
            f"{size:>6} {len(text):>9} {load_s * 1000:>7.1f}ms {parse_s * 1000:>7.1f}ms "
            f"{parse_s / size * 1e6:>8.1f}µs"
        )


if __name__ == "__main__":
    main()
