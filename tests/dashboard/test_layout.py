"""Where nodes are drawn: layers by dependency depth, in one pass."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from convection.dashboard.layout import DX, layered


def test_a_node_is_drawn_right_of_everything_it_needs() -> None:
    at = layered(["lb", "app", "db", "net"], [("net", "db"), ("db", "app"), ("app", "lb"),
                                              ("net", "app")])  # fmt: skip
    assert at["net"][0] < at["db"][0] < at["app"][0] < at["lb"][0]
    assert at["app"][0] == 2 * DX  # the longest path decides, not the shortest


def test_a_loop_back_to_an_earlier_task_still_places_every_node() -> None:
    """A direct workflow's on-error may go back to an earlier task."""
    at = layered(["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    assert set(at) == {"a", "b", "c", "d"}
    assert at["a"][0] < at["b"][0] < at["c"][0] < at["d"][0]


def test_a_wide_layer_wraps_into_columns() -> None:
    names = [f"r{i}" for i in range(10_000)]
    at = layered(names, [])
    xs = {x for x, _ in at.values()}
    assert len(xs) == 100  # sqrt(10,000) rows per column
    assert len(set(at.values())) == 10_000  # no two nodes on one spot


@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=80),
)
def test_every_acyclic_edge_points_right(pairs: list[tuple[int, int]]) -> None:
    names = [f"n{i}" for i in range(31)]
    edges = [(f"n{min(a, b)}", f"n{max(a, b)}") for a, b in pairs if a != b]
    at = layered(names, edges)
    assert set(at) == set(names)
    for source, target in edges:
        assert at[source][0] < at[target][0]
