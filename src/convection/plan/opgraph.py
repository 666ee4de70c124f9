"""The operation graph under construction, and the transform protocol.

As in Terraform's graph builders, the graph is built by running a list of
small transforms in order (see :func:`convection.plan.build.steps`). Each
transform adds nodes or edges for one reason; the builder then checks the
result is acyclic and freezes it into the :class:`Plan`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from convection.model import CycleError, Graph
from convection.plan.model import Node


class OpGraph:
    """A mutable graph of :class:`Node` values keyed by ``node.key``.

    Edges are ``(later, earlier)``; adding an edge whose ends are missing is
    a no-op, so transforms can state orderings without first checking
    whether both sides have nodes (a resource with no change has none).
    """

    __slots__ = ("_edges", "_nodes")

    def __init__(self) -> None:
        self._nodes: dict[str, Node] = {}
        self._edges: dict[tuple[str, str], None] = {}

    def add(self, node: Node) -> None:
        if node.key in self._nodes:
            raise ValueError(f"duplicate node {node.key}")
        self._nodes[node.key] = node

    def __contains__(self, key: object) -> bool:
        return key in self._nodes

    def get(self, key: str) -> Node | None:
        return self._nodes.get(key)

    def connect(self, later: str, earlier: str) -> None:
        """``later`` runs after ``earlier`` finishes (when both exist)."""
        if later != earlier and later in self._nodes and earlier in self._nodes:
            self._edges[(later, earlier)] = None

    def disconnect(self, edges: Iterable[tuple[str, str]]) -> None:
        for edge in edges:
            self._edges.pop(edge, None)

    @property
    def nodes(self) -> tuple[Node, ...]:
        return tuple(self._nodes.values())

    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._edges)

    def graph(self) -> Graph:
        return Graph.build(self._nodes, self._edges)

    def find_cycle(self) -> Sequence[str] | None:
        return self.graph().find_cycle()

    def check_acyclic(self) -> None:
        """Raise :class:`CycleError` naming a cycle, if there is one.

        A count of Kahn's algorithm over the edges as they are decides;
        only a graph that has a cycle is built into a :class:`Graph` to
        name it. Building one for every plan cost more than planning a
        10,000-resource delete."""
        pending = dict.fromkeys(self._nodes, 0)
        freed: dict[str, list[str]] = {}
        for later, earlier in self._edges:
            pending[later] += 1
            freed.setdefault(earlier, []).append(later)
        ready = [key for key, count in pending.items() if not count]
        done = 0
        while ready:
            done += 1
            for later in freed.get(ready.pop(), ()):
                pending[later] -= 1
                if not pending[later]:
                    ready.append(later)
        if done == len(self._nodes):
            return
        cycle = self.find_cycle()
        if cycle is not None:
            raise CycleError(cycle)

    def __str__(self) -> str:
        """Terraform's ``Graph.String()``: each node, then what it waits
        for, indented; both sorted, so tests compare text."""
        after: dict[str, list[str]] = {k: [] for k in self._nodes}
        for later, earlier in self._edges:
            after[later].append(earlier)
        lines: list[str] = []
        for key in sorted(self._nodes):
            lines.append(key)
            lines.extend(f"  {dep}" for dep in sorted(after[key]))
        return "\n".join(lines)


class Transform(Protocol):
    """One named step of graph construction."""

    def apply(self, g: OpGraph) -> None: ...
