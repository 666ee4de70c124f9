"""The SQL store's bulk paths give what the general ones would, cheaper."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from convection.store._sql_apply import uuid4_texts
from convection.store.api import AppendEvent, ResourceRecord, StackRecord, Store
from convection.store.sql import SQLStore


def test_event_uuids_are_random_version_4_uuids() -> None:
    texts = uuid4_texts(2000)
    assert len(set(texts)) == 2000
    for text in texts:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == text  # canonical: lower case, dashes in place


def test_appended_events_carry_distinct_uuids(store: Store) -> None:
    store.create_stack(StackRecord(id="s1", project="p", name="s", action="CREATE", status="x"))
    event = AppendEvent("s1", "a", "T", None, "CREATE", "IN_PROGRESS", "state changed")
    store.apply([event, event, event])
    found = [e.uuid for e in store.list_events("s1")]
    assert len(set(found)) == 3 and all(uuid.UUID(u).version == 4 for u in found)


def test_a_read_shares_repeated_text_values(store_factory: Callable[[], Store]) -> None:
    store = store_factory()
    store.create_stack(StackRecord(id="s1", project="p", name="s", action="CREATE", status="x"))
    rows = [
        ResourceRecord(
            id=0, stack_id="s1", name=f"r{i}", type="OS::Heat::None", action="INIT", status="OK"
        )
        for i in range(3)
    ]
    store.add_resources(rows)
    found = store.list_resources("s1")
    assert [r.name for r in found] == ["r0", "r1", "r2"]
    if isinstance(store, SQLStore):  # the memory store keeps what it was given
        assert len({id(r.type) for r in found}) == 1
        assert len({id(r.stack_id) for r in found}) == 1
        assert len({id(r.name) for r in found}) == 3
