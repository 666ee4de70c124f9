"""Listings of workflow rows with Mistral's filter operators and mixed
sort directions, on every store: the same rows in the same order, and
marker paging that neither skips nor repeats a row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from operator import attrgetter
from typing import Any

import pytest

from convection.store import ExecutionRecord, Store, Where

T0 = datetime(2030, 1, 1, tzinfo=UTC)
#: (id, workflow_name, state, state_info, minutes after T0)
ROWS = [
    ("e0", "alpha", "SUCCESS", None, 0),
    ("e1", "alpha", "ERROR", "boom: disk", 1),
    ("e2", "beta", "RUNNING", None, 2),
    ("e3", "beta", "ERROR", "Boom", 3),
    ("e4", "gamma", "SUCCESS", None, 4),
    ("e5", "alpha", "PAUSED", None, 5),
    ("e6", "gamma", "ERROR", "no boom", 6),
]


@pytest.fixture
def rows(store: Store) -> Store:
    for eid, name, state, info, minutes in ROWS:
        store.workflows.create_execution(
            ExecutionRecord(
                id=eid,
                project="p",
                workflow_id=f"w-{name}",
                workflow_name=name,
                state=state,
                state_info=info,
                created_at=T0 + timedelta(minutes=minutes),
            )
        )
    store.workflows.create_execution(
        ExecutionRecord(id="other", project="q", workflow_id="w", workflow_name="alpha")
    )
    return store


def _ids(store: Store, **kw: Any) -> list[str]:
    return [r.id for r in store.workflows.list_executions("p", **kw)]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"state": Where("neq", "ERROR")}, ["e0", "e2", "e4", "e5"]),
        ({"state": Where("nin", ["ERROR", "SUCCESS"])}, ["e2", "e5"]),
        ({"state": ["ERROR", "PAUSED"]}, ["e1", "e3", "e5", "e6"]),
        ({"workflow_name": Where("gt", "alpha")}, ["e2", "e3", "e4", "e6"]),
        ({"workflow_name": Where("lte", "beta")}, ["e0", "e1", "e2", "e3", "e5"]),
        # case-sensitive on every database; a NULL column matches nothing
        ({"state_info": Where("has", "boom")}, ["e1", "e6"]),
        ({"state_info": Where("neq", "Boom")}, ["e1", "e6"]),
        ({"created_at": Where("gte", "2030-01-01 00:04:00")}, ["e4", "e5", "e6"]),
        ({"created_at": Where("lt", "2030-01-01T00:02:00+00:00")}, ["e0", "e1"]),
        ({"state": Where("eq", "ERROR"), "workflow_name": Where("neq", "beta")}, ["e1", "e6"]),
    ],
)
def test_operators_filter_in_the_query(
    rows: Store, where: dict[str, Any], expected: list[str]
) -> None:
    assert _ids(rows, filters=where) == expected


def test_bad_filters_name_their_field(rows: Store) -> None:
    with pytest.raises(ValueError, match="created_at"):
        _ids(rows, filters={"created_at": Where("gt", "yesterday")})
    with pytest.raises(ValueError, match="'has'"):
        _ids(rows, filters={"created_at": Where("has", "2030")})
    with pytest.raises(ValueError, match="operator"):
        _ids(rows, filters={"state": Where("like", "E%")})


@pytest.mark.parametrize(
    ("keys", "dirs"),
    [
        (["workflow_name", "created_at"], ["asc", "desc"]),
        (["workflow_name", "created_at"], ["desc", "asc"]),
        (["state", "workflow_name", "created_at"], ["desc", "asc", "desc"]),
        (["created_at"], ["desc"]),
    ],
)
def test_mixed_directions_page_by_marker(rows: Store, keys: list[str], dirs: list[str]) -> None:
    whole = rows.workflows.list_executions("p", sort_keys=keys, sort_dirs=dirs)
    expected = list(whole)  # a reference order: stable sorts, from the last key
    for key, direction in reversed(list(zip(keys, dirs, strict=True))):
        expected.sort(key=attrgetter(key), reverse=direction == "desc")
    assert [r.id for r in whole] == [r.id for r in expected]
    paged: list[str] = []
    marker = None
    while True:
        page = rows.workflows.list_executions(
            "p", sort_keys=keys, sort_dirs=dirs, limit=2, marker=marker
        )
        paged += [r.id for r in page]
        if len(page) < 2:
            break
        marker = page[-1].id
    assert paged == [r.id for r in whole]
