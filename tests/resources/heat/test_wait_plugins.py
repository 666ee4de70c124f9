"""The wait condition plugins on their own, through the plugin seam
(``InMemoryContext``, a clock the test moves). The engine suite is
``tests/convergence/test_wait_condition.py``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from convection.resources.api import InMemoryContext, Peer, ResourceFailure, UpdateAction, Wait
from convection.resources.heat.wait_condition import (
    AWSWaitCondition,
    HeatWaitCondition,
    InvalidHandle,
    WaitConditionFailure,
    WaitConditionTimeout,
)
from convection.resources.heat.wait_condition_handle import (
    AWSWaitConditionHandle,
    HeatWaitConditionHandle,
    UpdateWaitConditionHandle,
)
from convection.resources.registry import default_registry

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def handle_ctx(op: str = "signal:1") -> InMemoryContext:
    return InMemoryContext(resource_name="handle", physical_id="h-1", operation_id=op)


def send(ctx: InMemoryContext, details: Any, op: str, plugin: Any = None) -> str | None:
    ctx.operation_id = op
    return run((plugin or HeatWaitConditionHandle()).signal(ctx, {}, details))


# -- the handle ----------------------------------------------------------------


def test_heat_handle_fills_in_heat_defaults() -> None:
    ctx = handle_ctx()
    assert send(ctx, {}, "signal:1") == "status:SUCCESS reason:Signal 1 received"
    send(ctx, {"status": "FAILURE", "reason": "bad", "data": [1], "id": 7}, "signal:2")
    assert ctx.data["signals"] == [
        {"id": "1", "status": "SUCCESS", "reason": "Signal 1 received", "data": None,
         "op": "signal:1"},
        {"id": "7", "status": "FAILURE", "reason": "bad", "data": [1], "op": "signal:2"},
    ]  # fmt: skip


def test_same_id_overwrites_in_place_and_redelivery_is_a_no_op() -> None:
    ctx = handle_ctx()
    send(ctx, {"id": "a", "data": 1}, "signal:1")
    send(ctx, {"id": "b", "data": 2}, "signal:2")
    send(ctx, {"id": "a", "data": 3}, "signal:3")
    writes = ctx.writes
    send(ctx, {"id": "a", "data": 3}, "signal:3")  # the same signal again
    assert ctx.writes == writes
    assert [(e["id"], e["data"]) for e in ctx.data["signals"]] == [("a", 3), ("b", 2)]


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        ({"status": "success"}, "status 'success' is not one of SUCCESS, FAILURE"),
        ({"extra": 1}, "unknown keys ['extra']"),
        (["SUCCESS"], "the signal must be a JSON object"),
    ],
)
def test_heat_handle_refuses_bad_signals(details: Any, expected: str) -> None:
    ctx = handle_ctx()
    with pytest.raises(ResourceFailure) as caught:
        send(ctx, details, "signal:1")
    assert caught.value.message.startswith("resources.handle: Metadata format invalid")
    assert expected in caught.value.message
    assert ctx.writes == 0


def test_aws_handle_takes_all_four_keys_and_ignores_empty() -> None:
    ctx = handle_ctx()
    aws = AWSWaitConditionHandle()
    assert send(ctx, {}, "signal:1", aws) is None
    assert ctx.writes == 0
    with pytest.raises(ResourceFailure, match=r"missing keys \['Reason'\]"):
        send(ctx, {"Status": "SUCCESS", "UniqueId": "1", "Data": "x"}, "signal:2", aws)
    body = {"Status": "SUCCESS", "Reason": "ok", "UniqueId": 5, "Data": "x"}
    assert send(ctx, body, "signal:3", aws) == "status:SUCCESS reason:ok"
    assert ctx.data["signals"][0]["id"] == "5"


def test_handle_attributes_are_honest_without_an_api() -> None:
    ctx = handle_ctx()
    ctx.stack_id = "0c6e"
    plugin = HeatWaitConditionHandle()
    attr = {n: run(plugin.attribute(ctx, {}, n)) for n in plugin.attributes_schema}
    assert attr["token"] is None and attr["endpoint"] is None
    assert attr["curl_cli"] == "convection stack resource signal 0c6e handle"
    signal = json.loads(str(attr["signal"]))
    assert signal["command"] == attr["curl_cli"] and signal["resource_name"] == "handle"


def test_handle_create_takes_an_id_once() -> None:
    ctx = InMemoryContext(resource_name="handle")
    run(HeatWaitConditionHandle().create(ctx, {}))
    first = ctx.physical_id
    run(HeatWaitConditionHandle().create(ctx, {}))  # a re-run after a crash
    assert first is not None and ctx.physical_id == first and ctx.writes == 1


def test_update_handle_is_always_replaced() -> None:
    decision = UpdateWaitConditionHandle.decide_update({}, {})
    assert decision.action is UpdateAction.REPLACE
    assert UpdateWaitConditionHandle.visit_on_update
    assert not HeatWaitConditionHandle.visit_on_update


def test_types_are_registered_with_heat_schemas() -> None:
    registry = default_registry()
    for name in (
        "OS::Heat::WaitConditionHandle",
        "OS::Heat::WaitCondition",
        "OS::Heat::UpdateWaitConditionHandle",
        "AWS::CloudFormation::WaitConditionHandle",
        "AWS::CloudFormation::WaitCondition",
    ):
        assert registry.get(name) is not None
    wc = HeatWaitCondition.properties_schema
    assert wc["handle"].required and wc["timeout"].required
    assert wc["count"].default == 1 and wc["count"].update_allowed
    assert not wc["timeout"].update_allowed and not wc["handle"].update_allowed
    assert set(AWSWaitCondition.properties_schema) == {"Handle", "Timeout", "Count"}
    assert set(HeatWaitConditionHandle.attributes_schema) == {
        "token",
        "endpoint",
        "curl_cli",
        "signal",
    }


@pytest.mark.parametrize("timeout", [0, 43201])
def test_timeout_range_is_heats(timeout: int) -> None:
    props = {"handle": "h", "timeout": timeout}
    _, diags = HeatWaitCondition.validate(props, ("resources", "wc", "properties"))
    assert any(d.is_error and d.path[-1] == "timeout" for d in diags)


# -- the wait condition ----------------------------------------------------------


def peer(ctx: InMemoryContext, entries: list[dict[str, Any]], kind: str) -> None:
    ctx.peers["handle"] = Peer(
        name="handle",
        type=kind,
        action="CREATE",
        status="COMPLETE",
        physical_id="h-1",
        reference_id="h-1",
        properties={},
        attributes={},
        data={"signals": entries},
    )


def entry(i: str, status: str = "SUCCESS", reason: str = "ok", data: Any = None) -> dict[str, Any]:
    return {"id": i, "status": status, "reason": reason, "data": data}


def wait_ctx(clock: Clock, entries: list[dict[str, Any]]) -> InMemoryContext:
    ctx = InMemoryContext(resource_name="wc", clock=clock, operation_id="t:wc:CREATE")
    peer(ctx, entries, "OS::Heat::WaitConditionHandle")
    return ctx


PROPS = {"handle": "h-1", "timeout": 30, "count": 2}


def test_waits_without_sleeping_then_completes_on_count() -> None:
    clock = Clock()
    signals: list[dict[str, Any]] = []
    ctx = wait_ctx(clock, signals)
    plugin = HeatWaitCondition()
    token = run(plugin.create(ctx, PROPS))
    assert ctx.data["wait"] == {"operation": "t:wc:CREATE", "deadline": 1030.0}
    clock.now += 10
    assert run(plugin.check_create_complete(ctx, PROPS, token)) == Wait(20.0)
    signals.append(entry("1"))
    assert isinstance(run(plugin.check_create_complete(ctx, PROPS, token)), Wait)
    signals.append(entry("2", data={"k": "v"}))
    assert run(plugin.check_create_complete(ctx, PROPS, token)) is True
    assert run(plugin.attribute(ctx, PROPS, "data")) == '{"1": null, "2": {"k": "v"}}'


def test_a_rerun_keeps_the_deadline() -> None:
    clock = Clock()
    ctx = wait_ctx(clock, [])
    run(HeatWaitCondition().create(ctx, PROPS))
    clock.now += 25
    assert run(HeatWaitCondition().create(ctx, PROPS)) == 1030.0
    ctx.operation_id = "t2:wc:UPDATE"  # a later action starts over
    assert run(HeatWaitCondition().update(ctx, PROPS)) == 1055.0


def test_failure_reasons_are_joined_in_arrival_order() -> None:
    ctx = wait_ctx(Clock(), [entry("1", "FAILURE", "a"), entry("2"), entry("3", "FAILURE", "b")])
    with pytest.raises(WaitConditionFailure, match=r"^a;b$"):
        run(HeatWaitCondition().check_create_complete(ctx, PROPS, 1030.0))


def test_timeout_counts_successes_with_their_reasons() -> None:
    clock = Clock()
    ctx = wait_ctx(clock, [entry("1", reason="x"), entry("2", reason="y")])
    clock.now = 1030.5
    props = {**PROPS, "count": 3}
    with pytest.raises(WaitConditionTimeout, match=r"^2 of 3 received - x;y$"):
        run(HeatWaitCondition().check_create_complete(ctx, props, 1030.0))
    peer(ctx, [], "OS::Heat::WaitConditionHandle")
    with pytest.raises(WaitConditionTimeout, match=r"^0 of 3 received$"):
        run(HeatWaitCondition().check_create_complete(ctx, props, 1030.0))


def test_the_handle_must_be_a_handle() -> None:
    ctx = wait_ctx(Clock(), [])
    peer(ctx, [], "OS::Heat::None")
    with pytest.raises(InvalidHandle, match=r"^handle is not a valid wait condition handle\.$"):
        run(HeatWaitCondition().create(ctx, PROPS))
    with pytest.raises(InvalidHandle, match=r"^nowhere is not a valid"):
        run(HeatWaitCondition().create(ctx, {**PROPS, "handle": "nowhere"}))
    # The AWS wait condition takes only AWS-format handles.
    peer(ctx, [], "OS::Heat::WaitConditionHandle")
    aws = {"Handle": "h-1", "Timeout": 30, "Count": 1}
    with pytest.raises(InvalidHandle, match=r"^WaitCondition invalid Handle handle$"):
        run(AWSWaitCondition().create(ctx, aws))
    peer(ctx, [entry("u")], "OS::Heat::UpdateWaitConditionHandle")
    token = run(AWSWaitCondition().create(ctx, aws))
    assert run(AWSWaitCondition().check_create_complete(ctx, aws, token)) is True
    assert run(AWSWaitCondition().attribute(ctx, aws, "Data")) == '{"u": null}'
