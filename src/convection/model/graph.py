"""The dependency graph of a stack: which resource needs which.

An edge points from the *requirer* to the *required*: a resource that uses
``get_attr`` of ``db`` requires ``db``, so the edge is ``(web, db)``. Heat's API
shows the other direction as ``required_by``, so both are kept.

The graph is an immutable value. It knows node names only, never what a node
is, so the plan and the engine can put any kind of node in it (resources,
update and cleanup nodes). Every operation is O(V+E) and iterative: stacks with
100,000 resources must neither go quadratic nor hit Python's recursion limit.

The adjacency is *canonical*: neighbours are stored in node insertion order, no
matter in which order the edges were given. Two graphs built from the same
nodes and the same set of edges therefore behave identically, and every order
this module returns depends only on the node order a caller chose (normally
the template's).

Naming, because Heat uses the opposite words: here a **root** requires nothing
(it can be created first) and a **leaf** is required by nothing (it can be
deleted first).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

__all__ = ["CycleError", "Graph"]

#: Neighbours of a node, in node insertion order.
_Adjacency = dict[str, tuple[str, ...]]


class CycleError(ValueError):
    """The graph has a circular dependency, so there is no order to run it in.

    ``cycle`` is one concrete cycle in edge order, first node repeated at the
    end (``("a", "b", "a")``: ``a`` requires ``b``, which requires ``a``). The
    message keeps Heat's ``Circular Dependency Found:`` prefix so users and
    scripts that know Heat recognise it.
    """

    def __init__(self, cycle: Sequence[str]) -> None:
        self.cycle: tuple[str, ...] = tuple(cycle)
        super().__init__("Circular Dependency Found: " + " -> ".join(self.cycle))

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuild from the cycle, not the message: jobs may cross processes.
        return (type(self), (self.cycle,))

    def __repr__(self) -> str:
        return f"CycleError({list(self.cycle)!r})"


class Graph:
    """An immutable directed dependency graph over node names.

    Build it with :meth:`Graph.build`; the constructor takes the canonical
    adjacency and is meant for this module only.
    """

    __slots__ = ("_edge_count", "_index", "_nodes", "_required_by", "_requires")

    _nodes: tuple[str, ...]
    _index: dict[str, int]
    _requires: _Adjacency
    _required_by: _Adjacency
    _edge_count: int

    def __init__(
        self,
        nodes: tuple[str, ...],
        requires: _Adjacency,
        required_by: _Adjacency,
    ) -> None:
        """Take ownership of already canonical adjacency; use :meth:`build`."""
        setattr_ = object.__setattr__
        setattr_(self, "_nodes", nodes)
        setattr_(self, "_index", {name: i for i, name in enumerate(nodes)})
        setattr_(self, "_requires", requires)
        setattr_(self, "_required_by", required_by)
        setattr_(self, "_edge_count", sum(len(r) for r in requires.values()))

    def __setattr__(self, name: str, value: object) -> NoReturn:
        # Graphs are shared between the plan and the engine without locks.
        raise AttributeError(f"Graph is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"Graph is immutable; cannot delete {name!r}")

    @classmethod
    def build(cls, nodes: Iterable[str], edges: Iterable[tuple[str, str]]) -> Graph:
        """Build a graph from node names and ``(requirer, required)`` edges.

        Duplicate edges collapse into one; a self-edge is kept, since it is a
        cycle of one that ordering must report. An edge naming an unknown node
        or a node listed twice raises ``ValueError``: the caller has already
        validated references, so either is a bug, not a user error.
        """
        order = tuple(nodes)
        index = {name: i for i, name in enumerate(order)}
        if len(index) != len(order):
            raise ValueError(f"duplicate node {_first_duplicate(order)!r}")
        direct: dict[str, set[str]] = {}
        for requirer, required in edges:
            for end in (requirer, required):
                if end not in index:
                    edge = f"({requirer!r}, {required!r})"
                    raise ValueError(f"edge {edge} names unknown node {end!r}")
            direct.setdefault(requirer, set()).add(required)
        # Two bucket passes give both adjacencies in node order in O(V+E), no
        # sort: walking requirers in order fills required_by in order, and
        # walking required nodes in order then fills requires in order.
        required_by: dict[str, list[str]] = {name: [] for name in order}
        for requirer in order:
            for required in direct.get(requirer, ()):
                required_by[required].append(requirer)
        requires: dict[str, list[str]] = {name: [] for name in order}
        for required in order:
            for requirer in required_by[required]:
                requires[requirer].append(required)
        return cls(
            order,
            {name: tuple(requires[name]) for name in order},
            {name: tuple(required_by[name]) for name in order},
        )

    # -- size and membership --------------------------------------------------

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node: object) -> bool:
        return node in self._index

    def __iter__(self) -> Iterator[str]:
        """Iterate node names in insertion order."""
        return iter(self._nodes)

    def __repr__(self) -> str:
        return f"<Graph nodes={len(self._nodes)} edges={self._edge_count}>"

    @property
    def nodes(self) -> tuple[str, ...]:
        """Node names in insertion order."""
        return self._nodes

    @property
    def edge_count(self) -> int:
        return self._edge_count

    # -- neighbours -----------------------------------------------------------

    def requires(self, node: str) -> tuple[str, ...]:
        """The nodes ``node`` depends on directly, in insertion order.

        Raises ``KeyError`` for an unknown node.
        """
        return self._requires[node]

    def required_by(self, node: str) -> tuple[str, ...]:
        """The nodes that depend on ``node`` directly (Heat's ``required_by``)."""
        return self._required_by[node]

    def roots(self) -> tuple[str, ...]:
        """Nodes that require nothing: the ones a create can start with."""
        return tuple(n for n in self._nodes if not self._requires[n])

    def leaves(self) -> tuple[str, ...]:
        """Nodes nothing requires: the ones a delete can start with."""
        return tuple(n for n in self._nodes if not self._required_by[n])

    def edges(self) -> tuple[tuple[str, str], ...]:
        """Every ``(requirer, required)`` edge, sorted by name.

        Sorted by name rather than insertion order so that rendered output
        does not change when a template merely reorders its resources.
        """
        return tuple(sorted((r, q) for r in self._nodes for q in self._requires[r]))

    def ready_counts(self) -> dict[str, int]:
        """A fresh ``{node: number of direct requirements}``.

        Engines seed their persisted counters with it: a node is ready when
        its count reaches zero, and each finished node decrements the counts
        of its :meth:`required_by`.
        """
        return {n: len(self._requires[n]) for n in self._nodes}

    # -- orders ---------------------------------------------------------------

    def topological_order(self) -> tuple[str, ...]:
        """Every node after everything it requires (create order).

        Kahn's algorithm with a FIFO queue: roots start in insertion order,
        and nodes freed by the same node follow in insertion order, so the
        result depends only on the node order and the edge set. Raises
        :class:`CycleError` naming one cycle if there is none.
        """
        return self._kahn(self._requires, self._required_by)

    def reverse_order(self) -> tuple[str, ...]:
        """Every node before everything it requires (delete order).

        The same algorithm on the reversed edges, not the reverse of
        :meth:`topological_order`, so ties still follow insertion order.
        """
        return self._kahn(self._required_by, self._requires)

    def _kahn(self, before: _Adjacency, after: _Adjacency) -> tuple[str, ...]:
        """Order so that every node comes after all of ``before[node]``."""
        pending = {n: len(before[n]) for n in self._nodes}
        # The output list doubles as the FIFO queue: ``head`` is the next
        # node whose successors have not been released yet.
        out = [n for n in self._nodes if not pending[n]]
        head = 0
        while head < len(out):
            for successor in after[out[head]]:
                pending[successor] -= 1
                if not pending[successor]:
                    out.append(successor)
            head += 1
        if len(out) != len(self._nodes):
            cycle = self.find_cycle()
            if cycle is None:  # pragma: no cover - Kahn stalls only on a cycle
                raise AssertionError("ordering stalled without a cycle")
            raise CycleError(cycle)
        return tuple(out)

    # -- cycles ---------------------------------------------------------------

    def find_cycle(self) -> list[str] | None:
        """One concrete cycle, first node repeated at the end, or ``None``.

        A depth-first search with an explicit stack, so a 100,000-node chain
        does not hit the recursion limit. The cycle is rotated to start at its
        earliest-inserted node, so the same graph always reports the same
        text (``a -> b -> a``, never ``b -> a -> b``).
        """
        visited: set[str] = set()
        for start in self._nodes:
            if start not in visited:
                cycle = self._cycle_from(start, visited)
                if cycle is not None:
                    return cycle
        return None

    def _cycle_from(self, start: str, visited: set[str]) -> list[str] | None:
        """Search from ``start``; ``visited`` carries finished nodes across calls."""
        path = [start]
        on_path = {start: 0}  # node -> position in ``path``
        pending = [iter(self._requires[start])]
        visited.add(start)
        while pending:
            nxt = next(pending[-1], None)
            if nxt is None:
                del on_path[path.pop()]
                pending.pop()
            elif nxt in on_path:
                return self._rotate(path[on_path[nxt] :])
            elif nxt not in visited:
                visited.add(nxt)
                on_path[nxt] = len(path)
                path.append(nxt)
                pending.append(iter(self._requires[nxt]))
        return None

    def _rotate(self, loop: list[str]) -> list[str]:
        """Start ``loop`` at its earliest-inserted node and close it."""
        first = min(range(len(loop)), key=lambda i: self._index[loop[i]])
        turned = loop[first:] + loop[:first]
        return [*turned, turned[0]]

    # -- derived graphs and closures -----------------------------------------

    def subgraph(self, nodes: Iterable[str]) -> Graph:
        """The graph induced by ``nodes``: those nodes and the edges among them.

        Nodes keep their original relative order, whatever order they are
        given in, so orders on the subgraph agree with the whole graph. Costs
        O(k log k + their degrees), not O(V): callers cut small pieces out of
        big stacks. Unknown nodes raise ``ValueError``.
        """
        keep = set(nodes)
        unknown = sorted(n for n in keep if n not in self._index)
        if unknown:
            raise ValueError(f"unknown nodes: {', '.join(map(repr, unknown))}")
        order = sorted(keep, key=self._index.__getitem__)
        edges = [(r, q) for r in order for q in self._requires[r] if q in keep]
        return Graph.build(order, edges)

    def transitive_requirements(self, node: str) -> frozenset[str]:
        """Everything ``node`` depends on, directly or not.

        ``node`` itself is included only when it lies on a cycle, since then
        it really does depend on itself.
        """
        return _reachable(self._requires, node)

    def transitive_required_by(self, node: str) -> frozenset[str]:
        """Everything that depends on ``node``, directly or not.

        The set a replacement or a delete of ``node`` affects (Heat's
        ``Dependencies[node]``).
        """
        return _reachable(self._required_by, node)


def _reachable(adjacency: Mapping[str, tuple[str, ...]], start: str) -> frozenset[str]:
    """Nodes reachable from ``start`` in one or more steps, without recursion."""
    seen: set[str] = set()
    stack = list(adjacency[start])
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(adjacency[node])
    return frozenset(seen)


def _first_duplicate(names: Iterable[str]) -> str:
    """The first name that repeats; only called when one does."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    raise AssertionError("no duplicate")  # pragma: no cover
