"""Fixtures for multi-host tests: namespaced hosts and a private PostgreSQL cluster.

Everything here needs root, iproute2 and PostgreSQL 15; where any is missing
the tests skip with the reason instead of failing (CI runs as root, so there
they run). The project defines no marker for slow tests, so none is applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from .netns import Host, Hosts, PrivatePostgres, netns_available


@pytest.fixture(autouse=True)
def _need_netns() -> None:
    """Skip every test in this directory when namespaces or PostgreSQL are unavailable."""
    reason = netns_available()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture
def make_hosts() -> Iterator[Callable[[int], list[Host]]]:
    """A factory n -> n fresh hosts; all of them are removed at teardown, even on failure."""
    with ExitStack() as stack:

        def make(count: int) -> list[Host]:
            return stack.enter_context(Hosts(count))

        yield make


@pytest.fixture
def make_private_pg() -> Iterator[Callable[[Sequence[Host] | None], PrivatePostgres]]:
    """A factory for clusters listening on given hosts' gateways (or everywhere for None).

    Make the hosts first when the cluster must listen on exactly their
    gateways; the server binds its addresses when it starts.
    """
    with ExitStack() as stack:

        def make(hosts: Sequence[Host] | None = None) -> PrivatePostgres:
            return stack.enter_context(PrivatePostgres(hosts))

        yield make


@pytest.fixture
def private_pg() -> Iterator[PrivatePostgres]:
    """A cluster listening on every address, so hosts made before or after reach it."""
    with PrivatePostgres() as pg:
        yield pg


def _store_fixtures() -> Any:
    """The store suite's PostgreSQL fixtures (fresh databases per test)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_store_conftest_scale", Path(__file__).parent.parent / "store" / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fresh_postgres_database = _store_fixtures().fresh_postgres_database
