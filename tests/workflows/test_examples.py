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


def test_the_state_graph_runs_to_deployed(tmp_path: Path) -> None:
    """``execution create deploy_service --param task_name=service_deployed``."""
    from convection.service import Stacks
    from convection.store.sql import SQLStore
    from convection.workflows import create_execution, create_workflows, list_tasks, wait_execution

    store = SQLStore(f"sqlite:///{tmp_path / 'wf.db'}")
    create_workflows(store, "demo", (EXAMPLES / "murano_state_graph.yaml").read_text())
    started = create_execution(
        store, "demo", "deploy_service", params={"task_name": "service_deployed"}
    )
    done = wait_execution(Stacks(store), started["id"], timeout=30)
    assert done["state"] == "SUCCESS", done["state_info"]
    names = [t["name"] for t in list_tasks(store, "demo", execution_id=done["id"])]
    assert "service_deployed" in names and len(names) == len(set(names))
    store.close()
