"""store.software on every backend: Heat's software rows, replaced whole."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from convection.store.api import Store
from convection.store.software import SoftwareConfigRecord, SoftwareDeploymentRecord


def _config(config_id: str, project: str = "p", name: str = "c") -> SoftwareConfigRecord:
    body = {"config": "echo", "inputs": [{"name": "x", "value": 1}], "outputs": [], "options": {}}
    return SoftwareConfigRecord(
        id=config_id,
        project=project,
        name=name,
        group="script",
        config=body,
        secret_inputs=("x",),
        stack_id="s",
        resource_name="r",
    )


def test_configs_round_trip_page_and_delete(store: Store) -> None:
    rows = store.software
    for n in range(3):
        rows.put_config(_config(f"c{n}"))
    rows.put_config(_config("other", project="q"))
    got = rows.get_config("c1")
    assert got is not None and got.secret_inputs == ("x",) and got.config["config"] == "echo"
    assert got.created_at is not None and got.created_at.tzinfo is not None
    assert [c.id for c in rows.list_configs("p")] == ["c0", "c1", "c2"]
    assert [c.id for c in rows.list_configs("p", limit=1, marker="c0")] == ["c1"]
    assert rows.list_configs("p", marker="unknown") == []
    rows.put_config(_config("c1", name="renamed"))  # a re-run: replaced, same age
    again = rows.get_config("c1")
    assert again is not None and again.name == "renamed" and again.created_at == got.created_at
    assert rows.delete_config("c1") and not rows.delete_config("c1")
    assert rows.get_config("c1") is None


def test_deployments_filter_update_and_delete(store: Store) -> None:
    rows = store.software
    for ident, server in (("d1", "a"), ("d2", "b"), ("d3", "a")):
        rows.put_deployment(
            SoftwareDeploymentRecord(
                id=ident,
                project="p",
                server_id=server,
                config_id="c",
                input_values={"x": 1},
                status="IN_PROGRESS",
            )
        )
    assert [d.id for d in rows.list_deployments("p", server_id="a")] == ["d1", "d3"]
    assert len(rows.list_deployments("p")) == 3 and rows.list_deployments("q") == []
    now = datetime.now(UTC)
    done = rows.update_deployment(
        "d1", {"status": "COMPLETE", "output_values": {"deploy_stdout": "hi"}}, now
    )
    assert done is not None and done.status == "COMPLETE"
    assert done.output_values == {"deploy_stdout": "hi"} and done.input_values == {"x": 1}
    assert done.updated_at is not None
    assert rows.update_deployment("missing", {"status": "FAILED"}, now) is None
    with pytest.raises(ValueError):
        rows.update_deployment("d1", {"server_id": "b"}, now)
    assert rows.delete_deployment("d2") and rows.get_deployment("d2") is None
