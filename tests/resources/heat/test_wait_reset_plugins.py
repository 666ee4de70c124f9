"""The reset seam on its own (``InMemoryContext``): a deleted wait condition
asks its handle to forget its signals, and the handle forgets only those.
The engine suite is ``tests/convergence/test_wait_reset.py``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from convection.resources import signal_urls
from convection.resources.api import InMemoryContext, Peer, ResourcePlugin
from convection.resources.heat.none import NoneResource
from convection.resources.heat.wait_condition import AWSWaitCondition, HeatWaitCondition
from convection.resources.heat.wait_condition_handle import (
    SIGNALS,
    AWSWaitConditionHandle,
    HeatWaitConditionHandle,
)


def handle_peer(kind: str, name: str = "handle") -> Peer:
    return Peer(
        name=name,
        type=kind,
        action="CREATE",
        status="COMPLETE",
        physical_id="h-1",
        reference_id="h-1",
        properties={},
        attributes={},
        data={SIGNALS: [{"id": "1", "status": "SUCCESS"}]},
    )


@pytest.mark.parametrize(
    ("plugin", "kind", "props"),
    [
        (HeatWaitCondition(), "OS::Heat::WaitConditionHandle", {"handle": "h-1"}),
        (AWSWaitCondition(), "AWS::CloudFormation::WaitConditionHandle", {"Handle": "h-1"}),
    ],
)
def test_delete_asks_the_handle_to_reset(
    plugin: ResourcePlugin, kind: str, props: dict[str, Any]
) -> None:
    ctx = InMemoryContext(resource_name="wc", peers={"handle": handle_peer(kind)})
    assert asyncio.run(plugin.delete(ctx, props)) is None
    assert ctx.resets == ["handle"]
    assert ctx.writes == 0  # the wait condition writes nothing of its own


def test_delete_leaves_anything_but_a_handle_alone() -> None:
    """A create that failed on a handle that is no handle (Heat refuses it
    at create) must not reset that resource on delete."""
    ctx = InMemoryContext(resource_name="wc", peers={"other": handle_peer("OS::Heat::None")})
    asyncio.run(HeatWaitCondition().delete(ctx, {"handle": "h-1"}))
    asyncio.run(HeatWaitCondition().delete(ctx, {"handle": "gone"}))
    asyncio.run(HeatWaitCondition().delete(ctx, {}))  # never resolved (INIT row)
    assert ctx.resets == []


def test_the_handle_forgets_its_signals_but_keeps_its_token() -> None:
    token = {"token": "t", "url": "http://127.0.0.1:8004"}
    ctx = InMemoryContext(
        data={SIGNALS: [{"id": "1", "status": "SUCCESS"}], signal_urls.DATA_KEY: token}
    )
    asyncio.run(HeatWaitConditionHandle().reset(ctx, {}))
    assert ctx.data == {signal_urls.DATA_KEY: token}
    assert ctx.writes == 1
    asyncio.run(HeatWaitConditionHandle().reset(ctx, {}))  # again: nothing to do
    assert ctx.writes == 1


def test_a_reset_handle_counts_signal_ids_from_one_again() -> None:
    ctx = InMemoryContext(operation_id="signal:1")
    plugin = HeatWaitConditionHandle()
    asyncio.run(plugin.signal(ctx, {}, {}))
    asyncio.run(plugin.reset(ctx, {}))
    ctx.operation_id = "signal:2"
    asyncio.run(plugin.signal(ctx, {}, {"data": "new"}))
    assert [(e["id"], e["data"]) for e in ctx.data[SIGNALS]] == [("1", "new")]


def test_types_without_signals_have_nothing_to_reset() -> None:
    ctx = InMemoryContext(data={"x": 1})
    asyncio.run(NoneResource().reset(ctx, {}))
    asyncio.run(AWSWaitConditionHandle().reset(InMemoryContext(), {}))
    assert ctx.data == {"x": 1}
    assert ctx.writes == 0
