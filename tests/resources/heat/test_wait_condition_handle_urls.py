"""Signal URLs on the plugin seam: handles, scaling policies and deployments
with ``ctx.api`` (a recording ``ApiAccess``), and without it (the CLI
fallback). The live-server suite is ``tests/api/test_signal_urls.py``."""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import pytest

from convection.resources.api import ApiAccess, InMemoryContext
from convection.resources.heat.autoscaling import ScalingPolicy
from convection.resources.heat.wait_condition_handle import (
    AWSWaitConditionHandle,
    HeatWaitConditionHandle,
    UpdateWaitConditionHandle,
)
from convection.resources.software._signal_inputs import signal_inputs

T = TypeVar("T")
API = "http://203.0.113.5:8004"
STACK_ID = "5f1c0e2a-0000-4000-8000-000000000001"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@dataclass
class Minter:
    """An ``ApiAccess`` that records what it mints and revokes."""

    issued: list[tuple[str, str]] = field(default_factory=list)
    revoked: list[str] = field(default_factory=list)

    def access(self) -> ApiAccess:
        return ApiAccess(API, "proj", self.signal, self.server, self.revoked.append)

    def signal(self, resource: str) -> str:
        secret = f"cvt_secret{len(self.issued)}"
        self.issued.append((resource, secret))
        return secret

    def server(self, server_id: str) -> str:
        raise AssertionError("handles never mint server tokens")


def ctx_for(name: str = "handle", api: ApiAccess | None = None) -> InMemoryContext:
    return InMemoryContext(resource_name=name, stack_name="web", stack_id=STACK_ID, api=api)


def attrs(plugin: Any, ctx: InMemoryContext, props: dict[str, Any]) -> dict[str, Any]:
    names = type(plugin).attributes_schema
    return {n: run(plugin.attribute(ctx, props, n)) for n in names}


ENDPOINT = f"{API}/v1/proj/stacks/web/{STACK_ID}/resources/handle/signal"


def test_token_signal_handle_has_heats_attributes() -> None:
    minter = Minter()
    ctx, plugin = ctx_for(api=minter.access()), HeatWaitConditionHandle()
    props: dict[str, Any] = {}
    run(plugin.create(ctx, props))
    got = attrs(plugin, ctx, props)
    assert minter.issued == [("handle", "cvt_secret0")]
    assert got["token"] == "cvt_secret0"
    assert got["endpoint"] == ENDPOINT
    assert got["curl_cli"] == (
        "curl -i -X POST -H 'X-Auth-Token: cvt_secret0' "
        "-H 'Content-Type: application/json' -H 'Accept: application/json' " + ENDPOINT
    )
    assert got["signal"] == "null"  # Heat: TOKEN_SIGNAL has no signal map
    # What a script does with it: append --data-binary; it splits cleanly.
    argv = shlex.split(got["curl_cli"] + ' --data-binary \'{"status": "SUCCESS"}\'')
    assert argv[-3:] == [ENDPOINT, "--data-binary", '{"status": "SUCCESS"}']


def test_token_is_minted_once_and_survives_signals_and_reruns() -> None:
    minter = Minter()
    ctx, plugin = ctx_for(api=minter.access()), HeatWaitConditionHandle()
    run(plugin.create(ctx, {}))
    before = attrs(plugin, ctx, {})
    run(plugin.create(ctx, {}))  # the same create again, after a crash
    ctx.operation_id = "signal:1"
    run(plugin.signal(ctx, {}, {"status": "SUCCESS"}))
    # A process without ctx.api (the CLI) reads the same attributes.
    ctx.api = None
    assert attrs(plugin, ctx, {}) == before
    assert len(minter.issued) == 1


def test_delete_revokes_the_token() -> None:
    minter = Minter()
    ctx, plugin = ctx_for(api=minter.access()), HeatWaitConditionHandle()
    run(plugin.create(ctx, {}))
    run(plugin.delete(ctx, {}))
    assert minter.revoked == ["cvt_secret0"]


@pytest.mark.parametrize("transport", ["CFN_SIGNAL", "TEMP_URL_SIGNAL"])
def test_url_transports_give_a_presigned_put_url(transport: str) -> None:
    ctx, plugin = ctx_for(api=Minter().access()), HeatWaitConditionHandle()
    props = {"signal_transport": transport}
    run(plugin.create(ctx, props))
    got = attrs(plugin, ctx, props)
    assert (got["token"], got["endpoint"], got["curl_cli"]) == (None, None, None)
    url = urlsplit(json.loads(got["signal"])["alarm_url"])
    assert url.path == f"/v1/waitcondition/proj/stacks/web/{STACK_ID}/resources/handle"
    assert parse_qs(url.query) == {"token": ["cvt_secret0"]}


def test_heat_signal_transport_gives_endpoint_and_token() -> None:
    ctx, plugin = ctx_for(api=Minter().access()), HeatWaitConditionHandle()
    props = {"signal_transport": "HEAT_SIGNAL"}
    run(plugin.create(ctx, props))
    signal = json.loads(attrs(plugin, ctx, props)["signal"])
    assert signal["alarm_url"] == ENDPOINT
    assert (signal["token"], signal["project_id"], signal["auth_url"]) == (
        "cvt_secret0",
        "proj",
        API,
    )


def test_no_signal_transport_gives_an_empty_map() -> None:
    ctx, plugin = ctx_for(api=Minter().access()), HeatWaitConditionHandle()
    props = {"signal_transport": "NO_SIGNAL"}
    run(plugin.create(ctx, props))
    got = attrs(plugin, ctx, props)
    assert got == {"token": None, "endpoint": None, "curl_cli": None, "signal": "{}"}


def test_without_api_the_cli_fallback_stays() -> None:
    ctx, plugin = ctx_for(), HeatWaitConditionHandle()
    run(plugin.create(ctx, {}))
    got = attrs(plugin, ctx, {})
    assert got["curl_cli"] == f"convection stack resource signal {STACK_ID} handle"
    assert (got["token"], got["endpoint"]) == (None, None)
    assert json.loads(got["signal"])["command"] == got["curl_cli"]
    run(plugin.delete(ctx, {}))  # nothing to revoke, no error


@pytest.mark.parametrize("plugin", [AWSWaitConditionHandle(), UpdateWaitConditionHandle()])
def test_aws_handle_reference_is_a_presigned_url(plugin: Any) -> None:
    ctx = ctx_for(api=Minter().access())
    run(plugin.create(ctx, {}))
    url = urlsplit(run(plugin.reference_id(ctx, {})))
    assert url.scheme + "://" + url.netloc == API
    assert url.path == f"/v1/waitcondition/proj/stacks/web/{STACK_ID}/resources/handle"
    assert parse_qs(url.query) == {"token": ["cvt_secret0"]}
    plain = ctx_for()
    run(plugin.create(plain, {}))
    assert run(plugin.reference_id(plain, {})) == plain.physical_id


def test_names_are_quoted_in_urls() -> None:
    ctx = InMemoryContext(resource_name="my handle/1", stack_name="web", stack_id=STACK_ID)
    ctx.api = Minter().access()
    plugin = HeatWaitConditionHandle()
    run(plugin.create(ctx, {}))
    endpoint = run(plugin.attribute(ctx, {}, "endpoint"))
    assert endpoint.endswith("/resources/my%20handle%2F1/signal")


def test_scaling_policy_urls() -> None:
    minter = Minter()
    ctx, plugin = ctx_for("up", minter.access()), ScalingPolicy()
    run(plugin.create(ctx, {}))
    alarm = urlsplit(run(plugin.attribute(ctx, {}, "alarm_url")))
    assert alarm.path == f"/v1/signal/proj/stacks/web/{STACK_ID}/resources/up"
    assert parse_qs(alarm.query) == {"token": ["cvt_secret0"]}
    signal_url = run(plugin.attribute(ctx, {}, "signal_url"))
    assert signal_url == f"{API}/v1/proj/stacks/web/{STACK_ID}/resources/up/signal"
    run(plugin.delete(ctx, {}))
    assert minter.issued == [("up", "cvt_secret0")] and minter.revoked == ["cvt_secret0"]
    assert run(plugin.attribute(ctx_for("up"), {}, "alarm_url")) is None


@pytest.mark.parametrize(
    ("transport", "kind", "verb"),
    [("CFN_SIGNAL", "signal", "POST"), ("TEMP_URL_SIGNAL", "waitcondition", "PUT")],
)
def test_deployment_url_inputs(transport: str, kind: str, verb: str) -> None:
    minter = Minter()
    ctx = ctx_for("deploy", minter.access())
    got = run(signal_inputs(ctx, transport))
    again = run(signal_inputs(ctx, transport))
    assert got == again and len(minter.issued) == 1
    assert got["deploy_signal_transport"] == transport
    assert got["deploy_signal_verb"] == verb
    url = urlsplit(str(got["deploy_signal_id"]))
    assert url.path == f"/v1/{kind}/proj/stacks/web/{STACK_ID}/resources/deploy"
    assert parse_qs(url.query) == {"token": ["cvt_secret0"]}


def test_deployment_heat_signal_inputs_are_credentials() -> None:
    ctx = ctx_for("deploy", Minter().access())
    got = run(signal_inputs(ctx, "HEAT_SIGNAL"))
    assert got["deploy_auth_url"] == API
    assert (got["deploy_password"], got["deploy_project_id"]) == ("cvt_secret0", "proj")
    assert "deploy_signal_id" not in got


def test_deployment_inputs_without_a_url_or_a_signal() -> None:
    minter = Minter()
    assert run(signal_inputs(ctx_for("d"), "CFN_SIGNAL")) == {
        "deploy_signal_transport": "CFN_SIGNAL"
    }
    assert run(signal_inputs(ctx_for("d", minter.access()), "NO_SIGNAL")) == {
        "deploy_signal_transport": "NO_SIGNAL"
    }
    assert minter.issued == []
