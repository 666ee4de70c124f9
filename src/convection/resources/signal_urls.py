"""Signal URLs: where a machine outside sends a resource's signal.

Three kinds, as Heat has them (``heat/engine/resources/signal_responder.py``):

* the **Heat signal endpoint**, ``{api}/v1/{project}/stacks/{name}/{id}/
  resources/{resource}/signal`` (POST, ``X-Auth-Token``): a
  WaitConditionHandle's ``endpoint``/``curl_cli``, a ScalingPolicy's
  ``signal_url``;
* **pre-signed URLs** carrying their credential in the query string, since
  their callers (``cfn-signal``, an alarm, ``curl`` from ``user_data``)
  send no headers: ``{api}/v1/waitcondition/...`` (PUT: an AWS handle's
  reference id) and ``{api}/v1/signal/...`` (POST: a ScalingPolicy's
  ``alarm_url``, a deployment's CFN ``deploy_signal_id``). Heat signs these
  with an EC2 keypair of a stack user; Convection has no Keystone, so the
  query carries a token narrowed to the one resource
  (:meth:`convection.tokens._tokens.Tokens.issue_signal`), which the route
  (``convection.api.routers.signal_urls``) checks.

The credential is minted once, when the resource is created, and kept in
the resource's ``data`` with the API URL it was minted for, so the URLs
built from it are the same on every read, after a restart, and in a
process without ``ctx.api`` (the CLI). It is revoked when the resource is
deleted (a replaced resource's old version is deleted too). The secret is
never put in an event or a log line; attributes show it on purpose, as
Heat's do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import quote, urlencode

from convection.resources._context import ResourceContext

#: Key of the stored credential in a resource's ``data``.
DATA_KEY: Final = "signal_credential"
#: The query parameter of a pre-signed URL that carries its token.
TOKEN_PARAM: Final = "token"
#: Pre-signed URL kinds, Heat's CFN paths: PUT to a wait condition, POST a signal.
WAITCONDITION: Final = "waitcondition"
SIGNAL: Final = "signal"

Kind = Literal["waitcondition", "signal"]


@dataclass(frozen=True, slots=True)
class Credential:
    """A resource's signal token, and where and for whom it was minted."""

    token: str
    api_url: str
    project: str


def _segment(value: str) -> str:
    return quote(value, safe="")


def resource_path(project: str, stack_name: str, stack_id: str, resource: str) -> str:
    """``{project}/stacks/{name}/{id}/resources/{resource}``, each segment quoted."""
    parts = (_segment(project), "stacks", _segment(stack_name), _segment(stack_id))
    return "/".join((*parts, "resources", _segment(resource)))


def heat_signal_url(cred: Credential, stack_name: str, stack_id: str, resource: str) -> str:
    """Heat's native signal endpoint (POST with ``X-Auth-Token``)."""
    path = resource_path(cred.project, stack_name, stack_id, resource)
    return f"{cred.api_url}/v1/{path}/signal"


def presigned_url(
    cred: Credential, kind: Kind, stack_name: str, stack_id: str, resource: str
) -> str:
    """A URL that signals the resource with no header: the token is in it."""
    path = resource_path(cred.project, stack_name, stack_id, resource)
    query = urlencode({TOKEN_PARAM: cred.token})
    return f"{cred.api_url}/v1/{kind}/{path}?{query}"


def stored(data: Mapping[str, object]) -> Credential | None:
    """The credential kept in a resource's ``data``, if any."""
    found = data.get(DATA_KEY)
    if not isinstance(found, Mapping):
        return None
    token, url, project = (found.get(k) for k in ("token", "api_url", "project"))
    if not (isinstance(token, str) and isinstance(url, str) and isinstance(project, str)):
        return None
    return Credential(token, url, project)


async def ensure(ctx: ResourceContext) -> Credential | None:
    """The resource's credential: the stored one (a re-run after a crash
    finds it), else one minted now and stored before returning. None when
    the engine has no API URL (``ctx.api`` is None)."""
    found = stored(ctx.data)
    if found is not None or ctx.api is None:
        return found
    api = ctx.api
    cred = Credential(api.issue_signal_token(ctx.resource_name), api.url, api.project)
    value = {"token": cred.token, "api_url": cred.api_url, "project": cred.project}
    await ctx.set_data({**ctx.data, DATA_KEY: value})
    return cred


def revoke(ctx: ResourceContext) -> None:
    """Revoke the stored credential (the resource is being deleted).

    Without ``ctx.api`` nothing here can revoke; the token then lives until
    its stack's narrowed tokens are revoked with the stack."""
    found = stored(ctx.data)
    if found is None or ctx.api is None:
        return
    ctx.api.revoke_token(found.token)  # again after a crash: a no-op
