"""Batch arithmetic for rolling updates and batched creates, exactly Heat's.

A rolling update moves a group from its current size to a target size while
giving every member the new definition, a batch at a time. Heat's rule for
one batch (``heat/scaling/rolling_update.py``)::

    effective batch  = min(max_batch_size, max(target - up_to_date, 0))
    effective minimum = min(min_in_service, target, current)
    new size = effective batch + max(min(current, target - effective batch),
                                     effective minimum)

so the group temporarily grows when keeping ``min_in_service`` members
requires it. The two group families count differently between batches:
ResourceGroup discounts the temporary members it created (they are removed
again, not "updated"), AutoScalingGroup does not. Both are kept, each under
the name of the Heat class it copies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

TIMEOUT_MESSAGE = "The current update policy will result in stack update timeout."


@dataclass(frozen=True, slots=True)
class Batch:
    """One step: the group's size after it, and how many members may take
    the new definition in it (new members count)."""

    capacity: int
    updates: int


def needs_update(target: int, current: int, up_to_date: int) -> bool:
    """More batches to do? Done only when everyone is up to date and the
    group has its target size."""
    return not (up_to_date >= current == target)


def next_batch(
    target: int, current: int, up_to_date: int, batch_size: int, min_in_service: int
) -> Batch:
    """Heat's ``next_batch``."""
    if up_to_date > current:
        raise ValueError(f"{up_to_date} members up to date of only {current}")
    min_size = min(min_in_service, target, current)
    batch = min(batch_size, max(target - up_to_date, 0))
    return Batch(batch + max(min(current, target - batch), min_size), batch)


def resource_group_batches(
    target: int, current: int, batch_size: int, min_in_service: int
) -> Iterator[Batch]:
    """``ResourceGroup._get_batches``: the temporary extra members a batch
    created are not counted as updated (the next batch removes them)."""
    updated = 0
    while needs_update(target, current, updated):
        step = next_batch(target, current, updated, batch_size, min_in_service)
        yield step
        updated += step.updates - max(step.capacity - max(current, target), 0)
        current = step.capacity


def scaling_group_batches(capacity: int, batch_size: int, min_in_service: int) -> Iterator[Batch]:
    """``InstanceGroup._get_batches`` (AutoScalingGroup's rolling_updates):
    the size stays the same overall; every created or changed member counts."""
    current, updated = capacity, 0
    while needs_update(capacity, current, updated):
        step = next_batch(capacity, current, updated, batch_size, min_in_service)
        yield step
        current = step.capacity
        updated += step.updates


def batch_create_batches(target: int, batch_size: int) -> list[Batch]:
    """``batch_create``: Heat runs the rolling update from an empty group
    with ``min_in_service`` 0, so each batch adds up to ``batch_size``."""
    return list(resource_group_batches(target, 0, batch_size, 0))


def update_timeout(batches: int, pause_seconds: float, stack_timeout: float) -> float:
    """Seconds left for the member updates once every pause between batches
    is spent; raises :class:`ValueError` with Heat's text when the pauses
    alone would reach the stack timeout."""
    pauses = pause_seconds * max(batches - 1, 0)
    if pauses >= stack_timeout:
        raise ValueError(TIMEOUT_MESSAGE)
    return stack_timeout - pauses
