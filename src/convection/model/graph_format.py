"""Renderings of a :class:`~convection.model.graph.Graph` for people and tools.

Kept apart from the graph itself, as a plan's encoding is kept apart from the
plan: the graph is a value, and these are views of it.

Every rendering sorts nodes and edges by name, so the text does not change
when a template only reorders its resources, and tests can compare it whole.
Edges always point from the requirer to the required, as in the graph.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from typing import Literal, TypedDict

from convection.model.graph import Graph

__all__ = ["GraphJSON", "to_dot", "to_json", "to_mermaid", "to_text"]

RankDir = Literal["TB", "BT", "LR", "RL"]


class GraphJSON(TypedDict):
    """The JSON shape of a graph: ``--format json`` output and API bodies."""

    nodes: list[str]
    edges: list[list[str]]


def to_json(graph: Graph) -> GraphJSON:
    """Nodes and ``[requirer, required]`` edges, both sorted by name."""
    return {
        "nodes": sorted(graph),
        "edges": [[requirer, required] for requirer, required in graph.edges()],
    }


def to_text(graph: Graph) -> str:
    """A plain listing, each node followed by what it requires, indented.

    The Terraform ``Graph.String()`` idea: tests of graph-building code
    compare this text with an expected string, and a failure shows a diff a
    person can read.
    """
    lines: list[str] = []
    for node in sorted(graph):
        lines.append(node)
        lines.extend(f"  {required}" for required in sorted(graph.requires(node)))
    return "".join(f"{line}\n" for line in lines)


# -- Graphviz ----------------------------------------------------------------


def to_dot(
    graph: Graph,
    *,
    labels: Mapping[str, str] | None = None,
    rankdir: RankDir = "BT",
) -> str:
    """Graphviz DOT source.

    Ids are always quoted, so any resource name is a valid id. Each node gets
    an explicit label (its name, then ``labels[name]`` such as the resource
    type on a second line) because Graphviz applies escapes to labels that
    it does not apply to ids. The default ``rankdir="BT"`` draws what must be
    created first at the top, with arrows pointing up to what they require.
    """
    labels = labels or {}
    lines = [
        "digraph {",
        f"  rankdir={_dot_quote(rankdir)};",
        '  node [shape="box"];',
    ]
    for node in sorted(graph):
        label = _dot_escape(node)
        if node in labels:
            label += "\\n" + _dot_escape(labels[node])
        lines.append(f'  {_dot_quote(node)} [label="{label}"];')
    for requirer, required in graph.edges():
        lines.append(f"  {_dot_quote(requirer)} -> {_dot_quote(required)};")
    lines.append("}")
    return "".join(f"{line}\n" for line in lines)


def _dot_escape(text: str) -> str:
    """Escape text for the inside of a DOT quoted string.

    Backslashes are doubled so a name ending in ``\\`` cannot swallow the
    closing quote, and newlines become the ``\\n`` label escape.
    """
    return (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\r\n", "\\n")
        .replace("\n", "\\n")
        .replace("\r", "\\n")
    )


def _dot_quote(text: str) -> str:
    return f'"{_dot_escape(text)}"'


# -- Mermaid -----------------------------------------------------------------

#: Characters Mermaid would read as syntax or HTML inside a quoted label,
#: written as its ``#name;`` / ``#code;`` entity codes. ``#`` itself is
#: encoded so a name that already contains ``#quot;`` stays literal.
_MERMAID_ENTITIES = str.maketrans(
    {
        "#": "#35;",
        '"': "#quot;",
        "&": "#amp;",
        "<": "#lt;",
        ">": "#gt;",
        "`": "#96;",
        "\n": " ",
        "\r": " ",
    }
)


def to_mermaid(graph: Graph, *, labels: Mapping[str, str] | None = None) -> str:
    """Mermaid ``graph TD`` source.

    Resource names may contain characters Mermaid treats as syntax (``-``,
    ``.``, spaces, quotes) or words it reserves (``end``), so nodes get
    generated ids ``n0``, ``n1``, ... in name order, and the real name goes
    in a quoted label with ``labels[name]`` on a second line.
    """
    labels = labels or {}
    names = sorted(graph)
    ids = {name: f"n{i}" for i, name in enumerate(names)}
    lines = ["graph TD"]
    for name in names:
        label = name.translate(_MERMAID_ENTITIES)
        if name in labels:
            label += "<br/>" + labels[name].translate(_MERMAID_ENTITIES)
        lines.append(f'    {ids[name]}["{label}"]')
    for requirer, required in graph.edges():
        lines.append(f"    {ids[requirer]} --> {ids[required]}")
    return "".join(f"{line}\n" for line in lines)


class GraphFormat(enum.StrEnum):
    dot = "dot"
    mermaid = "mermaid"
    json = "json"


def render_graph(graph: Graph, fmt: GraphFormat, *, labels: Mapping[str, str] | None = None) -> str:
    """One entry point for the CLI's ``--format dot|mermaid|json``."""
    if fmt is GraphFormat.json:
        return json.dumps(to_json(graph), indent=2) + "\n"
    if fmt is GraphFormat.mermaid:
        return to_mermaid(graph, labels=labels)
    return to_dot(graph, labels=labels)
