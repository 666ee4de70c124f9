"""The plan as text: for terminals and for tests that compare strings.

Like Terraform's ``Graph.String()``, the output is sorted and stable, so a
test states the expected plan as a literal and a diff shows what moved.
"""

from __future__ import annotations

from convection.plan.model import Plan


def format_changes(plan: Plan) -> str:
    """One line per resource (``symbol name: reason``), then one per
    deposed version (``- name#id: reason``)."""
    lines = [f"{c.action.value} {c.name}: {c.reason}" for c in plan.changes]
    lines.extend(f"- {d.name}#{d.resource_id}: {d.reason}" for d in plan.deposed)
    return "\n".join(lines)


def format_graph(plan: Plan) -> str:
    """Each node key, then the keys it waits for, indented; both sorted."""
    after: dict[str, list[str]] = {n.key: [] for n in plan.nodes}
    for later, earlier in plan.edges:
        after[later].append(earlier)
    lines: list[str] = []
    for key in sorted(after):
        lines.append(key)
        lines.extend(f"  {dep}" for dep in sorted(after[key]))
    return "\n".join(lines)


def format_plan(plan: Plan) -> str:
    return f"{format_changes(plan)}\n\n{format_graph(plan)}"
