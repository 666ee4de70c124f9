"""Capacity arithmetic and cooldown, Heat's rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from convection.model.groups.scaling import (
    NoActionRequired,
    calculate_new_capacity,
    check_scaling_allowed,
    finished_scaling,
)

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("current", "adjustment", "kind", "step", "expected"),
    [
        (2, 1, "change_in_capacity", None, 3),
        (2, -5, "change_in_capacity", None, 0),
        (2, 7, "exact_capacity", None, 7),
        (2, 50, "percent_change_in_capacity", None, 3),
        (10, 33, "percent_change_in_capacity", None, 13),  # 3.3 rounds down
        (2, 10, "percent_change_in_capacity", None, 3),  # 0.2 rounds up to 1
        (2, -10, "percent_change_in_capacity", None, 1),  # -0.2 rounds to -1
        (10, -33, "percent_change_in_capacity", None, 7),  # -3.3 rounds to -3
        (10, 10, "percent_change_in_capacity", 4, 14),  # min step
        (10, -10, "percent_change_in_capacity", 4, 6),
        (10, 10, "PercentChangeInCapacity", None, 11),
        (5, 100, "exact_capacity", None, 20),  # clamped to max
    ],
)
def test_new_capacity(
    current: int, adjustment: float, kind: str, step: int | None, expected: int
) -> None:
    assert calculate_new_capacity(current, adjustment, kind, step, 0, 20) == expected


@given(
    current=st.integers(0, 50),
    adjustment=st.integers(-200, 200),
    kind=st.sampled_from(["change_in_capacity", "exact_capacity", "percent_change_in_capacity"]),
    lo=st.integers(0, 10),
    span=st.integers(0, 40),
)
def test_new_capacity_is_always_within_bounds(
    current: int, adjustment: int, kind: str, lo: int, span: int
) -> None:
    assert lo <= calculate_new_capacity(current, adjustment, kind, None, lo, lo + span) <= lo + span


def test_cooldown_blocks_until_it_ends() -> None:
    state = finished_scaling({}, 60, "change_in_capacity : 1", NOW)
    assert state["scaling_in_progress"] is False
    with pytest.raises(NoActionRequired, match="due to cooldown, cooldown 60"):
        check_scaling_allowed(state, 60, NOW + timedelta(seconds=30), "policy")
    allowed = check_scaling_allowed(state, 60, NOW + timedelta(seconds=61), "policy")
    assert allowed["scaling_in_progress"] is True


def test_scaling_in_progress_blocks() -> None:
    with pytest.raises(NoActionRequired) as info:
        check_scaling_allowed({"scaling_in_progress": True}, 0, NOW, "policy")
    assert str(info.value) == (
        "The resource policy could not perform scaling action: due to scaling activity"
    )


def test_no_size_change_starts_no_cooldown_and_a_running_one_is_not_shortened() -> None:
    assert "cooldown_end" not in finished_scaling({}, 60, "r", NOW, size_changed=False)
    long = finished_scaling({}, 600, "r", NOW)
    short = finished_scaling(long, 10, "r", NOW)
    assert short["cooldown_end"].keys() == long["cooldown_end"].keys()
    assert check_scaling_allowed({}, None, NOW, "p") == {"scaling_in_progress": True}
