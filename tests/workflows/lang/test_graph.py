"""The graph a workflow draws: transitions labelled by their clause for a
direct workflow, requires edges for a reverse one."""

from __future__ import annotations

from convection.workflows import Edge, parse_workflows, workflow_graph

from ._helpers import fixture


def test_direct_workflow_edges_are_labelled_by_clause() -> None:
    specs, _ = parse_workflows(fixture("rolling_deploy.yaml"))
    graph = workflow_graph(specs[0])
    assert graph.start == ("check_input",)
    assert graph.outgoing("check_input") == (
        Edge("check_input", "report_failure", "error"),
        Edge("check_input", "fetch_package", "success", "<% len($.nodes) > 0 %>"),
        Edge("check_input", "fail", "success", "<% len($.nodes) = 0 %>", command=True),
    )
    assert {e.source for e in graph.incoming("undrain")} == {"drain_nodes", "health_check"}
    assert graph.incoming("fail") == ()
    kinds = {(e.source, e.target): e.kind for e in graph.edges}
    assert kinds[("install", "health_check")] == "complete"
    assert kinds[("health_check", "pause")] == "error"


def test_reverse_workflow_edges_point_from_requirement_to_dependent() -> None:
    specs, _ = parse_workflows(fixture("murano_environment.yaml"))
    graph = workflow_graph(specs[0])
    assert graph.type == "reverse"
    assert graph.start == ("network_ready",)
    assert sorted(e.source for e in graph.incoming("service_deployed")) == [
        "network_ready",
        "vm1_configured",
        "vm2_configured",
    ]
    assert all(e.kind == "requires" for e in graph.edges)
    assert len(graph.edges) == 9


def test_graph_as_json() -> None:
    text = "version: '2.0'\nwf:\n  tasks:\n    a:\n      on-success: b\n    b: {action: std.noop}\n"
    specs, _ = parse_workflows(text)
    assert workflow_graph(specs[0]).to_dict() == {
        "workflow": "wf",
        "type": "direct",
        "nodes": ["a", "b"],
        "start": ["a"],
        "edges": [{"from": "a", "to": "b", "kind": "success", "condition": None, "command": False}],
    }
