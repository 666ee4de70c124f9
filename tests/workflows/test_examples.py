"""The workflows in examples/ validate as Mistral would take them, and the
Murano-style state graph draws the dependencies its README promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from convection.workflows import parse_workflows, workflow_graph

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workflows"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_each_example_validates_without_warnings(path: Path) -> None:
    specs, diags = parse_workflows(path.read_text(), str(path))
    assert [str(d) for d in diags] == []
    assert specs


def test_the_state_graph_reaches_deployed_only_through_both_vms() -> None:
    path = EXAMPLES / "murano_state_graph.yaml"
    [spec], _ = parse_workflows(path.read_text(), str(path))
    graph = workflow_graph(spec)
    assert graph.type == "reverse" and graph.start == ("network_created",)
    needs = {t: {e.source for e in graph.incoming(t)} for t in graph.nodes}
    assert needs["service_installed"] == {"vm1_configured", "vm2_configured"}
    assert needs["service_deployed"] == {"service_installed"}
    assert needs["vm1_created"] == needs["vm2_created"] == {"network_created"}
