"""Batch arithmetic, checked against worked examples from Heat's own unit
tests' shapes and against invariants with hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from convection.model.groups.rolling import (
    TIMEOUT_MESSAGE,
    Batch,
    batch_create_batches,
    needs_update,
    next_batch,
    resource_group_batches,
    scaling_group_batches,
    update_timeout,
)


def pairs(batches: list[Batch]) -> list[tuple[int, int]]:
    return [(b.capacity, b.updates) for b in batches]


def test_next_batch_grows_to_keep_min_in_service() -> None:
    # 4 members, keep 4 in service, replace 2 at a time: grow to 6 first.
    assert next_batch(4, 4, 0, 2, 4) == Batch(6, 2)


def test_next_batch_without_min_in_service_keeps_size() -> None:
    assert next_batch(4, 4, 0, 2, 0) == Batch(4, 2)


def test_next_batch_refuses_more_updated_than_current() -> None:
    with pytest.raises(ValueError):
        next_batch(4, 2, 3, 1, 0)


@pytest.mark.parametrize(
    ("target", "current", "batch", "min_in_service", "expected"),
    [
        # worked by hand from Heat's formulas; the first batch's temporary
        # members do not count as updated, so min_in_service costs batches
        (10, 10, 1, 0, [(10, 1)] * 10),
        (10, 10, 3, 0, [(10, 3), (10, 3), (10, 3), (10, 1)]),
        (10, 10, 3, 10, [(13, 3)] * 4 + [(11, 1), (10, 0)]),
        (10, 10, 3, 8, [(11, 3), (11, 3), (11, 3), (10, 2)]),
        (10, 10, 3, 9, [(12, 3)] * 4 + [(10, 0)]),
        (10, 5, 3, 0, [(8, 3), (10, 3), (10, 3), (10, 1)]),
        (5, 10, 3, 0, [(5, 3), (5, 2)]),
        (0, 5, 3, 0, [(0, 0)]),
        (3, 0, 2, 0, [(2, 2), (3, 1)]),
    ],
)
def test_resource_group_batches(
    target: int, current: int, batch: int, min_in_service: int, expected: list[tuple[int, int]]
) -> None:
    assert pairs(list(resource_group_batches(target, current, batch, min_in_service))) == expected


def test_batch_create_adds_batch_size_each_time() -> None:
    assert pairs(batch_create_batches(5, 2)) == [(2, 2), (4, 2), (5, 1)]
    assert batch_create_batches(0, 3) == []


def test_scaling_group_batches_keep_capacity_and_count_every_update() -> None:
    assert pairs(list(scaling_group_batches(4, 2, 0))) == [(4, 2), (4, 2)]
    assert pairs(list(scaling_group_batches(3, 1, 3))) == [(4, 1), (4, 1), (4, 1), (3, 0)]


@given(
    target=st.integers(0, 40),
    current=st.integers(0, 40),
    batch=st.integers(1, 12),
    min_in_service=st.integers(0, 45),
)
def test_resource_group_batches_end_at_target_and_keep_service(
    target: int, current: int, batch: int, min_in_service: int
) -> None:
    batches = list(resource_group_batches(target, current, batch, min_in_service))
    assert len(batches) <= target + current + 2  # terminates, linearly
    if batches:
        assert batches[-1].capacity == target
    size = current
    for step in batches:
        # never fewer old-or-new members than Heat's effective minimum
        assert step.capacity - step.updates >= min(min_in_service, target, size) - step.updates
        assert 0 <= step.updates <= batch
        size = step.capacity
    assert not needs_update(target, size, target) or target != size


@given(capacity=st.integers(0, 40), batch=st.integers(1, 12), mis=st.integers(0, 45))
def test_scaling_group_batches_update_every_member(capacity: int, batch: int, mis: int) -> None:
    batches = list(scaling_group_batches(capacity, batch, mis))
    assert sum(b.updates for b in batches) >= capacity
    if batches:
        assert batches[-1].capacity == capacity


def test_update_timeout_refuses_pauses_as_long_as_the_stack_timeout() -> None:
    assert update_timeout(4, 10, 3600) == 3570
    assert update_timeout(1, 5000, 3600) == 3600  # one batch: no pause
    with pytest.raises(ValueError, match=TIMEOUT_MESSAGE):
        update_timeout(3, 1800, 3600)
    assert TIMEOUT_MESSAGE == "The current update policy will result in stack update timeout."
