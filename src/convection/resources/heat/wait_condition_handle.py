"""Wait condition handles: where a booted machine's "I am ready" lands.

``OS::Heat::WaitConditionHandle``, ``AWS::CloudFormation::WaitConditionHandle``
and ``OS::Heat::UpdateWaitConditionHandle``, as Heat has them
(``heat/engine/resources/wait_condition.py``, ``.../openstack/heat/
wait_condition_handle.py``, ``.../aws/cfn/wait_condition_handle.py``).

A handle does nothing on create but take an id; its work is its signals.
Each signal is checked and stored in the handle's ``data`` as one entry
``{id, status, reason, data}``, in arrival order (a list, not a map: some
stores reorder JSON object keys, and Heat's failure and timeout messages
join reasons in arrival order). A signal whose id was seen before replaces
that entry in place, as Heat's metadata merge does. The wait condition
reads these entries through ``ctx.peer``; when it is deleted it asks,
through ``ctx.reset_peer``, that the handle forget them (:meth:`reset`).

The two signal formats, Heat's:

* OS::Heat: ``{status, reason, data, id}``; every key may be missing:
  status ``SUCCESS``, reason ``Signal N received``, data ``None``, id ``N``
  (N counts the entries, this one included);
* AWS (and UpdateWaitConditionHandle, which Heat derives from it):
  ``{Status, Reason, Data, UniqueId}``, all four required; an empty signal
  is ignored.

Any other key, or a status other than SUCCESS or FAILURE, is refused (Heat's
"Metadata format invalid") and nothing is stored.

Delivery may be repeated (the service delivers an orphaned signal, or one
whose write was replaced meanwhile, again; see ``convection.service.signals``):
an entry remembers the operation that wrote it, so a second delivery of one
signal changes nothing.

Attributes, as Heat's. With an API URL configured (``ctx.api``: ``convection
server``, or ``CONVECTION_API_URL``) a handle mints, on create, a token that
may signal this handle and nothing else, and keeps it in its ``data`` with
the URL (:mod:`convection.resources.signal_urls`); it is revoked when the
handle is deleted or replaced. OS::Heat's ``endpoint`` is then the REST
API's signal URL, ``token`` that token and ``curl_cli`` Heat's exact
``curl -i -X POST -H 'X-Auth-Token: ...' ... ENDPOINT`` prefix, to which a
script appends ``--data-binary '{"status": "SUCCESS"}'``; all three are
None unless ``signal_transport`` is TOKEN_SIGNAL, and ``signal`` is the map
of the chosen transport, as Heat's. The AWS handle's reference id is a
pre-signed URL that ``cfn-signal`` or ``curl -X PUT`` signals.

Without an API URL (plain CLI use) ``curl_cli`` is the command prefix
``convection stack resource signal STACK_ID RESOURCE`` (append ``--data
JSON``), ``token``/``endpoint`` are None, ``signal`` maps what that command
needs, and the AWS reference id is the physical id.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any, ClassVar

from convection.common import JSON
from convection.hot import AllowedValues
from convection.resources import signal_urls
from convection.resources._context import ResourceContext
from convection.resources._plugin import Properties, ResourceFailure, ResourcePlugin, Token
from convection.resources._schema import AttributeSchema, AttributeType, PropertySchema
from convection.resources._schema import PropertyType as PT
from convection.resources._update import UpdateAction, UpdateDecision

SUCCESS, FAILURE = "SUCCESS", "FAILURE"
STATUSES = (FAILURE, SUCCESS)

#: Key of the entry list in a handle's ``data``.
SIGNALS = "signals"

TOKEN_SIGNAL = "TOKEN_SIGNAL"
SIGNAL_TRANSPORTS = (
    "CFN_SIGNAL",
    "TEMP_URL_SIGNAL",
    "HEAT_SIGNAL",
    "NO_SIGNAL",
    "ZAQAR_SIGNAL",
    "TOKEN_SIGNAL",
)

#: Every type a wait condition accepts as its handle.
HEAT_HANDLE_TYPES = frozenset(
    {
        "OS::Heat::WaitConditionHandle",
        "OS::Heat::UpdateWaitConditionHandle",
        "AWS::CloudFormation::WaitConditionHandle",
    }
)
#: The types AWS::CloudFormation::WaitCondition accepts (AWS-format handles).
AWS_HANDLE_TYPES = frozenset(
    {"OS::Heat::UpdateWaitConditionHandle", "AWS::CloudFormation::WaitConditionHandle"}
)


def entries(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A handle's stored signals, oldest first."""
    found = data.get(SIGNALS)
    return [dict(e) for e in found if isinstance(e, Mapping)] if isinstance(found, list) else []


def signal_command(stack_id: str, resource_name: str) -> str:
    """The command line that signals a handle (append ``--data JSON``).

    It names the stack by id, as Heat's signal URL does, so a signal from
    a machine of a deleted stack never reaches a new stack of that name.
    Like Heat's ``curl_cli``, which needs the network path to the API, it
    needs the store: ``CONVECTION_DB`` (and ``CONVECTION_PROJECT`` outside
    the default project) set where it runs."""
    return shlex.join(["convection", "stack", "resource", "signal", stack_id, resource_name])


class _Handle(ResourcePlugin):
    """What every handle shares: an id on create, and the signal store."""

    #: The signal keys of this format: (data, reason, status, id).
    KEYS: ClassVar[tuple[str, str, str, str]] = ("data", "reason", "status", "id")

    async def create(self, ctx: ResourceContext, props: Properties) -> Token:
        await signal_urls.ensure(ctx)
        if ctx.physical_id is None:
            await ctx.set_physical_id(ctx.physical_resource_name)
        return None

    async def delete(self, ctx: ResourceContext, props: Properties) -> Token:
        """Revoke the handle's signal token: a deleted or replaced handle's
        URL must not signal its successor of the same name."""
        signal_urls.revoke(ctx)
        return None

    async def reset(self, ctx: ResourceContext, props: Properties) -> None:
        """Forget the signals (Heat's ``metadata_set({})`` when a wait
        condition on this handle is deleted), so a wait condition added
        later waits for new ones and signal ids count from 1 again. The
        signal token stays: it lives apart from the signals (Heat keeps
        it in resource data, not metadata), so the URLs handed out still
        signal this handle. No write when there is nothing to forget."""
        if SIGNALS in ctx.data:
            await ctx.set_data({k: v for k, v in ctx.data.items() if k != SIGNALS})

    def normalise(self, details: Mapping[str, Any], count: int) -> Mapping[str, Any]:
        """The signal with this format's defaults filled in."""
        return details

    async def signal(self, ctx: ResourceContext, props: Properties, details: JSON) -> str | None:
        if details is None or (isinstance(details, Mapping) and not details and self._aws):
            return None  # Heat's AWS handle ignores an empty signal
        stored = entries(ctx.data)
        again = next((e for e in stored if e.get("op") == ctx.operation_id), None)
        if again is not None:  # a repeated delivery: already stored
            return _describe(again)
        entry = self._entry(ctx.resource_name, details, len(stored) + 1)
        entry["op"] = ctx.operation_id
        index = next((i for i, e in enumerate(stored) if e.get("id") == entry["id"]), None)
        if index is None:
            stored.append(entry)
        else:
            stored[index] = entry  # Heat overwrites the entry with that id
        await ctx.set_data({**ctx.data, SIGNALS: stored})
        return _describe(entry)

    @property
    def _aws(self) -> bool:
        return self.KEYS[0] == "Data"

    def _entry(self, name: str, details: JSON, count: int) -> dict[str, Any]:
        where = f"resources.{name}"
        if not isinstance(details, Mapping):
            raise ResourceFailure(
                f"{where}: Metadata format invalid: the signal must be a JSON object"
            )
        body = self.normalise(details, count)
        data_key, reason_key, status_key, id_key = self.KEYS
        keys = set(self.KEYS)
        extra = sorted(str(k) for k in body if k not in keys)
        missing = sorted(k for k in self.KEYS if k not in body)
        if extra or missing:
            what = f"unknown keys {extra}" if extra else f"missing keys {missing}"
            expected = ", ".join(sorted(self.KEYS))
            raise ResourceFailure(
                f"{where}: Metadata format invalid: {what}; a signal has the keys {expected}"
            )
        status = body[status_key]
        if status not in STATUSES:
            raise ResourceFailure(
                f"{where}: Metadata format invalid: {status_key} {status!r} is not "
                f"one of {SUCCESS}, {FAILURE}"
            )
        return {
            "id": str(body[id_key]),
            "status": status,
            "reason": body[reason_key],
            "data": body[data_key],
        }


def _describe(entry: Mapping[str, Any]) -> str:
    """Heat's signal event detail (``status:... reason:...``)."""
    return f"status:{entry.get('status')} reason:{entry.get('reason')}"


class HeatWaitConditionHandle(_Handle):
    type_name = "OS::Heat::WaitConditionHandle"
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {
        "signal_transport": PropertySchema(
            type=PT.STRING,
            description="How the client will signal the wait condition: which of "
            "token/endpoint/curl_cli (TOKEN_SIGNAL) or the signal map (the others) is "
            "filled in. Every transport is signalled through the REST API or the "
            "`convection stack resource signal` command; NO_SIGNAL still waits for one.",
            default=TOKEN_SIGNAL,
            constraints=(AllowedValues(SIGNAL_TRANSPORTS),),
        ),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "token": AttributeSchema(
            "Token that may signal this handle (and nothing else) when signal_transport "
            "is TOKEN_SIGNAL; None otherwise or without an API URL.",
            AttributeType.STRING,
        ),
        "endpoint": AttributeSchema(
            "REST API URL that signals this handle when signal_transport is "
            "TOKEN_SIGNAL; None otherwise or without an API URL.",
            AttributeType.STRING,
        ),
        "curl_cli": AttributeSchema(
            "curl command prefix that signals the handle when signal_transport is "
            'TOKEN_SIGNAL; append --data-binary \'{"status": "SUCCESS"}\' (or '
            "FAILURE). Without an API URL, a `convection stack resource signal` command "
            "prefix instead (append --data JSON).",
            AttributeType.STRING,
        ),
        "signal": AttributeSchema(
            "JSON serialized map of what a client needs to signal this handle.",
            AttributeType.STRING,
        ),
    }

    def normalise(self, details: Mapping[str, Any], count: int) -> Mapping[str, Any]:
        body = dict(details)
        body.setdefault("reason", f"Signal {count} received")
        body.setdefault("data", None)
        body.setdefault("id", count)
        body.setdefault("status", SUCCESS)
        return body

    async def attribute(self, ctx: ResourceContext, props: Properties, name: str) -> JSON:
        if ctx.physical_id is None:
            return None  # Heat: nothing before the handle exists
        cred = signal_urls.stored(ctx.data)
        if cred is None:
            return _cli_attribute(ctx, name)
        transport = str(props.get("signal_transport", TOKEN_SIGNAL))
        if name == "signal":
            return json.dumps(_signal_map(ctx, cred, transport))
        if transport != TOKEN_SIGNAL:
            return None  # Heat: token, endpoint and curl_cli are TOKEN_SIGNAL's
        endpoint = signal_urls.heat_signal_url(
            cred, ctx.stack_name, ctx.stack_id, ctx.resource_name
        )
        if name == "token":
            return cred.token
        if name == "endpoint":
            return endpoint
        if name == "curl_cli":
            return curl_cli(cred.token, endpoint)
        return None


def curl_cli(token: str, endpoint: str) -> str:
    """Heat's ``curl_cli``, character for character."""
    return (
        f"curl -i -X POST -H 'X-Auth-Token: {token}' "
        "-H 'Content-Type: application/json' -H 'Accept: application/json' "
        f"{endpoint}"
    )


def _cli_attribute(ctx: ResourceContext, name: str) -> JSON:
    """The attributes without a REST API: a command line to run instead."""
    command = signal_command(ctx.stack_id, ctx.resource_name)
    if name == "curl_cli":
        return command
    if name == "signal":
        return json.dumps(
            {
                "stack_id": ctx.stack_id,
                "stack_name": ctx.stack_name,
                "resource_name": ctx.resource_name,
                "command": command,
            }
        )
    return None


def _signal_map(ctx: ResourceContext, cred: signal_urls.Credential, transport: str) -> JSON:
    """Heat's ``signal`` attribute for each transport. CFN and TEMP_URL
    get a pre-signed URL to PUT to (Heat: an EC2-signed CFN URL, a Swift
    TempURL); HEAT and ZAQAR the native endpoint and a token in place of
    Keystone credentials (there is no Keystone, nor a Zaqar queue);
    TOKEN_SIGNAL nothing (Heat gives null: ``token``/``endpoint`` serve);
    NO_SIGNAL an empty map."""
    if transport == "NO_SIGNAL":
        return {}
    if transport == TOKEN_SIGNAL:
        return None
    where = (ctx.stack_name, ctx.stack_id, ctx.resource_name)
    if transport in ("CFN_SIGNAL", "TEMP_URL_SIGNAL"):
        return {"alarm_url": signal_urls.presigned_url(cred, signal_urls.WAITCONDITION, *where)}
    return {
        "alarm_url": signal_urls.heat_signal_url(cred, *where),
        "auth_url": cred.api_url,
        "project_id": cred.project,
        "stack_id": ctx.stack_id,
        "resource_name": ctx.resource_name,
        "token": cred.token,
    }


class AWSWaitConditionHandle(_Handle):
    """The reference id is a pre-signed URL to PUT ``{Status, Reason, Data,
    UniqueId}`` to, as Heat's; with no API URL configured it is the
    physical id (Heat's default for other types)."""

    type_name = "AWS::CloudFormation::WaitConditionHandle"
    KEYS = ("Data", "Reason", "Status", "UniqueId")

    async def reference_id(self, ctx: ResourceContext, props: Properties) -> JSON:
        cred = signal_urls.stored(ctx.data)
        if cred is None or ctx.physical_id is None:
            return await super().reference_id(ctx, props)
        return signal_urls.presigned_url(
            cred, signal_urls.WAITCONDITION, ctx.stack_name, ctx.stack_id, ctx.resource_name
        )


class UpdateWaitConditionHandle(AWSWaitConditionHandle):
    """An AWS handle replaced on every stack update, so its signals start
    over: the senders must signal the new handle, which proves the new
    configuration reached them (Heat raises UpdateReplace from ``update``,
    which convergence calls for every resource, changed or not)."""

    type_name = "OS::Heat::UpdateWaitConditionHandle"
    visit_on_update = True

    @classmethod
    def decide_update(cls, old: Properties, new: Properties) -> UpdateDecision:
        return UpdateDecision(UpdateAction.REPLACE, "replaced on every stack update")
