"""JSON encoding of a :class:`Plan`, kept apart from the type (Terraform's
``planfile`` is separate from ``plans``), so the model never grows
serialisation concerns and the format can be versioned on its own."""

from __future__ import annotations

from typing import Any

from convection.plan.model import Action, Change, CleanupMode, Deposed, Node, NodeKind, Plan

FORMAT_VERSION = 1


def encode(plan: Plan) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION,
        "operation": plan.operation,
        "changes": [_change(c) for c in plan.changes],
        "deposed": [_deposed(d) for d in plan.deposed],
        "nodes": [_node(n) for n in plan.nodes],
        "edges": [list(e) for e in plan.edges],
    }


def decode(data: dict[str, Any]) -> Plan:
    if data.get("format") != FORMAT_VERSION:
        raise ValueError(f"unsupported plan format {data.get('format')!r}")
    return Plan(
        operation=data["operation"],
        changes=tuple(
            Change(c["name"], Action[c["action"]], c["reason"], c["type"], c["resource_id"])
            for c in data["changes"]
        ),
        deposed=tuple(
            Deposed(d["name"], d["resource_id"], d["type"], d["reason"]) for d in data["deposed"]
        ),
        nodes=tuple(_decode_node(n) for n in data["nodes"]),
        edges=tuple((later, earlier) for later, earlier in data["edges"]),
    )


def _change(c: Change) -> dict[str, Any]:
    return {
        "name": c.name,
        "action": c.action.name,
        "reason": c.reason,
        "type": c.type,
        "resource_id": c.resource_id,
    }


def _deposed(d: Deposed) -> dict[str, Any]:
    return {"name": d.name, "resource_id": d.resource_id, "type": d.type, "reason": d.reason}


def _node(n: Node) -> dict[str, Any]:
    return {
        "key": n.key,
        "kind": n.kind.value,
        "name": n.name,
        "action": n.action.name,
        "reason": n.reason,
        "resource_id": n.resource_id,
        "mode": None if n.mode is None else n.mode.value,
        "restore_id": n.restore_id,
    }


def _decode_node(n: dict[str, Any]) -> Node:
    return Node(
        key=n["key"],
        kind=NodeKind(n["kind"]),
        name=n["name"],
        action=Action[n["action"]],
        reason=n["reason"],
        resource_id=n["resource_id"],
        mode=None if n["mode"] is None else CleanupMode(n["mode"]),
        restore_id=n["restore_id"],
    )
