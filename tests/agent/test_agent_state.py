"""The agent's pieces without a server: parsing metadata, its state, its URL."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from convection.agent import Agent, AgentState, parse_derived
from convection.agent.client import AgentHttpError, endpoint
from convection.software import InvalidConfig

DOC: dict[str, Any] = {
    "id": "cfg-1",
    "name": "hello",
    "group": "script",
    "config": '#!/bin/sh\necho "hi $who"\necho run >> "$COUNT"\n',
    "options": {},
    "inputs": [
        {"name": "who", "type": "String", "value": "there"},
        {"name": "COUNT", "type": "String", "value": ""},
        {"name": "deploy_action", "type": "String", "value": "CREATE"},
    ],
    "outputs": [],
}


def test_metadata_parses_to_the_derived_config_hooks_run() -> None:
    derived = parse_derived(DOC)
    assert derived.id == "cfg-1" and derived.group == "script"
    assert derived.input_values()["who"] == "there"
    assert derived.action == "CREATE"
    with pytest.raises(InvalidConfig):
        parse_derived({**DOC, "inputs": [{"value": 1}]})


def test_state_records_reports_and_refuses_odd_ids(tmp_path: Path) -> None:
    state = AgentState(tmp_path)
    assert not state.reported("cfg-1")
    state.mark_reported("cfg-1", "dep-1", "COMPLETE")
    assert AgentState(tmp_path).reported("cfg-1")  # durable: a new process sees it
    with pytest.raises(ValueError):
        state.reported("../escape")


def test_the_endpoint_needs_a_project() -> None:
    assert endpoint("http://h:8004/v1/p/", None) == "http://h:8004/v1/p"
    assert endpoint("http://h:8004", "p") == "http://h:8004/v1/p"
    assert endpoint("http://h:8004/v1", "p") == "http://h:8004/v1/p"
    with pytest.raises(AgentHttpError, match="--project"):
        endpoint("http://h:8004", None)


class FakeClient:
    """The API as the agent sees it: one IN_PROGRESS deployment of DOC."""

    server_id = "srv"

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        self.reports: list[tuple[str, Mapping[str, Any]]] = []

    def metadata(self) -> list[Mapping[str, Any]]:
        return [self.doc]

    def deployments(self) -> list[Mapping[str, Any]]:
        return [{"id": "dep-1", "config_id": self.doc["id"], "status": "IN_PROGRESS"}]

    def report(self, deployment_id: str, body: Mapping[str, Any]) -> None:
        self.reports.append((deployment_id, body))


def test_a_deployment_runs_once_even_when_its_report_was_lost(tmp_path: Path) -> None:
    count = tmp_path / "count"
    doc = {**DOC, "inputs": [*DOC["inputs"][:1], {"name": "COUNT", "value": str(count)}]}
    client = FakeClient(doc)
    agent = Agent(client, AgentState(tmp_path / "state"))  # type: ignore[arg-type]
    assert asyncio.run(agent.poll_once()) == 1
    assert asyncio.run(agent.poll_once()) == 0  # reported: nothing to do
    [(deployment_id, body)] = client.reports
    assert deployment_id == "dep-1" and body["status"] == "COMPLETE"
    assert body["output_values"]["deploy_stdout"] == "hi there\n"
    for f in (tmp_path / "state" / "reported").iterdir():
        f.unlink()  # as if the agent died between the run and the report
    fresh = Agent(client, AgentState(tmp_path / "state"))  # type: ignore[arg-type]
    assert asyncio.run(fresh.poll_once()) == 1
    assert len(client.reports) == 2 and client.reports[1][1]["status"] == "COMPLETE"
    assert count.read_text().splitlines() == ["run"]
