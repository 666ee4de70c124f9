"""What every ``/v2`` router shares: Mistral's error bodies, the caller's
project, text and JSON bodies, JSON-string fields, and Mistral's listing
conventions (``marker``, ``limit``, ``sort_keys``, ``sort_dirs``,
``fields``, equality filters, the ``next`` link).

Mistral answers errors with ``{"faultcode": "Client"|"Server",
"faultstring": ..., "debuginfo": null}`` (``mistral/utils/rest_utils.py``);
every ``/v2`` route does too, through :class:`MistralRoute`, which turns
the service's errors into Mistral's status codes: not found 404, a taken
name 409, another project's definition 403, invalid input 400.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal
from urllib.parse import urlencode

from fastapi import Depends, Header, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from convection.api import openapi
from convection.api.auth import (
    TOKEN_HEADER,
    Authenticator,
    Principal,
    TokenAuthenticator,
    forbidden,
)
from convection.api.body import BodyTooLarge, read_body
from convection.api.errors import ApiError
from convection.common import Conflict, ConvectionError, InvalidInput, NotFound
from convection.service import Stacks
from convection.store import DefinitionExists, Store, Where
from convection.workflows import NotAllowed

log = logging.getLogger("convection.api")

PREFIX: Final = "/v2"
PROJECT_HEADER: Final = "X-Project-Id"
#: The project of ``--no-auth`` callers that name none.
DEFAULT_PROJECT: Final = "default"

Body = dict[str, Any]


# -- errors -----------------------------------------------------------------------------
class MistralError(Exception):
    """An error answered as Mistral answers it."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(message)


def bad_request(message: str) -> MistralError:
    return MistralError(400, message)


def fault(code: int, message: str) -> JSONResponse:
    body = {
        "faultcode": "Client" if code < 500 else "Server",
        "faultstring": message,
        "debuginfo": None,
    }
    return JSONResponse(body, status_code=code)


def _input_text(exc: InvalidInput) -> str:
    lines = [str(d) for d in exc.diagnostics]
    return "\n".join(lines) if lines else str(exc)


def status_of(exc: BaseException) -> tuple[int, str]:
    """Mistral's status code and message for an error."""
    if isinstance(exc, MistralError):
        return exc.code, exc.message
    if isinstance(exc, ApiError):
        return exc.code, exc.message
    if isinstance(exc, NotAllowed):
        return 403, str(exc)
    if isinstance(exc, DefinitionExists):
        return 409, str(exc)
    if isinstance(exc, NotFound):
        return 404, str(exc)
    if isinstance(exc, InvalidInput):
        return 400, _input_text(exc)
    if isinstance(exc, Conflict):
        return 409, str(exc)
    if isinstance(exc, ConvectionError | ValueError):
        return 400, str(exc)
    if isinstance(exc, RequestValidationError):
        problems = "; ".join(str(e.get("msg", "invalid")) for e in exc.errors())
        return 400, problems or "Invalid request"
    if isinstance(exc, StarletteHTTPException):
        return exc.status_code, str(exc.detail)
    raise exc


class MistralRoute(APIRoute):
    """A route whose every error is Mistral's body (the app's handlers
    answer Heat's for ``/v1``), and whose document says which: see
    :meth:`_document`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._document()

    def _document(self) -> None:
        """The statuses and body the route's own dependencies imply, in
        ``/openapi.json``: 401 and 403 from the token check, the body its
        reader reads (a 400 when it is not one), 404 for a row named in
        the path, 409 for a write (a taken name, a row in use or busy),
        400 for query arguments (Mistral's filters, paging, ``fields``);
        what the route declares itself is kept."""
        calls = _calls(self.dependant)
        methods = self.methods or set()
        codes: set[int] = set()
        if _principal in calls:
            codes |= {401, 403}
        body: dict[str, Any] | None = None
        if _text in calls:
            body = openapi.text_body("A definition: Mistral's v2 language, YAML")
        elif _json in calls:
            body = openapi.json_body()
        if body is not None:
            codes.add(400)
            self.openapi_extra = {**body, **(self.openapi_extra or {})}
        if self.dependant.path_params:
            codes.add(404)
        elif "GET" in methods and self.path.count("/") == 2:  # /v2/<collection>: page_of's
            self.openapi_extra = {**LISTING, **(self.openapi_extra or {})}
            codes.add(404)  # a marker that names no row
        if self.dependant.query_params or "GET" in methods:  # listings read theirs themselves
            codes.add(400)
        if methods & {"POST", "PUT", "DELETE"} and not self.path.endswith("/validate"):
            codes.add(409)
        self.responses = {**openapi.mistral_errors(*sorted(codes)), **self.responses}

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def mistral_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                try:
                    code, message = status_of(exc)
                except Exception:
                    log.exception("unexpected error in %s %s", request.method, request.url.path)
                    return fault(500, f"{type(exc).__name__}: an internal error occurred")
                return fault(code, message)

        return mistral_handler


#: What every ``/v2`` listing reads (``page_of``).
LISTING: Final = openapi.query(
    marker=openapi.STRING,
    limit={"type": "integer", "minimum": 1},
    sort_keys=openapi.STRING,
    sort_dirs=openapi.STRING,
    fields=openapi.STRING,
)


def _calls(dependant: Dependant) -> set[Callable[..., Any]]:
    """Every dependency's callable, however deep."""
    found: set[Callable[..., Any]] = set()
    for sub in dependant.dependencies:
        if sub.call is not None:
            found.add(sub.call)
        found |= _calls(sub)
    return found


# -- who is calling -----------------------------------------------------------------------
def _principal(
    request: Request,
    token: Annotated[str | None, Header(alias=TOKEN_HEADER, include_in_schema=False)] = None,
    project: Annotated[str | None, Header(alias=PROJECT_HEADER, include_in_schema=False)] = None,
) -> Principal:
    """The token's project (``X-Project-Id``, if sent, must be it); under
    ``--no-auth`` the project is ``X-Project-Id``, else ``default``."""
    authenticator: Authenticator = request.app.state.authenticator
    if isinstance(authenticator, TokenAuthenticator):
        found = authenticator.tokens.verify(token)
        wanted = project or (found.project if found is not None else "")
        principal = authenticator.authenticate(token, wanted)
    else:
        principal = authenticator.authenticate(token, project or DEFAULT_PROJECT)
    if principal.narrowed:
        raise forbidden()
    request.state.principal = principal
    return principal


def _writer(principal: Annotated[Principal, Depends(_principal)]) -> Principal:
    if not principal.can_write:
        raise forbidden()
    return principal


Reader = Annotated[Principal, Depends(_principal)]
Writer = Annotated[Principal, Depends(_writer)]


def _store(request: Request) -> Store:
    stacks: Stacks = request.app.state.stacks
    return stacks.store


StoreDep = Annotated[Store, Depends(_store)]


# -- bodies -------------------------------------------------------------------------------
async def _raw(request: Request) -> bytes:
    """The body within ``max_json_body_size``, as Heat's API reads it."""
    try:
        return await read_body(request)
    except BodyTooLarge as exc:
        raise bad_request(str(exc)) from None


async def _text(request: Request) -> str:
    raw = await _raw(request)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise bad_request("The definition must be UTF-8 text.") from None


async def _json(request: Request) -> Body:
    raw = await _raw(request)
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        raise bad_request("The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise bad_request("The request body must be a JSON object.")
    return data


#: A ``text/plain`` definition (YAML).
Text = Annotated[str, Depends(_text)]
#: A JSON object body.
JsonBody = Annotated[Body, Depends(_json)]


def json_dict(value: Any, name: str) -> dict[str, Any]:
    """A JSON field as Mistral takes it: an object, or a string holding one
    (``types.JsonType``)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise bad_request(f"Invalid JSON in {name}: {value!r}") from None
    if not isinstance(value, dict):
        raise bad_request(f"JsonType must be a dictionary [{name}]")
    return value


def encoded(body: Mapping[str, Any], fields: Iterable[str]) -> Body:
    """``body`` with ``fields`` as JSON strings, as Mistral sends them."""
    out = dict(body)
    for name in fields:
        if name in out:
            out[name] = None if out[name] is None else json.dumps(out[name])
    return out


def scope_param(scope: str | None) -> Literal["private", "public"]:
    if scope in (None, "", "private"):
        return "private"
    if scope == "public":
        return "public"
    raise bad_request(f"Scope must be one of ['private', 'public'], not {scope!r}")


def bool_param(value: str | None, name: str, default: bool = False) -> bool:
    if value is None or value == "":
        return default
    text = value.lower()
    if text not in ("true", "false", "1", "0", "yes", "no"):
        raise bad_request(f"Invalid boolean value for {name}: {value!r}")
    return text in ("true", "1", "yes")


# -- listings -----------------------------------------------------------------------------
#: Query arguments that are not filters.
_RESERVED: Final = frozenset(
    {"marker", "limit", "sort_keys", "sort_dirs", "fields", "namespace", "include_output",
     "all_projects", "nulls", "scope"}
)  # fmt: skip
MAX_LIMIT: Final = 1000


@dataclass(frozen=True, slots=True)
class Page:
    """One listing's options, checked as Mistral checks them."""

    marker: str | None
    limit: int
    sort_keys: list[str]
    sort_dir: Literal["asc", "desc"]
    sort_dirs: list[str]
    fields: list[str]
    filters: dict[str, Any]
    #: The query as given, minus the paging keys (kept in ``next``).
    kept: list[tuple[str, str]]


def page_of(
    request: Request,
    *,
    default_sort: Sequence[str] = ("created_at",),
    filters: Mapping[str, str] | None = None,
    booleans: Iterable[str] = (),
    operators: bool = False,
) -> Page:
    """Read ``marker, limit, sort_keys, sort_dirs, fields`` and the filters
    (``filters`` maps Mistral's query names to the store's keys). A value
    is ``[op:]value``: with ``operators`` (a listing the store pages
    itself) any of Mistral's operators and mixed ``sort_dirs``; without,
    ``eq`` and ``in`` and one direction."""
    query = request.query_params
    limit_text = query.get("limit")
    limit = MAX_LIMIT
    if limit_text:
        try:
            limit = int(limit_text)
        except ValueError:
            raise bad_request(f"Invalid limit: {limit_text!r}") from None
        if limit <= 0:
            raise bad_request("Limit must be positive.")
        limit = min(limit, MAX_LIMIT)
    keys = _csv(query.get("sort_keys")) or list(default_sort)
    dirs = _csv(query.get("sort_dirs"))
    if len(dirs) > len(keys):
        raise bad_request("Length of sort_keys must be equal or greater than sort_dirs.")
    for d in dirs:
        if d not in ("asc", "desc"):
            raise bad_request("Unknown sort direction, must be 'desc' or 'asc'.")
    padded = dirs + ["asc"] * (len(keys) - len(dirs))
    if len(set(padded)) > 1 and not operators:
        raise bad_request("Mixed sort directions are not supported here: give one direction.")
    wanted: dict[str, Any] = {}
    mapping = filters or {}
    kinds = set(booleans)
    kept: list[tuple[str, str]] = []
    for name, value in query.multi_items():
        if name in ("marker", "limit", "sort_keys", "sort_dirs", "fields"):
            continue
        kept.append((name, value))
        if name in _RESERVED:
            continue
        if name not in mapping:
            allowed = sorted(mapping)
            raise bad_request(f"Unknown filter {name!r}; supported filters: {allowed}")
        wanted[mapping[name]] = _filter_value(name, value, name in kinds, operators)
    return Page(
        marker=query.get("marker") or None,
        limit=limit,
        sort_keys=keys,
        sort_dir="desc" if padded and padded[0] == "desc" else "asc",
        sort_dirs=padded,
        fields=_csv(query.get("fields")),
        filters=wanted,
        kept=kept,
    )


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


#: Mistral's filter operators (``mistral/utils/filter_utils.py``).
_OPERATORS: Final = ("eq", "neq", "in", "nin", "gt", "gte", "lt", "lte", "has")


def _filter_value(name: str, value: str, boolean: bool, operators: bool) -> Any:
    """``[op:]value`` as the store takes it: a value (``eq``), a list
    (``in``), or a :class:`~convection.store.Where` for the others. A
    prefix that is no operator is part of the value (``a:b`` is ``eq``)."""
    op, sep, rest = value.partition(":")
    if not sep or op not in _OPERATORS:
        op, rest = "eq", value
    if op not in ("eq", "in") and not operators:
        raise bad_request(f"Filter operator {op!r} is not supported here [{name}]; use eq or in.")
    values: list[Any] = rest.split(",") if op in ("in", "nin") else [rest]
    if boolean:
        if op not in ("eq", "neq", "in", "nin"):
            raise bad_request(f"Filter operator {op!r} does not apply to {name}")
        values = [bool_param(v, name) for v in values]
    if op == "eq" or (op == "in" and len(values) == 1):
        return values[0]
    if op == "in":
        return values
    return Where(op, values if op == "nin" else values[0])


def select(items: Sequence[Body], fields: Sequence[str]) -> list[Body]:
    """Only ``fields`` (and ``id``) of each item; unknown fields are a 400."""
    if not fields:
        return list(items)
    return [select_one(item, fields) for item in items]


def select_one(item: Body, fields: Sequence[str], known: Iterable[str] | None = None) -> Body:
    names = list(known if known is not None else item)
    unknown = [f for f in fields if f not in names]
    if unknown:
        raise bad_request(
            f"Some fields do not exist  [{', '.join(unknown)}], please choose from "
            f"[{', '.join(names)}]"
        )
    wanted = ["id", *[f for f in fields if f != "id"]]
    return {f: item.get(f) for f in wanted}


def with_fields(item: Body, fields: str) -> Body:
    """A show route's ``?fields=a,b`` (Mistral's): those fields and ``id``,
    or the whole body when none are asked for."""
    wanted = [f for f in fields.split(",") if f]
    return select_one(item, wanted) if wanted else item


def listing(request: Request, collection: str, items: Sequence[Body], page: Page) -> Body:
    """Mistral's envelope: ``{collection: [...], "next": url}``, ``next``
    only when the page is full."""
    out: Body = {collection: select(items, page.fields)}
    if items and len(items) >= page.limit:
        query = [
            *page.kept,
            ("sort_keys", ",".join(page.sort_keys)),
            ("sort_dirs", ",".join(page.sort_dirs)),
            ("limit", str(page.limit)),
            ("marker", str(items[-1]["id"] if items[-1].get("id") else items[-1]["name"])),
        ]
        if page.fields:
            query.append(("fields", ",".join(page.fields)))
        base = str(request.base_url).rstrip("/")
        out["next"] = f"{base}{PREFIX}/{collection}?{urlencode(query)}"
    return out
