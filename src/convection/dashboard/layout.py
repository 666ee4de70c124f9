"""Where each node of a graph is drawn: layers by dependency depth, left to
right, as Terraform's and Heat's graphs read.

The server lays the graph out, not the browser: a layered layout is
O(V+E) here (one topological pass, one ordering pass per layer), so a
10,000-resource stack is placed in milliseconds, and the same graph is
always drawn the same way (the screenshot tests rely on it). Browser
layout libraries (dagre, ELK) minimise crossings far better but take
seconds at that size.

A layer taller than ``column`` nodes wraps into several columns, so a
stack of 10,000 independent resources is a block, not a line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

#: Distance between columns and between rows, in the renderer's units.
DX = 220.0
DY = 70.0


def layered(
    nodes: Sequence[str], edges: Iterable[tuple[str, str]]
) -> dict[str, tuple[float, float]]:
    """Positions by name. ``edges`` go from what is needed to what needs
    it; an edge naming an unknown node is ignored."""
    known = set(nodes)
    after: dict[str, list[str]] = {n: [] for n in nodes}
    before: dict[str, list[str]] = {n: [] for n in nodes}
    for source, target in edges:
        if source in known and target in known and source != target:
            after[source].append(target)
            before[target].append(source)
    depth = _depths(nodes, after, before)
    layers: dict[int, list[str]] = {}
    for name in nodes:
        layers.setdefault(depth[name], []).append(name)
    column = max(12, math.ceil(math.sqrt(len(nodes))))
    return _place(layers, before, column)


def _depths(
    nodes: Sequence[str], after: dict[str, list[str]], before: dict[str, list[str]]
) -> dict[str, int]:
    """The longest path from a node with no dependencies (Kahn's order).
    A cycle (a direct workflow's loop back to an earlier task) is broken at
    its first node in ``nodes`` order, which then sits after what it was
    reached from so far: still one pass over the nodes and edges."""
    waiting = {n: len(before[n]) for n in nodes}
    depth = dict.fromkeys(nodes, 0)
    ready = [n for n in reversed(nodes) if waiting[n] == 0]
    placed: set[str] = set()
    next_unplaced = 0
    while len(placed) < len(nodes):
        if not ready:
            while nodes[next_unplaced] in placed:
                next_unplaced += 1
            ready.append(nodes[next_unplaced])
        name = ready.pop()
        if name in placed:
            continue
        placed.add(name)
        for nxt in after[name]:
            if nxt in placed:
                continue
            depth[nxt] = max(depth[nxt], depth[name] + 1)
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                ready.append(nxt)
    return depth


def _place(
    layers: dict[int, list[str]], before: dict[str, list[str]], column: int
) -> dict[str, tuple[float, float]]:
    """Each layer in the order of its dependencies' rows (the barycentre
    heuristic, one pass), names breaking ties; wrapped at ``column`` rows."""
    row: dict[str, float] = {}
    out: dict[str, tuple[float, float]] = {}
    x_slot = 0
    for depth in sorted(layers):
        members = layers[depth]
        members.sort(key=lambda n: (_barycentre(before[n], row), n))
        height = min(column, len(members))
        for index, name in enumerate(members):
            col, r = divmod(index, column)
            y = (r - (height - 1) / 2) * DY
            row[name] = y
            out[name] = ((x_slot + col) * DX, y)
        x_slot += math.ceil(len(members) / column)
    return out


def _barycentre(parents: list[str], row: dict[str, float]) -> float:
    placed = [row[p] for p in parents if p in row]
    return sum(placed) / len(placed) if placed else 0.0
