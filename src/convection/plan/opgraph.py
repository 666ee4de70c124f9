"""The operation graph under construction, and the transform protocol.

As in Terraform's graph builders, the graph is built by running a list of
small transforms in order (see :func:`convection.plan.build.steps`). Each
transform adds nodes or edges for one reason; the builder then checks the
result is acyclic and freezes it into the :class:`Plan`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from convection.graph import CycleError, Graph
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
