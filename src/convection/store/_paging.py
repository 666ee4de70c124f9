"""Keyset paging's one rule, shared by every listing (stacks, workflows,
executions): the sort keys with ``id`` last, so the order is total and a
marker names exactly one place in it."""

from __future__ import annotations

from collections.abc import Sequence


def sort_columns(sort_keys: Sequence[str]) -> list[str]:
    """The sort keys with ``id`` appended as the unique tie-breaker."""
    keys = list(dict.fromkeys(sort_keys or ("created_at",)))
    if "id" not in keys:
        keys.append("id")
    return keys
