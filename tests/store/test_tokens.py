"""API tokens on every store (memory, SQLite, PostgreSQL): issuing,
verifying, expiry, revocation, narrowing, and revocation when a stack is
deleted. The server and ``convection token`` are separate processes on one
store, so tokens are also checked across independent store instances."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from convection.common.errors import NotFound
from convection.model.compiler import StackInputs
from convection.service.stacks import Stacks
from convection.store.api import Store
from convection.tokens._tokens import SECRET_PREFIX, Role, Tokens, hash_secret


def test_issue_and_verify(store: Store) -> None:
    tokens = Tokens(store)
    issued = tokens.issue("p1", Role.READER, description="ci")
    assert issued.secret.startswith(SECRET_PREFIX)
    found = tokens.verify(issued.secret)
    assert found is not None
    assert (found.id, found.project, found.role) == (issued.record.id, "p1", "reader")
    assert found.description == "ci"
    assert found.created_at is not None and found.created_at.tzinfo is not None


@pytest.mark.parametrize("bad", [None, "", "cvt_nonsense", "Bearer x"])
def test_unknown_secrets_do_not_verify(store: Store, bad: str | None) -> None:
    tokens = Tokens(store)
    tokens.issue("p1")
    assert tokens.verify(bad) is None


def test_only_the_hash_is_stored(store: Store) -> None:
    tokens = Tokens(store)
    issued = tokens.issue("p1")
    (listed,) = tokens.list()
    assert listed.secret_hash == hash_secret(issued.secret)
    assert issued.secret not in repr(listed)
    assert store.find_token(issued.secret) is None  # looked up by hash only


def test_secrets_differ_every_time(store: Store) -> None:
    tokens = Tokens(store)
    secrets = {tokens.issue("p1").secret for _ in range(20)}
    assert len(secrets) == 20


def test_expired_tokens_do_not_verify(store: Store) -> None:
    tokens = Tokens(store)
    now = datetime.now(UTC)
    old = tokens.issue("p1", expires_at=now - timedelta(seconds=1))
    live = tokens.issue("p1", expires_at=now + timedelta(hours=1))
    assert tokens.verify(old.secret) is None
    assert tokens.verify(live.secret) is not None


def test_revoke(store: Store) -> None:
    tokens = Tokens(store)
    kept, gone = tokens.issue("p1"), tokens.issue("p1")
    tokens.revoke(gone.record.id)
    assert tokens.verify(gone.secret) is None
    assert tokens.verify(kept.secret) is not None
    revoked = {t.id: t.revoked_at for t in tokens.list()}
    assert revoked[gone.record.id] is not None and revoked[kept.record.id] is None
    with pytest.raises(NotFound):
        tokens.revoke(gone.record.id)  # already revoked
    with pytest.raises(NotFound):
        tokens.revoke("no-such-token")


def test_list_by_project_oldest_first(store: Store) -> None:
    tokens = Tokens(store)
    ids = [tokens.issue(p).record.id for p in ("a", "b", "a")]
    assert [t.id for t in tokens.list("a")] == [ids[0], ids[2]]
    assert [t.id for t in tokens.list()] == ids
    assert tokens.list("nobody") == []


def test_narrowed_tokens_and_revoke_stack(store: Store) -> None:
    tokens = Tokens(store)
    project = tokens.issue("p1")
    signal = tokens.issue_signal("p1", "stack-1", "handle")
    agent = tokens.issue_server("p1", "server-9", stack_id="stack-1")
    other = tokens.issue_signal("p1", "stack-2", "handle")
    found = tokens.verify(signal.secret)
    assert found is not None and (found.stack_id, found.resource_name) == ("stack-1", "handle")
    found = tokens.verify(agent.secret)
    assert found is not None and found.server_id == "server-9"

    assert tokens.revoke_stack("stack-1") == 2
    assert tokens.revoke_stack("stack-1") == 0  # idempotent
    assert tokens.verify(signal.secret) is None
    assert tokens.verify(agent.secret) is None
    assert tokens.verify(other.secret) is not None
    assert tokens.verify(project.secret) is not None


def test_another_store_instance_sees_issue_and_revoke(
    store_factory: Callable[[], Store],
) -> None:
    """``convection token`` and the server open the store separately."""
    cli, server = Tokens(store_factory()), Tokens(store_factory())
    issued = cli.issue("p1")
    assert server.verify(issued.secret) is not None
    cli.revoke(issued.record.id)
    assert server.verify(issued.secret) is None


def test_deleting_a_stack_revokes_its_narrowed_tokens(store: Store) -> None:
    stacks = Stacks(store)
    template = "heat_template_version: 2018-08-31\nresources:\n  r: {type: OS::Heat::None}\n"
    stack_id = str(stacks.create("p1", "s", StackInputs.from_text(template))["id"])
    assert stacks.wait(stack_id, timeout=60)["stack_status"] == "CREATE_COMPLETE"
    tokens = Tokens(store)
    signal = tokens.issue_signal("p1", stack_id, "r")
    project = tokens.issue("p1")

    stacks.delete("p1", stack_id)
    assert tokens.verify(signal.secret) is not None  # alive while the delete runs
    assert stacks.wait(stack_id, timeout=60)["stack_status"] == "DELETE_COMPLETE"
    assert tokens.verify(signal.secret) is None
    assert tokens.verify(project.secret) is not None
