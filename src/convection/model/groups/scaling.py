"""AutoScalingGroup and ScalingPolicy arithmetic: the new capacity and the
cooldown, Heat's rules (``heat/scaling/scalingutil.py``, ``cooldown.py``).

Cooldown state is a small JSON map kept by the resource (Heat keeps it in
resource metadata)::

    {"scaling_in_progress": bool, "cooldown_end": {ISO time: reason}}

Times are ISO 8601 strings in UTC, compared as strings, as Heat compares
them; the caller passes "now", so these functions stay pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

EXACT_CAPACITY = "exact_capacity"
CHANGE_IN_CAPACITY = "change_in_capacity"
PERCENT_CHANGE_IN_CAPACITY = "percent_change_in_capacity"
ADJUSTMENT_TYPES = (CHANGE_IN_CAPACITY, EXACT_CAPACITY, PERCENT_CHANGE_IN_CAPACITY)
#: The CloudFormation spellings Heat also accepts.
CFN_ADJUSTMENT_TYPES = {
    "ExactCapacity": EXACT_CAPACITY,
    "ChangeInCapacity": CHANGE_IN_CAPACITY,
    "PercentChangeInCapacity": PERCENT_CHANGE_IN_CAPACITY,
}


class NoActionRequired(Exception):
    """The signal is accepted but changes nothing (Heat's ``NoActionRequired``:
    the resource stays as it is and the event says why)."""

    def __init__(self, resource: str, reason: str) -> None:
        self.resource = resource
        self.reason = reason
        super().__init__(f"The resource {resource} could not perform scaling action: {reason}")


def calculate_new_capacity(
    current: int,
    adjustment: float,
    adjustment_type: str,
    min_adjustment_step: int | None,
    minimum: int,
    maximum: int,
) -> int:
    """The capacity after an adjustment, clamped to ``[minimum, maximum]``.

    A percentage of less than one member rounds away from zero (so +1% of
    a small group still adds one), a larger one rounds toward zero, and
    ``min_adjustment_step`` is the least a percentage may move.
    """
    kind = CFN_ADJUSTMENT_TYPES.get(adjustment_type, adjustment_type)
    if kind == CHANGE_IN_CAPACITY:
        new = current + adjustment
    elif kind == EXACT_CAPACITY:
        new = adjustment
    else:
        new = current + _percent_step(current, adjustment, min_adjustment_step)
    if new > maximum:
        return maximum
    if new < minimum:
        return minimum
    return int(new)


def _percent_step(current: int, percent: float, min_step: int | None) -> int:
    delta = current * percent / 100.0
    if math.fabs(delta) < 1.0:
        rounded = int(math.ceil(delta) if delta > 0.0 else math.floor(delta))
    else:
        rounded = int(math.floor(delta) if delta > 0.0 else math.ceil(delta))
    if min_step and min_step > abs(rounded):
        rounded = min_step if rounded > 0 else -min_step
    return rounded


def sanitize_cooldown(cooldown: float | None) -> float:
    """No cooldown and a negative one both mean zero."""
    return 0 if cooldown is None else max(0, cooldown)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat()


def check_scaling_allowed(
    state: Mapping[str, Any], cooldown: float | None, now: datetime, resource: str
) -> dict[str, Any]:
    """Heat's ``_check_scaling_allowed``: raise :class:`NoActionRequired`
    while a scaling runs or the cooldown lasts; otherwise return the state
    with ``scaling_in_progress`` set, to be stored before scaling starts."""
    if state.get("scaling_in_progress"):
        raise NoActionRequired(resource, "due to scaling activity")
    ends = state.get("cooldown_end")
    if isinstance(ends, Mapping) and ends and iso(now) < next(iter(ends)):
        raise NoActionRequired(resource, f"due to cooldown, cooldown {sanitize_cooldown(cooldown)}")
    return {**state, "scaling_in_progress": True}


def finished_scaling(
    state: Mapping[str, Any],
    cooldown: float | None,
    reason: str,
    now: datetime,
    *,
    size_changed: bool = True,
) -> dict[str, Any]:
    """Heat's ``_finished_scaling``: a size change starts a cooldown (never
    shortening one already running); the in-progress mark is cleared."""
    out = dict(state)
    if size_changed:
        end = iso(now + timedelta(seconds=sanitize_cooldown(cooldown)))
        old = state.get("cooldown_end")
        if isinstance(old, Mapping) and old:
            end = max(next(iter(old)), end)
        out["cooldown_end"] = {end: reason}
    out["scaling_in_progress"] = False
    return out


def cooldown_remaining(state: Mapping[str, Any], now: datetime) -> float:
    """Seconds until the cooldown ends (0 when none runs); for messages."""
    ends = state.get("cooldown_end")
    if not isinstance(ends, Mapping) or not ends:
        return 0.0
    end = datetime.fromisoformat(next(iter(ends))).replace(tzinfo=UTC)
    return max(0.0, (end - now).total_seconds())
