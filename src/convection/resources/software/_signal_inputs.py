"""The signal inputs a software deployment hands its server, as Heat's.

Heat adds to every derived config the inputs that tell the agent on the
server (``heat-config-notify``) where to send the deployment's outputs
(``SoftwareDeployment._build_derived_inputs``):

* ``CFN_SIGNAL``: ``deploy_signal_id`` a pre-signed URL, ``deploy_signal_verb``
  POST;
* ``TEMP_URL_SIGNAL``: ``deploy_signal_id`` a URL to PUT to (Heat: a Swift
  TempURL), ``deploy_signal_verb`` PUT;
* ``HEAT_SIGNAL``, ``ZAQAR_SIGNAL``: credentials, ``deploy_auth_url``,
  ``deploy_username``, ``deploy_user_id``, ``deploy_password`` and
  ``deploy_project_id``;
* ``NO_SIGNAL``: nothing.

``deploy_signal_transport`` is always there. Convection has neither Keystone
nor Swift nor Zaqar, so the URLs are the REST API's pre-signed signal URLs
(:mod:`convection.resources.signal_urls`, whose token may signal this one
deployment and nothing else), and the "credentials" are that token as
``deploy_password`` and the API base URL as ``deploy_auth_url``: an agent
sends the password as ``X-Auth-Token`` to ``{deploy_auth_url}/v1/
{deploy_project_id}/stacks/{deploy_stack_id}/resources/
{deploy_resource_name}/signal``. ``heat-config-notify`` works unchanged
with the URL transports.

Without ``ctx.api`` (no API URL configured) only ``deploy_signal_transport``
is given: nothing outside could reach a URL.
"""

from __future__ import annotations

from convection.common import JSON
from convection.resources import signal_urls
from convection.resources._context import ResourceContext

#: Transport -> (pre-signed URL kind, HTTP verb) for the URL transports.
_URL_TRANSPORTS: dict[str, tuple[signal_urls.Kind, str]] = {
    "CFN_SIGNAL": (signal_urls.SIGNAL, "POST"),
    "TEMP_URL_SIGNAL": (signal_urls.WAITCONDITION, "PUT"),
}
_CREDENTIAL_TRANSPORTS = frozenset({"HEAT_SIGNAL", "ZAQAR_SIGNAL"})


async def signal_inputs(ctx: ResourceContext, transport: str) -> dict[str, JSON]:
    """Input name -> value for a deployment signalling with ``transport``.

    Async because the first call mints the deployment's signal token and
    stores it in ``ctx.data`` (under :data:`signal_urls.DATA_KEY`) before it
    returns, so every later action, and a re-run after a crash, hands the
    server the same URL. A caller that replaces ``data`` must keep that key,
    and should call :func:`signal_urls.revoke` when the deployment is
    deleted.
    """
    inputs: dict[str, JSON] = {"deploy_signal_transport": transport}
    if transport not in _URL_TRANSPORTS and transport not in _CREDENTIAL_TRANSPORTS:
        return inputs  # NO_SIGNAL (and TOKEN_SIGNAL, which deployments lack)
    cred = await signal_urls.ensure(ctx)
    if cred is None:
        return inputs
    if transport in _URL_TRANSPORTS:
        kind, verb = _URL_TRANSPORTS[transport]
        where = (ctx.stack_name, ctx.stack_id, ctx.resource_name)
        inputs["deploy_signal_id"] = signal_urls.presigned_url(cred, kind, *where)
        inputs["deploy_signal_verb"] = verb
        return inputs
    inputs.update(
        {
            "deploy_auth_url": cred.api_url,
            "deploy_username": ctx.physical_resource_name,
            "deploy_user_id": ctx.physical_resource_name,
            "deploy_password": cred.token,
            "deploy_project_id": cred.project,
        }
    )
    return inputs
