"""An update preview read as Terraform's plan reads: a symbol and a verb
per resource, its reason, and the totals on one line.

The buckets and reasons are Heat's ``preview_update_stack``, computed by
the stack service; this only orders and words them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Heat's bucket -> (Terraform's symbol, the verb a reader scans for).
_SHOWN = {
    "added": ("+", "will be created"),
    "replaced": ("-/+", "will be replaced"),
    "updated": ("~", "will be updated in place"),
    "deleted": ("-", "will be deleted"),
    "unchanged": (" ", "unchanged"),
}


@dataclass(frozen=True, slots=True)
class PlannedChange:
    change: str
    symbol: str
    verb: str
    name: str
    type: str
    reason: str


@dataclass(frozen=True, slots=True)
class PlanView:
    changes: list[PlannedChange]
    summary: str

    @property
    def has_changes(self) -> bool:
        return any(c.change != "unchanged" for c in self.changes)


def plan_view(buckets: dict[str, list[dict[str, Any]]]) -> PlanView:
    changes = [
        PlannedChange(
            change=bucket,
            symbol=symbol,
            verb=verb,
            name=str(entry.get("resource_name", "")),
            type=str(entry.get("resource_type", "")),
            reason=str(entry.get("reason") or ""),
        )
        for bucket, (symbol, verb) in _SHOWN.items()
        for entry in sorted(buckets.get(bucket, []), key=lambda e: str(e.get("resource_name")))
    ]
    count = {b: len(buckets.get(b, [])) for b in _SHOWN}
    summary = (  # worded as ``stack update --dry-run`` words it
        f"Plan: {count['added']} to add, {count['updated']} to update, "
        f"{count['replaced']} to replace, {count['deleted']} to delete, "
        f"{count['unchanged']} unchanged."
    )
    return PlanView(changes, summary)
