"""Renderings of a graph, compared as whole text."""

from __future__ import annotations

import json

import pytest

from convection.model.graph import Graph
from convection.model.graph_format import to_dot, to_json, to_mermaid, to_text


@pytest.fixture
def stack() -> Graph:
    # Names Mermaid and Graphviz dislike: '-', '.', a quote, 'end'.
    nodes = ["web-server", "db.primary", "net", 'say "hi"', "end"]
    edges = [
        ("web-server", "db.primary"),
        ("web-server", "net"),
        ("db.primary", "net"),
        ('say "hi"', "web-server"),
    ]
    return Graph.build(nodes, edges)


LABELS = {"web-server": "OS::Nova::Server", "db.primary": "OS::Trove::Instance"}


def test_to_json_is_sorted_and_serialisable(stack: Graph) -> None:
    assert to_json(stack) == {
        "nodes": ["db.primary", "end", "net", 'say "hi"', "web-server"],
        "edges": [
            ["db.primary", "net"],
            ['say "hi"', "web-server"],
            ["web-server", "db.primary"],
            ["web-server", "net"],
        ],
    }
    assert json.loads(json.dumps(to_json(stack))) == to_json(stack)


def test_to_json_does_not_depend_on_insertion_order(stack: Graph) -> None:
    shuffled = Graph.build(reversed(stack.nodes), reversed(stack.edges()))
    assert to_json(shuffled) == to_json(stack)


def test_to_text(stack: Graph) -> None:
    assert to_text(stack) == (
        'db.primary\n  net\nend\nnet\nsay "hi"\n  web-server\nweb-server\n  db.primary\n  net\n'
    )


def test_to_dot(stack: Graph) -> None:
    assert to_dot(stack) == (
        "digraph {\n"
        '  rankdir="BT";\n'
        '  node [shape="box"];\n'
        '  "db.primary" [label="db.primary"];\n'
        '  "end" [label="end"];\n'
        '  "net" [label="net"];\n'
        '  "say \\"hi\\"" [label="say \\"hi\\""];\n'
        '  "web-server" [label="web-server"];\n'
        '  "db.primary" -> "net";\n'
        '  "say \\"hi\\"" -> "web-server";\n'
        '  "web-server" -> "db.primary";\n'
        '  "web-server" -> "net";\n'
        "}\n"
    )


def test_to_dot_with_labels_and_rankdir(stack: Graph) -> None:
    text = to_dot(stack.subgraph(["web-server", "db.primary"]), labels=LABELS, rankdir="LR")
    assert text == (
        "digraph {\n"
        '  rankdir="LR";\n'
        '  node [shape="box"];\n'
        '  "db.primary" [label="db.primary\\nOS::Trove::Instance"];\n'
        '  "web-server" [label="web-server\\nOS::Nova::Server"];\n'
        '  "web-server" -> "db.primary";\n'
        "}\n"
    )


def test_to_dot_escapes_backslashes_and_newlines() -> None:
    graph = Graph.build(["a\\", "b\nc"], [("b\nc", "a\\")])
    assert to_dot(graph).splitlines()[3:] == [
        '  "a\\\\" [label="a\\\\"];',
        '  "b\\nc" [label="b\\nc"];',
        '  "b\\nc" -> "a\\\\";',
        "}",
    ]


def test_to_mermaid(stack: Graph) -> None:
    assert to_mermaid(stack, labels=LABELS) == (
        "graph TD\n"
        '    n0["db.primary<br/>OS::Trove::Instance"]\n'
        '    n1["end"]\n'
        '    n2["net"]\n'
        '    n3["say #quot;hi#quot;"]\n'
        '    n4["web-server<br/>OS::Nova::Server"]\n'
        "    n0 --> n2\n"
        "    n3 --> n4\n"
        "    n4 --> n0\n"
        "    n4 --> n2\n"
    )


def test_to_mermaid_escapes_markup_and_entities() -> None:
    graph = Graph.build(["<b>&amp;#quot;`x`\ny"], [])
    assert to_mermaid(graph) == ('graph TD\n    n0["#lt;b#gt;#amp;amp;#35;quot;#96;x#96; y"]\n')


def test_empty_graph_renders() -> None:
    empty = Graph.build([], [])
    assert to_json(empty) == {"nodes": [], "edges": []}
    assert to_text(empty) == ""
    assert to_mermaid(empty) == "graph TD\n"
    assert to_dot(empty).endswith('node [shape="box"];\n}\n')
