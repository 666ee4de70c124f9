"""std.http and std.mistral_http, as Mistral's ``HTTPAction`` and
``MistralHTTPAction`` (``mistral/actions/std_actions.py``), on httpx.

What Mistral does, kept here:

* ``body`` that is a dict is sent as its JSON text; ``body`` and ``json``
  together are refused (``Only one of the parameters 'json' and 'body' can
  be passed``); numeric header values become strings; ``auth`` of the form
  ``"user:password"`` is basic auth; ``verify`` applies to https only;
* redirects are *not* followed unless ``allow_redirects`` is true (Mistral
  passes ``allow_redirects=None`` to requests, which then does not follow);
* the result is ``{content, status, headers, url, history, encoding,
  reason, cookies, elapsed}``, ``content`` the parsed JSON when the body
  is JSON; a status outside 200–306 fails the action with that same dict
  as its error; a request that cannot be sent fails with ``Failed to send
  HTTP request: <why>``;
* the timeout defaults to 60 s (Mistral's ``[action_std_http]
  default_timeout``) and a body over 5 MiB is refused
  (``max_response_size_bytes``).

What differs, because results are JSON here: ``content`` that is not JSON
is text (decoded by the response's charset), not bytes, and ``history``
lists each redirect as ``{status, url}``. Egress is governed as Mistral
2026's deny-list does, by a configurable policy (``ctx.limits.egress``,
see ``common/egress.py``): by default loopback, link-local and
cloud-metadata addresses are refused, checked at every connection
(``egress.py``), redirects and proxies included.

std.mistral_http adds the ``Mistral-*`` headers that tell the receiver
which action execution to complete (``PUT /v2/action_executions/<id>``),
and stays RUNNING (:class:`Pending`) after a good response; a bad status
fails it at once.
"""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import Message
from typing import Any, ClassVar, Final

import httpx

from convection.common import DEFAULT_EGRESS, EgressPolicy
from convection.workflows.actions.base import (
    ActionContext,
    ActionPlugin,
    Failure,
    InputParam,
    Outcome,
    Pending,
    Success,
    arguments,
)
from convection.workflows.actions.egress import EgressRefused, policed

DEFAULT_TIMEOUT: Final = 60.0
MAX_RESPONSE_BYTES: Final = 5 * 1024 * 1024
#: Mistral's success range: ``resp.status_code in range(200, 307)``.
GOOD_STATUS: Final = range(200, 307)

HTTP_INPUT: Final[Mapping[str, InputParam]] = {
    "url": InputParam("string", required=True, description="The URL to request."),
    "method": InputParam("string", default="GET", description="The HTTP method."),
    "params": InputParam(("object", "string", "null"), description="The query string."),
    "body": InputParam(description="The body; a dict is sent as JSON text."),
    "json": InputParam(description="A value sent as JSON (not with body)."),
    "headers": InputParam(("object", "null"), description="Request headers."),
    "cookies": InputParam(("object", "null"), description="Cookies to send."),
    "auth": InputParam(
        ("string", "array", "null"), secret=True, description="'user:password' basic auth."
    ),
    "timeout": InputParam(("number", "null"), description="Seconds; 60 by default."),
    "allow_redirects": InputParam(("boolean", "null"), description="Follow redirects."),
    "proxies": InputParam(("object", "null"), description="{scheme: proxy URL}."),
    "verify": InputParam(
        ("boolean", "string", "null"), description="Verify TLS (https only); or a CA file."
    ),
}


class RequestError(Exception):
    """The request could not be built from the input (a Mistral ActionException)."""


@dataclass(frozen=True, slots=True)
class _Request:
    method: str
    url: str
    kwargs: dict[str, Any]
    client: dict[str, Any]
    verify: bool | ssl.SSLContext
    proxies: dict[str, str]


def _build(args: Mapping[str, Any], extra_headers: Mapping[str, str]) -> _Request:
    body, json_value = args["body"], args["json"]
    if body and json_value:
        raise RequestError("Only one of the parameters 'json' and 'body' can be passed")
    kwargs: dict[str, Any] = {"params": args["params"], "cookies": args["cookies"]}
    if isinstance(body, Mapping):
        kwargs["content"] = json.dumps(body)
    elif body is not None:
        kwargs["content"] = body if isinstance(body, str | bytes) else json.dumps(body)
    if json_value is not None:
        kwargs["json"] = json_value
    headers = {str(k): str(v) for k, v in (args["headers"] or {}).items() if v is not None}
    kwargs["headers"] = {**headers, **extra_headers}
    url = str(args["url"])
    timeout = args["timeout"]
    client: dict[str, Any] = {
        "timeout": DEFAULT_TIMEOUT if timeout is None else float(timeout),
        "follow_redirects": bool(args["allow_redirects"]),
        "auth": _auth(args["auth"]),
        "trust_env": False,
    }
    verify = _verify(args["verify"]) if url.lower().startswith("https:") else True
    proxies = {
        f"{scheme}://" if "://" not in scheme else scheme: str(proxy)
        for scheme, proxy in (args["proxies"] or {}).items()
    }
    return _Request(str(args["method"]).upper(), url, kwargs, client, verify, proxies)


def _client(request: _Request, policy: EgressPolicy) -> httpx.AsyncClient:
    """The client for one request, every connection of it (redirects and
    proxies included) made under the egress policy."""

    def transport(proxy: str | None = None) -> httpx.AsyncHTTPTransport:
        made = httpx.AsyncHTTPTransport(verify=request.verify, proxy=proxy, trust_env=False)
        return policed(made, policy)

    mounts = {scheme: transport(proxy) for scheme, proxy in request.proxies.items()}
    return httpx.AsyncClient(**request.client, transport=transport(), mounts=mounts)


def _auth(auth: Any) -> tuple[str, str] | None:
    """Mistral's rule: ``"user:password"`` (exactly one colon) is basic auth.
    The message never holds the value: it is a secret."""
    if auth is None or auth == "":
        return None
    if isinstance(auth, str) and len(auth.split(":")) == 2:
        user, password = auth.split(":")
        return (user, password)
    if isinstance(auth, list | tuple) and len(auth) == 2:
        return (str(auth[0]), str(auth[1]))
    raise RequestError("auth must be 'user:password' or [user, password]")


def _verify(verify: Any) -> bool | ssl.SSLContext:
    if verify is None or verify is True:
        return True
    if verify is False:
        return False
    return ssl.create_default_context(cafile=str(verify))


async def send(
    args: Mapping[str, Any],
    extra_headers: Mapping[str, str] = {},
    policy: EgressPolicy = DEFAULT_EGRESS,
) -> Outcome:
    """Do the request; Mistral's result dict, as a success or an error.
    A connection the egress policy refuses fails the action, naming the
    address and the setting that would allow it."""
    try:
        request = _build(args, extra_headers)
        started = time.monotonic()
        async with (
            _client(request, policy) as client,
            client.stream(request.method, request.url, **request.kwargs) as resp,
        ):
            raw = await _read_capped(resp)
        elapsed = time.monotonic() - started
    except (RequestError, EgressRefused) as exc:
        return Failure(str(exc))
    except (httpx.HTTPError, OSError, ValueError, ssl.SSLError) as exc:
        return Failure(f"Failed to send HTTP request: {_why(exc)}")
    result = _result(resp, raw, elapsed)
    return Success(result) if resp.status_code in GOOD_STATUS else Failure(result)


async def _read_capped(resp: httpx.Response) -> bytes:
    data = bytearray()
    async for chunk in resp.aiter_bytes():
        data += chunk
        if len(data) > MAX_RESPONSE_BYTES:
            raise ValueError(f"the response is larger than {MAX_RESPONSE_BYTES} bytes")
    return bytes(data)


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _result(resp: httpx.Response, raw: bytes, elapsed: float) -> dict[str, Any]:
    encoding = _encoding(resp.headers.get("content-type"))
    return {
        "content": _content(raw, encoding),
        "status": resp.status_code,
        "headers": dict(resp.headers.items()),
        "url": str(resp.url),
        "history": [{"status": r.status_code, "url": str(r.url)} for r in resp.history],
        "encoding": encoding,
        "reason": resp.reason_phrase,
        "cookies": dict(resp.cookies.items()),
        "elapsed": elapsed,
    }


def _encoding(content_type: str | None) -> str | None:
    """requests' ``get_encoding_from_headers``: the charset; else ISO-8859-1
    for text/*, utf-8 for application/json; else None."""
    if not content_type:
        return None
    message = Message()
    message["content-type"] = content_type
    charset = message.get_param("charset")
    if isinstance(charset, str):
        return charset.strip("'\"")
    if "text" in content_type:
        return "ISO-8859-1"
    if "application/json" in content_type:
        return "utf-8"
    return None


def _content(raw: bytes, encoding: str | None) -> Any:
    text = raw.decode(encoding or "utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


class HTTP(ActionPlugin):
    name: ClassVar[str] = "std.http"
    description: ClassVar[str] = "Sends an HTTP request; its result is the response."
    input_schema: ClassVar[Mapping[str, InputParam]] = HTTP_INPUT

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        return await send(arguments(self, params), policy=ctx.limits.egress)


def callback_headers(ctx: ActionContext) -> dict[str, str]:
    """Mistral's ``Mistral-*`` headers (a None value is not sent, as requests drops it)."""
    values = {
        "Mistral-Workflow-Name": ctx.workflow_name,
        "Mistral-Workflow-Execution-Id": ctx.execution_id,
        "Mistral-Task-Id": ctx.task_id,
        "Mistral-Action-Execution-Id": ctx.action_execution_id,
        "Mistral-Callback-URL": ctx.callback_url,
    }
    return {k: v for k, v in values.items() if v is not None}


class MistralHTTP(ActionPlugin):
    name: ClassVar[str] = "std.mistral_http"
    description: ClassVar[str] = (
        "Sends an HTTP request carrying its action execution's callback; stays RUNNING "
        "until the receiver completes it through the API."
    )
    input_schema: ClassVar[Mapping[str, InputParam]] = HTTP_INPUT
    is_async: ClassVar[bool] = True

    async def run(self, ctx: ActionContext, params: Mapping[str, Any]) -> Outcome:
        outcome = await send(arguments(self, params), callback_headers(ctx), ctx.limits.egress)
        if isinstance(outcome, Success):
            return Pending({"status": outcome.data["status"]})
        return outcome


ACTIONS: Final[tuple[type[ActionPlugin], ...]] = (HTTP, MistralHTTP)
