"""A workflow as a graph, for drawing (``workflow graph``) and for the
engine's start set.

Direct workflows: one edge per effective transition, labelled with the
clause it comes from (success, error, complete, skip) and its guard;
transitions to engine commands are edges to the command. Reverse
workflows: an edge from each required task to the task requiring it
(labelled ``requires``), so edges point the way work flows in both.
Built in one pass over the tasks: O(V + E).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from convection.workflows.lang.specs import WorkflowSpec

EdgeKind = Literal["success", "error", "complete", "skip", "requires"]


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    kind: EdgeKind
    condition: str | None = None
    #: The target is an engine command (fail, succeed, pause, noop).
    command: bool = False


@dataclass(frozen=True, slots=True)
class WorkflowGraph:
    workflow: str
    type: Literal["direct", "reverse"]
    nodes: tuple[str, ...]
    edges: tuple[Edge, ...]
    #: Tasks nothing leads to: a direct workflow's start tasks, a reverse
    #: workflow's tasks that require nothing.
    start: tuple[str, ...]
    _out: Mapping[str, tuple[Edge, ...]] = field(default_factory=dict, repr=False, compare=False)
    _in: Mapping[str, tuple[Edge, ...]] = field(default_factory=dict, repr=False, compare=False)

    def outgoing(self, node: str) -> tuple[Edge, ...]:
        return self._out.get(node, ())

    def incoming(self, node: str) -> tuple[Edge, ...]:
        return self._in.get(node, ())

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of ``workflow graph --format json``."""
        return {
            "workflow": self.workflow,
            "type": self.type,
            "nodes": list(self.nodes),
            "start": list(self.start),
            "edges": [
                {
                    "from": e.source,
                    "to": e.target,
                    "kind": e.kind,
                    "condition": e.condition,
                    "command": e.command,
                }
                for e in self.edges
            ],
        }


def workflow_graph(spec: WorkflowSpec) -> WorkflowGraph:
    edges: list[Edge] = []
    if spec.type == "direct":
        for task in spec.tasks.values():
            for event, t in task.transitions():
                edges.append(Edge(task.name, t.target, event, t.condition, t.is_command))
    else:
        for task in spec.tasks.values():
            edges.extend(Edge(req, task.name, "requires") for req in task.requires)
    outgoing: dict[str, list[Edge]] = {}
    incoming: dict[str, list[Edge]] = {}
    for edge in edges:
        outgoing.setdefault(edge.source, []).append(edge)
        if not edge.command:
            incoming.setdefault(edge.target, []).append(edge)
    nodes = tuple(spec.tasks)
    return WorkflowGraph(
        workflow=spec.qualified_name,
        type=spec.type,
        nodes=nodes,
        edges=tuple(edges),
        start=tuple(n for n in nodes if n not in incoming),
        _out={k: tuple(v) for k, v in outgoing.items()},
        _in={k: tuple(v) for k, v in incoming.items()},
    )
