"""Behaviour of the dependency graph: building, queries, orders and cycles."""

from __future__ import annotations

import pickle

import pytest

from convection.model.graph import CycleError, Graph

# web requires db and net; db requires net; lb requires web; log stands alone.
NODES = ["net", "db", "web", "lb", "log"]
EDGES = [("web", "db"), ("web", "net"), ("db", "net"), ("lb", "web")]


@pytest.fixture
def stack() -> Graph:
    return Graph.build(NODES, EDGES)


def assert_respects_edges(graph: Graph, order: tuple[str, ...]) -> None:
    position = {node: i for i, node in enumerate(order)}
    assert sorted(order) == sorted(graph)
    for requirer, required in graph.edges():
        assert position[required] < position[requirer], (requirer, required)


# -- building -----------------------------------------------------------------


def test_build_keeps_nodes_and_edges(stack: Graph) -> None:
    assert list(stack) == NODES
    assert stack.nodes == tuple(NODES)
    assert len(stack) == 5
    assert "db" in stack
    assert "nope" not in stack
    assert 3 not in stack
    assert stack.edge_count == 4
    assert repr(stack) == "<Graph nodes=5 edges=4>"


def test_duplicate_edges_collapse() -> None:
    graph = Graph.build(["a", "b"], [("a", "b"), ("a", "b"), ("a", "b")])
    assert graph.edges() == (("a", "b"),)
    assert graph.requires("a") == ("b",)
    assert graph.required_by("b") == ("a",)
    assert graph.ready_counts() == {"a": 1, "b": 0}


def test_edge_to_unknown_node_raises() -> None:
    with pytest.raises(ValueError, match=r"edge \('a', 'ghost'\) names unknown node 'ghost'"):
        Graph.build(["a"], [("a", "ghost")])
    with pytest.raises(ValueError, match="unknown node 'ghost'"):
        Graph.build(["a"], [("ghost", "a")])


def test_duplicate_node_raises() -> None:
    with pytest.raises(ValueError, match="duplicate node 'a'"):
        Graph.build(["a", "b", "a"], [])


def test_empty_graph() -> None:
    graph = Graph.build([], [])
    assert len(graph) == 0
    assert graph.topological_order() == ()
    assert graph.reverse_order() == ()
    assert graph.find_cycle() is None
    assert graph.edges() == ()


def test_graph_is_immutable(stack: Graph) -> None:
    with pytest.raises(AttributeError, match="immutable"):
        stack._nodes = ()
    with pytest.raises(AttributeError, match="immutable"):
        del stack._nodes
    with pytest.raises(AttributeError):
        stack.extra = 1


def test_adjacency_follows_node_order_not_edge_order() -> None:
    forward = Graph.build(["a", "b", "c", "d"], [("d", "a"), ("d", "b"), ("d", "c")])
    backward = Graph.build(["a", "b", "c", "d"], [("d", "c"), ("d", "b"), ("d", "a")])
    assert forward.requires("d") == backward.requires("d") == ("a", "b", "c")


# -- queries ------------------------------------------------------------------


def test_requires_and_required_by(stack: Graph) -> None:
    assert stack.requires("web") == ("net", "db")
    assert stack.requires("net") == ()
    assert stack.required_by("net") == ("db", "web")
    assert stack.required_by("web") == ("lb",)
    assert stack.required_by("lb") == ()


def test_unknown_node_query_raises_key_error(stack: Graph) -> None:
    with pytest.raises(KeyError):
        stack.requires("ghost")
    with pytest.raises(KeyError):
        stack.required_by("ghost")
    with pytest.raises(KeyError):
        stack.transitive_requirements("ghost")


def test_roots_require_nothing_and_leaves_are_required_by_nothing(stack: Graph) -> None:
    assert stack.roots() == ("net", "log")
    assert stack.leaves() == ("lb", "log")


def test_edges_are_sorted_by_name(stack: Graph) -> None:
    assert stack.edges() == (
        ("db", "net"),
        ("lb", "web"),
        ("web", "db"),
        ("web", "net"),
    )


def test_ready_counts_is_a_fresh_dict(stack: Graph) -> None:
    counts = stack.ready_counts()
    assert counts == {"net": 0, "db": 1, "web": 2, "lb": 1, "log": 0}
    counts["net"] = 99
    assert stack.ready_counts()["net"] == 0


def test_transitive_requirements(stack: Graph) -> None:
    assert stack.transitive_requirements("lb") == frozenset({"web", "db", "net"})
    assert stack.transitive_requirements("net") == frozenset()
    assert stack.transitive_required_by("net") == frozenset({"db", "web", "lb"})
    assert stack.transitive_required_by("lb") == frozenset()


def test_transitive_requirements_include_self_only_on_a_cycle() -> None:
    graph = Graph.build(["a", "b", "c"], [("a", "b"), ("b", "a"), ("c", "a")])
    assert graph.transitive_requirements("a") == frozenset({"a", "b"})
    assert graph.transitive_requirements("c") == frozenset({"a", "b"})


def test_subgraph_keeps_original_order_and_inner_edges(stack: Graph) -> None:
    sub = stack.subgraph(["lb", "web", "net"])
    assert list(sub) == ["net", "web", "lb"]
    assert sub.edges() == (("lb", "web"), ("web", "net"))
    assert sub.topological_order() == ("net", "web", "lb")


def test_subgraph_of_unknown_nodes_raises(stack: Graph) -> None:
    with pytest.raises(ValueError, match="unknown nodes: 'x', 'y'"):
        stack.subgraph(["web", "y", "x"])


# -- orders -------------------------------------------------------------------


def test_topological_order_puts_requirements_first(stack: Graph) -> None:
    order = stack.topological_order()
    assert order == ("net", "log", "db", "web", "lb")
    assert_respects_edges(stack, order)


def test_reverse_order_puts_requirers_first(stack: Graph) -> None:
    order = stack.reverse_order()
    assert order == ("lb", "log", "web", "db", "net")
    assert_respects_edges(stack, order[::-1])


def test_ties_follow_node_insertion_order() -> None:
    graph = Graph.build(["c", "a", "b"], [])
    assert graph.topological_order() == ("c", "a", "b")
    assert graph.reverse_order() == ("c", "a", "b")
    # Nodes freed by the same node come out in insertion order too.
    fan = Graph.build(["z", "y", "x", "hub"], [("z", "hub"), ("x", "hub"), ("y", "hub")])
    assert fan.topological_order() == ("hub", "z", "y", "x")


def test_order_ignores_edge_order() -> None:
    nodes = [f"n{i}" for i in range(50)]
    edges = [(nodes[i], nodes[j]) for i in range(50) for j in range(i) if (i * j) % 7 == 1]
    one = Graph.build(nodes, edges)
    other = Graph.build(nodes, reversed(edges))
    assert one.topological_order() == other.topological_order()
    assert one.reverse_order() == other.reverse_order()
    assert_respects_edges(one, one.topological_order())


# -- cycles -------------------------------------------------------------------


def test_acyclic_graph_has_no_cycle(stack: Graph) -> None:
    assert stack.find_cycle() is None


def test_self_edge_is_a_cycle_of_one() -> None:
    graph = Graph.build(["a", "b"], [("a", "a"), ("b", "a")])
    assert graph.find_cycle() == ["a", "a"]
    with pytest.raises(CycleError) as info:
        graph.topological_order()
    assert info.value.cycle == ("a", "a")
    assert str(info.value) == "Circular Dependency Found: a -> a"


def test_cycle_of_two() -> None:
    graph = Graph.build(["x", "a", "b"], [("a", "b"), ("b", "a"), ("x", "a")])
    assert graph.find_cycle() == ["a", "b", "a"]
    with pytest.raises(CycleError, match=r"^Circular Dependency Found: a -> b -> a$"):
        graph.reverse_order()


def test_cycle_of_n_is_reported_in_edge_order_from_earliest_node() -> None:
    # The search enters the loop at d, but the report starts at a.
    nodes = ["a", "b", "c", "d", "start"]
    edges = [("start", "d"), ("d", "a"), ("a", "b"), ("b", "c"), ("c", "d")]
    graph = Graph.build(nodes, edges)
    assert graph.find_cycle() == ["a", "b", "c", "d", "a"]
    with pytest.raises(CycleError, match=r"^Circular Dependency Found: a -> b -> c -> d -> a$"):
        graph.topological_order()


def test_cycle_behind_acyclic_part_is_found() -> None:
    nodes = ["ok1", "ok2", "p", "q", "r"]
    edges = [("ok2", "ok1"), ("p", "ok2"), ("p", "q"), ("q", "r"), ("r", "q")]
    assert Graph.build(nodes, edges).find_cycle() == ["q", "r", "q"]


def test_cycle_error_is_a_value_error_and_pickles() -> None:
    err = CycleError(["a", "b", "a"])
    assert isinstance(err, ValueError)
    again = pickle.loads(pickle.dumps(err))
    assert again.cycle == ("a", "b", "a")
    assert str(again) == str(err)
    assert repr(err) == "CycleError(['a', 'b', 'a'])"


# -- scale: no recursion, right answers ----------------------------------------

BIG = 100_000


def test_long_chain_without_recursion() -> None:
    # n0 requires n1 requires ... n99999: deeper than any recursion limit.
    nodes = [f"n{i}" for i in range(BIG)]
    graph = Graph.build(nodes, ((nodes[i], nodes[i + 1]) for i in range(BIG - 1)))
    assert graph.find_cycle() is None
    assert graph.topological_order() == tuple(reversed(nodes))
    assert graph.reverse_order() == tuple(nodes)
    assert graph.roots() == (nodes[-1],)
    assert graph.leaves() == (nodes[0],)
    assert len(graph.transitive_requirements(nodes[0])) == BIG - 1
    assert len(graph.transitive_required_by(nodes[-1])) == BIG - 1


def test_long_chain_closed_into_a_cycle() -> None:
    nodes = [f"n{i}" for i in range(BIG)]
    edges = [(nodes[i], nodes[i + 1]) for i in range(BIG - 1)]
    edges.append((nodes[-1], nodes[0]))
    graph = Graph.build(nodes, edges)
    cycle = graph.find_cycle()
    assert cycle is not None
    assert cycle == [*nodes, nodes[0]]
    with pytest.raises(CycleError):
        graph.topological_order()


def test_wide_graph() -> None:
    # One hub required by 100,000 nodes, each required by one top node.
    leaves = [f"w{i}" for i in range(BIG)]
    edges = [(leaf, "hub") for leaf in leaves] + [("top", leaf) for leaf in leaves]
    graph = Graph.build(["hub", *leaves, "top"], edges)
    order = graph.topological_order()
    assert order == ("hub", *leaves, "top")
    assert graph.reverse_order() == ("top", *leaves, "hub")
    assert graph.ready_counts()["top"] == BIG
    assert graph.find_cycle() is None
    assert len(graph.subgraph([*leaves[:10], "hub"]).edges()) == 10
