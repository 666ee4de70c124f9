"""``/v2/environments`` and ``/v2/cron_triggers`` on a live ``convection
server``, through python-mistralclient's own managers, unchanged; a
trigger made due (its row moved into the past) fires in the server's
engine."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from mistralclient.api.base import APIException
from mistralclient.api.v2.client import Client as Mistral

from convection.store.schema import cron_triggers

from .conftest import LiveServer, start_server, wait_for

HELLO = """\
version: '2.0'
hello_cron:
  input:
    - name
  output:
    greeting: <% $.greeting %>
    word: <% env().word %>
  tasks:
    greet:
      action: std.echo output="Hello, <% $.name %>"
      publish:
        greeting: <% task().result %>
"""


@pytest.fixture
def mistral(server: LiveServer, project: str) -> Mistral:
    return Mistral(mistral_url=f"{server.url}/v2", auth_token="any", project_id=project)


@pytest.fixture
def v2(server: LiveServer, project: str) -> Callable[..., httpx.Response]:
    def call(method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {"X-Project-Id": project, **kw.pop("headers", {})}
        return httpx.request(method, f"{server.url}/v2{path}", headers=headers, timeout=30, **kw)

    return call


def _refused(call: Callable[[], object], code: int) -> str:
    with pytest.raises(APIException) as refused:
        call()
    assert refused.value.error_code == code, refused.value.error_message
    return str(refused.value.error_message)


def test_environments_through_mistralclient(mistral: Mistral, server: LiveServer) -> None:
    envs = mistral.environments
    made = envs.create(name="prod", description="d", variables={"word": "w", "n": 1})
    assert made.name == "prod" and made.variables == {"word": "w", "n": 1}
    assert made.scope == "private"
    assert envs.get("prod").variables == {"word": "w", "n": 1}
    assert [e.name for e in envs.list()] == ["prod"]
    assert "Duplicate entry for Environment" in _refused(
        lambda: envs.create(name="prod", variables={}), 409
    )
    updated = envs.update(name="prod", variables={"word": "x"}, scope="public")
    assert updated.variables == {"word": "x"} and updated.scope == "public"
    other = Mistral(mistral_url=f"{server.url}/v2", auth_token="any", project_id="p-other-env")
    assert other.environments.get("prod").variables == {"word": "x"}  # public: readable
    _refused(lambda: other.environments.delete("prod"), 403)
    envs.delete("prod")
    assert _refused(lambda: envs.get("prod"), 404) == "Environment not found [name=prod]"


def test_environment_bodies(v2: Callable[..., httpx.Response]) -> None:
    made = v2("POST", "/environments", json={"name": "e", "variables": '{"a": 1}'})
    assert made.status_code == 201 and json.loads(made.json()["variables"]) == {"a": 1}
    bad = v2("POST", "/environments", json={"name": "e2", "variables": {}, "oops": 1})
    assert bad.status_code == 400 and bad.json()["faultstring"].startswith(
        "Please, check your environment definition. Only: ['name', 'description', 'variables'"
    )
    shown = v2("GET", "/environments/e", params={"fields": "name"}).json()
    assert shown == {"id": made.json()["id"], "name": "e"}
    page = v2("GET", "/environments", params={"limit": 1}).json()
    assert [e["name"] for e in page["environments"]] == ["e"] and "next" in page
    assert v2("DELETE", "/environments/e").status_code == 204


def test_cron_triggers_through_mistralclient(
    mistral: Mistral, v2: Callable[..., httpx.Response]
) -> None:
    mistral.workflows.create(HELLO)
    triggers = mistral.cron_triggers
    made = triggers.create(
        "every5", "hello_cron", {"name": "cron"}, {"env": {"word": "x"}}, "*/5 * * * *", None, 3
    )
    assert made.name == "every5" and made.pattern == "*/5 * * * *"
    assert made.remaining_executions == 3 and made.workflow_name == "hello_cron"
    assert json.loads(made.workflow_input) == {"name": "cron"}
    assert json.loads(made.workflow_params) == {"env": {"word": "x"}}
    assert triggers.get("every5").id == made.id and triggers.get(made.id).name == "every5"
    assert [t.name for t in triggers.list()] == ["every5"]
    message = _refused(
        lambda: triggers.create("bad", "hello_cron", {"name": "x"}, None, None, None, None), 400
    )
    assert message == "Pattern or first_execution_time must be specified."
    message = _refused(
        lambda: triggers.create("bad", "hello_cron", {"name": "x"}, None, "nope", None, None), 400
    )
    assert message == "The specified pattern is not valid: nope"
    soon = (datetime.now(UTC) + timedelta(seconds=5)).strftime("%Y-%m-%d %H:%M")
    message = _refused(
        lambda: triggers.create("bad", "hello_cron", {"name": "x"}, None, None, soon, None), 400
    )
    assert message == "first_execution_time must be at least 1 minute in the future."
    assert "Duplicate entry for cron trigger every5" in _refused(
        lambda: triggers.create("every5", "hello_cron", {"name": "x"}, None, "* * * * *"), 409
    )
    fault = v2("GET", "/cron_triggers/nope").json()["faultstring"]
    assert fault == "Cron trigger not found [identifier=nope]"
    triggers.delete("every5")
    assert triggers.list() == []


def test_a_due_trigger_fires_in_the_server(mistral: Mistral, server: LiveServer) -> None:
    mistral.workflows.create(HELLO)
    mistral.environments.create(name="words", variables={"word": "stored"})
    made = mistral.cron_triggers.create(
        "due", "hello_cron", {"name": "tick"}, {"env": "words"}, "0 0 1 1 *", None, None
    )
    past = datetime.now(UTC) - timedelta(minutes=5)
    engine = sa.create_engine(server.db)
    try:
        with engine.begin() as conn:
            conn.execute(
                cron_triggers.update()
                .where(cron_triggers.c.id == made.id)
                .values(next_execution_time=past)
            )
    finally:
        engine.dispose()

    def done() -> Any:
        found = [e for e in mistral.executions.list() if e.workflow_name == "hello_cron"]
        return found if found and found[0].state == "SUCCESS" else None

    [listed] = wait_for(done, "the cron trigger's execution")
    execution = mistral.executions.get(listed.id)
    assert json.loads(execution.output) == {"greeting": "Hello, tick", "word": "stored"}
    assert json.loads(execution.description)["triggered_by"]["name"] == "due"
    moved = mistral.cron_triggers.get("due").next_execution_time
    assert moved > past.strftime("%Y-%m-%d %H:%M:%S")
    mistral.cron_triggers.delete("due")


def test_a_trigger_due_while_the_server_was_down_fires_once_after_restart(
    tmp_path: Path,
) -> None:
    """kill -9 the server, let the trigger fall due meanwhile, start it again
    on the same store: the missed time fires exactly once, and the trigger
    moves on to its next time (Mistral's rule)."""
    db, log = f"sqlite:///{tmp_path / 'cron.db'}", tmp_path / "server.log"
    first = start_server(db, log)
    second: LiveServer | None = None
    try:
        client = Mistral(mistral_url=f"{first.url}/v2", auth_token="any", project_id="ops")
        client.workflows.create(HELLO)
        client.environments.create(name="words", variables={"word": "after"})
        made = client.cron_triggers.create(
            "nightly", "hello_cron", {"name": "night"}, {"env": "words"}, "0 3 * * *"
        )
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(30)
        _move_into_the_past(db, made.id)
        second = start_server(db, log)
        client = Mistral(mistral_url=f"{second.url}/v2", auth_token="any", project_id="ops")

        def fired() -> Any:
            found = [e for e in client.executions.list() if e.workflow_name == "hello_cron"]
            return found if found and found[0].state == "SUCCESS" else None

        wait_for(fired, "the missed time's execution")
        time.sleep(2)  # more engine scans: none may fire the same time again
        assert len([e for e in client.executions.list() if e.workflow_name == "hello_cron"]) == 1
        assert client.cron_triggers.get("nightly").next_execution_time.endswith("03:00:00")
    finally:
        for live in (first, second):
            if live is not None:
                live.stop()


def _move_into_the_past(db: str, trigger_id: str) -> None:
    engine = sa.create_engine(db)
    try:
        with engine.begin() as conn:
            conn.execute(
                cron_triggers.update()
                .where(cron_triggers.c.id == trigger_id)
                .values(next_execution_time=datetime.now(UTC) - timedelta(hours=1))
            )
    finally:
        engine.dispose()
