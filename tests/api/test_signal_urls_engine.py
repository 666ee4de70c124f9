"""The engine's side of signal URLs, in-process on a real SQLite store: the
setting, ``ctx.api`` reaching plugins, tokens minted narrowed to their
resource and revoked when it is deleted or replaced. The HTTP side is
``test_signal_urls.py``."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from convection.cli.config import load_settings
from convection.cli.context import Invocation
from convection.common.errors import InvalidInput
from convection.convergence import EngineConfig
from convection.convergence.api_access import api_access
from convection.model.compiler import StackInputs
from convection.service.stacks import Stacks, StacksConfig
from convection.store.sql import SQLStore
from convection.tokens._tokens import Tokens

API = "http://198.51.100.7:8004"
TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  handle: {type: OS::Heat::WaitConditionHandle}
  again: {type: OS::Heat::UpdateWaitConditionHandle}
outputs:
  curl: {value: {get_attr: [handle, curl_cli]}}
"""


@pytest.fixture
def stacks(tmp_path: Path) -> Iterator[Stacks]:
    store = SQLStore(f"sqlite:///{tmp_path / 'stacks.db'}")
    config = StacksConfig(engine=EngineConfig(api_url=API, scan_seconds=0.05))
    yield Stacks(store, config=config)
    store.close()


def create(stacks: Stacks, name: str = "s") -> str:
    inputs = StackInputs.from_text(textwrap.dedent(TEMPLATE))
    stack_id = str(stacks.create("proj", name, inputs)["id"])
    assert stacks.wait(stack_id, timeout=60)["stack_status"] == "CREATE_COMPLETE"
    return stack_id


def attributes(stacks: Stacks, stack_id: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = stacks.resource("proj", stack_id, name)["attributes"]
    return found


def test_plugins_mint_narrowed_tokens_through_the_engine(stacks: Stacks) -> None:
    stack_id = create(stacks)
    got = attributes(stacks, stack_id, "handle")
    assert got["endpoint"] == f"{API}/v1/proj/stacks/s/{stack_id}/resources/handle/signal"
    record = Tokens(stacks.store).verify(got["token"])
    assert record is not None
    assert (record.project, record.stack_id, record.resource_name) == ("proj", stack_id, "handle")
    assert record.server_id is None
    # The secret is in the attributes (on purpose, as Heat) but no event.
    events = stacks.events("proj", stack_id)
    assert events and not any(got["token"] in str(e) for e in events)


def test_delete_and_replacement_revoke_the_tokens(stacks: Stacks) -> None:
    tokens = Tokens(stacks.store)
    stack_id = create(stacks)
    handle = attributes(stacks, stack_id, "handle")["token"]
    first = str(stacks.resource("proj", stack_id, "again")["physical_resource_id"])
    old = _token_of(stacks, stack_id, "again")
    stacks.update("proj", stack_id, StackInputs.from_text(textwrap.dedent(TEMPLATE)))
    assert stacks.wait(stack_id, timeout=60)["stack_status"] == "UPDATE_COMPLETE"
    assert str(stacks.resource("proj", stack_id, "again")["physical_resource_id"]) != first
    new = _token_of(stacks, stack_id, "again")
    assert new != old and tokens.verify(old) is None and tokens.verify(new) is not None
    assert tokens.verify(handle) is not None  # not replaced: the same token
    stacks.delete("proj", stack_id)
    stacks.wait(stack_id, timeout=60)
    assert tokens.verify(handle) is None and tokens.verify(new) is None


def _token_of(stacks: Stacks, stack_id: str, name: str) -> str:
    """An AWS-style handle's token, read off its pre-signed reference URL."""
    rows = stacks.store.list_resources(stack_id, current_only=True)
    row = next(r for r in rows if r.name == name)
    url = str(row.reference_id)
    assert url.startswith(f"{API}/v1/waitcondition/proj/stacks/s/{stack_id}/resources/{name}?")
    return url.rpartition("token=")[2]


def test_a_stack_cannot_revoke_another_stacks_token(stacks: Stacks) -> None:
    one, two = create(stacks, "one"), create(stacks, "two")
    secret = attributes(stacks, one, "handle")["token"]
    other = stacks.store.get_stack_by_id(two)
    assert other is not None
    access = api_access(stacks.store, API, other)
    assert access is not None
    access.revoke_token(secret)
    assert Tokens(stacks.store).verify(secret) is not None
    assert api_access(stacks.store, None, other) is None


def test_api_url_setting() -> None:
    url = load_settings(environ={"CONVECTION_API_URL": "https://h.example:8004/"}).settings
    assert url.api_url == "https://h.example:8004"
    assert load_settings(environ={}).settings.api_url is None
    with pytest.raises(InvalidInput, match="api_url"):
        load_settings(environ={"CONVECTION_API_URL": "h.example:8004"})


def test_server_default_yields_to_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVECTION_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.delenv("CONVECTION_API_URL", raising=False)
    inv = Invocation()
    inv.default("api_url", "http://127.0.0.1:9")
    assert inv.settings.api_url == "http://127.0.0.1:9"
    monkeypatch.setenv("CONVECTION_API_URL", "http://proxy.example")
    inv = Invocation()
    inv.default("api_url", "http://127.0.0.1:9")
    assert inv.settings.api_url == "http://proxy.example"
