"""Run chaos trials and print what they found.

``python tests/chaos/run.py --trials N --seed S`` runs the trials of seeds
S, S+1, ... S+N-1 (each seed picks an operation, a store, a fault and a
moment: ``harness.Trial.draw``) and prints, per operation x store x fault,
the trials, the passes and the recovery time (from the fault to the
operation's end) p50/p99. ``--replay SEED`` runs one trial again.
Exits 1 if any trial failed, printing its seed and its replay command.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (``q`` in 0..100)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def table(outcomes: Iterable[harness.Outcome]) -> str:
    groups: dict[tuple[str, str, str], list[harness.Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[outcome.trial.key].append(outcome)
    head = f"{'operation':<10} {'store':<11} {'fault':<8} {'trials':>6} {'passes':>6} "
    head += f"{'landed':>6} {'recover p50':>11} {'p99':>7} {'trial s':>7}"
    lines = [head, "-" * len(head)]
    for key in sorted(groups):
        rows = groups[key]
        recovery = [o.recovery for o in rows]
        lines.append(
            f"{key[0]:<10} {key[1]:<11} {key[2]:<8} {len(rows):>6} "
            f"{sum(1 for o in rows if not o.problems):>6} {sum(o.landed for o in rows):>6} "
            f"{percentile(recovery, 50):>10.2f}s {percentile(recovery, 99):>6.2f}s "
            f"{statistics.mean(o.seconds for o in rows):>6.1f}s"
        )
    return "\n".join(lines)


class Runner:
    """Trials with their references, measured once per operation and store."""

    def __init__(self) -> None:
        self.env = harness.main_env()
        self.references: dict[tuple[str, str], harness.Reference] = {}

    def reference(self, operation: str, store: str) -> harness.Reference:
        key = (operation, store)
        if key not in self.references:
            self.references[key] = harness.reference_run(operation, store, self.env)
            ref = self.references[key]
            print(f"crash-free {operation} on {store}: {ref.seconds:.2f}s", flush=True)
        return self.references[key]

    def run(self, seed: int) -> harness.Outcome:
        trial = harness.Trial.draw(seed)
        reference = self.reference(trial.operation, trial.store)
        try:
            return harness.run_trial(trial, reference, self.env)
        except Exception as exc:  # a trial that could not even run is a failure
            return harness.Outcome(trial, 0.0, [f"{type(exc).__name__}: {exc}"], 0.0, 0.0, False)


def report(outcome: harness.Outcome) -> str:
    t = outcome.trial
    head = f"seed {t.seed}: {t.operation} {t.store} {t.fault} at {outcome.moment:.2f}s"
    if not outcome.problems:
        return f"{head}: pass ({outcome.seconds:.1f}s)"
    return (
        f"{head}: FAIL: {'; '.join(outcome.problems)}\n  replay: {harness.replay_command(t.seed)}"
    )


def run(seeds: Iterable[int], *, verbose: bool = True) -> list[harness.Outcome]:
    runner = Runner()
    outcomes = []
    for seed in seeds:
        outcome = runner.run(seed)
        outcomes.append(outcome)
        if verbose or outcome.problems:
            print(report(outcome), flush=True)
    return outcomes


def matching(
    first: int, count: int, operation: str | None, store: str | None, fault: str | None
) -> list[int]:
    """The first ``count`` seeds from ``first`` whose trials match the filters."""
    seeds: list[int] = []
    seed = first
    while len(seeds) < count:
        t = harness.Trial.draw(seed)
        if (operation or t.operation, store or t.store, fault or t.fault) == t.key:
            seeds.append(seed)
        seed += 1
    return seeds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0, help="the first trial's seed")
    parser.add_argument("--replay", type=int, help="run the trial of this seed alone")
    parser.add_argument("--quiet", action="store_true", help="print failing trials only")
    parser.add_argument("--operation", choices=harness.OPERATIONS, help="only these trials")
    parser.add_argument("--store", choices=harness.STORES, help="only these trials")
    parser.add_argument("--fault", choices=harness.FAULTS, help="only these trials")
    args = parser.parse_args(argv)
    reason = harness.postgres_available()
    if reason is not None:
        print(f"PostgreSQL is needed: {reason}", file=sys.stderr)
        return 2
    if args.replay is not None:
        seeds: Sequence[int] = [args.replay]
    else:
        seeds = matching(args.seed, args.trials, args.operation, args.store, args.fault)
    started = time.monotonic()
    outcomes = run(seeds, verbose=not args.quiet)
    print()
    print(table(outcomes))
    failed = [o for o in outcomes if o.problems]
    print(f"\n{len(outcomes)} trials, {len(failed)} failed, {time.monotonic() - started:.0f}s")
    for outcome in failed:
        print(f"  seed {outcome.trial.seed}: {harness.replay_command(outcome.trial.seed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
