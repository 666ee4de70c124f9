"""``GET /metrics``: the store's aggregate numbers in Prometheus' text format.

Every scrape reads the store (a few ``GROUP BY`` queries and the process
rows), so the numbers are those of every engine, worker and server sharing
it, not only of this server's process; any one server of a deployment can
be scraped. The metrics come from a :class:`StoreCollector` on a registry
of this app's own (never ``prometheus_client``'s global one, which would
mix in whatever else the process registered and survive the app).

**No authentication**, on purpose: Prometheus' scrapers carry no Heat
token. So the route shows only aggregates: counts of jobs per task queue,
of traversals per kind and state, of workflow executions per state, of
processes per kind and liveness, and the processes' summed counters. It
names no stack, project, workflow, resource, token, host or process id;
``convection status`` on the store shows those to whoever can open it.
Put the port behind a network policy if even the counts are sensitive.

The route is not part of Heat's ``/v1`` or Mistral's ``/v2`` and is left
out of the OpenAPI schema, which describes those APIs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.registry import Collector

from convection.store import PROCESS_KINDS

if TYPE_CHECKING:
    from convection.store import ProcessRecord, Store

PATH = "/metrics"

#: Counters summed over the process rows: metric name (``_total`` is
#: added), the ``stats`` key, and the help line.
_COUNTERS = (
    ("convection_takeups", "takeups", "Traversals taken up by an engine (its own or another's)."),
    ("convection_lease_losses", "lease_losses", "Traversal leases lost while running them."),
    (
        "convection_stale_results",
        "stale_results",
        "Job outcomes not recorded: their traversal was superseded or its lease lost.",
    ),
)


def _stat(rows: list[ProcessRecord], key: str) -> float:
    return float(sum(r.stats.get(key, 0.0) for r in rows))


class StoreCollector(Collector):
    """Reads the store at every scrape; no state of its own."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def collect(self) -> Iterator[Metric]:
        store = self._store
        yield from self._queues(store.queue_depths())
        yield from self._states(store.count_by_state())
        yield from self._processes(store.list_processes(), datetime.now(UTC))

    @staticmethod
    def _queues(depths: dict[str, dict[str, int]]) -> Iterator[Metric]:
        jobs = GaugeMetricFamily(
            "convection_queue_jobs",
            "Jobs in a task queue, by status (todo: waiting; doing: running).",
            labels=["queue", "status"],
        )
        for queue, by_status in sorted(depths.items()):
            for status, n in sorted(by_status.items()):
                jobs.add_metric([queue, status], n)
        yield jobs

    @staticmethod
    def _states(counts: dict[str, dict[str, int]]) -> Iterator[Metric]:
        traversals = GaugeMetricFamily(
            "convection_traversals",
            "Traversals (a stack's operation, a workflow's run) in the store, by kind and state.",
            labels=["kind", "state"],
        )
        for key, by_state in sorted(counts.items()):
            kind = key.removeprefix("traversal:")
            if kind == key:
                continue
            for state, n in sorted(by_state.items()):
                traversals.add_metric([kind, state], n)
        yield traversals
        executions = GaugeMetricFamily(
            "convection_executions", "Workflow executions in the store, by state.", labels=["state"]
        )
        for state, n in sorted(counts.get("execution", {}).items()):
            executions.add_metric([state], n)
        yield executions

    @staticmethod
    def _processes(rows: list[ProcessRecord], now: datetime) -> Iterator[Metric]:
        done, failed = _stat(rows, "jobs_done"), _stat(rows, "jobs_failed")
        jobs = CounterMetricFamily(
            "convection_jobs", "Jobs run to an outcome, summed over processes.", labels=["outcome"]
        )
        jobs.add_metric(["done"], done)
        jobs.add_metric(["failed"], failed)
        yield jobs
        yield SummaryMetricFamily(
            "convection_job_seconds",
            "Time jobs took to run, summed over processes.",
            count_value=int(done + failed),
            sum_value=_stat(rows, "job_seconds_sum"),
        )
        yield SummaryMetricFamily(
            "convection_job_wait_seconds",
            "Time jobs waited between ready and started (queue wait), summed over processes.",
            count_value=int(done + failed),
            sum_value=_stat(rows, "job_wait_seconds_sum"),
        )
        for name, key, doc in _COUNTERS:
            yield CounterMetricFamily(name, doc, value=_stat(rows, key))
        live = Counter((r.kind, "stale" if r.is_stale(now) else "live") for r in rows)
        processes = GaugeMetricFamily(
            "convection_processes",
            "Engines, workers and servers with a row in the store, by kind; stale: no "
            "heartbeat for three beats.",
            labels=["kind", "state"],
        )
        for kind in sorted({*PROCESS_KINDS, *(k for k, _ in live)}):
            for state in ("live", "stale"):
                processes.add_metric([kind, state], live[(kind, state)])
        yield processes


def registry_for(store: Store) -> CollectorRegistry:
    """A private registry holding one :class:`StoreCollector`."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(store))
    return registry


def install(app: FastAPI) -> None:
    """Add ``GET /metrics`` to ``app`` (over ``app.state.stacks.store``)."""
    app.state.metrics = registry_for(app.state.stacks.store)

    def metrics(request: Request) -> Response:
        # A plain def: FastAPI runs it in its thread pool, off the event loop.
        body = generate_latest(request.app.state.metrics)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    app.add_api_route(
        PATH, metrics, methods=["GET"], include_in_schema=False, summary="Prometheus metrics"
    )
