"""Renderings of a :class:`WorkflowGraph`: Graphviz and Mermaid text.

Like the stack graph's renderings (``model.graph_format``), these are views
of a value; ``WorkflowGraph.to_dict`` is the JSON one. Edges point the way
work flows: a direct workflow's transitions are labelled with their clause
(``on-error`` edges drawn dashed, guards after the clause), a reverse
workflow's ``requires`` point from the required task to the one needing it.
Engine commands (``fail``, ``succeed``, ...) are drawn as their own nodes.
"""

from __future__ import annotations

import json
import re

from convection.workflows.lang.graph import Edge, WorkflowGraph

_STYLE = {"success": "solid", "error": "dashed", "complete": "bold", "skip": "dotted"}
_SAFE = re.compile(r"[^A-Za-z0-9_]")


def _label(edge: Edge) -> str:
    if edge.kind == "requires":
        return ""
    return edge.kind if edge.condition is None else f"{edge.kind}: {edge.condition}"


def _command_id(edge: Edge) -> str:
    """A command is drawn once per task that runs it: ``fail`` after two
    tasks is two different endings."""
    return f"{edge.source}->{edge.target}"


def to_dot(graph: WorkflowGraph) -> str:
    lines = [f"digraph {json.dumps(graph.workflow)} {{", "  rankdir=TB;"]
    for node in graph.nodes:
        shape = "doublecircle" if node in graph.start else "box"
        lines.append(f"  {json.dumps(node)} [shape={shape}];")
    for edge in graph.edges:
        target = _command_id(edge) if edge.command else edge.target
        if edge.command:
            lines.append(
                f"  {json.dumps(target)} [label={json.dumps(edge.target)}, shape=octagon];"
            )
        attrs = [f"style={_STYLE.get(edge.kind, 'solid')}"]
        if label := _label(edge):
            attrs.append(f"label={json.dumps(label)}")
        lines.append(f"  {json.dumps(edge.source)} -> {json.dumps(target)} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid_id(name: str, ids: dict[str, str]) -> str:
    if name not in ids:
        ids[name] = f"n{len(ids)}_{_SAFE.sub('_', name)}"
    return ids[name]


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;")


def to_mermaid(graph: WorkflowGraph) -> str:
    ids: dict[str, str] = {}
    lines = ["graph TD"]
    for node in graph.nodes:
        shape = ("((", "))") if node in graph.start else ("[", "]")
        lines.append(f'  {_mermaid_id(node, ids)}{shape[0]}"{_mermaid_text(node)}"{shape[1]}')
    for edge in graph.edges:
        source = _mermaid_id(edge.source, ids)
        if edge.command:
            target = _mermaid_id(_command_id(edge), ids)
            lines.append(f'  {target}{{{{"{_mermaid_text(edge.target)}"}}}}')
        else:
            target = _mermaid_id(edge.target, ids)
        arrow = "-.->" if edge.kind == "error" else "-->"
        label = _label(edge)
        text = f'|"{_mermaid_text(label)}"|' if label else ""
        lines.append(f"  {source} {arrow}{text} {target}")
    return "\n".join(lines) + "\n"
