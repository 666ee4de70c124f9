"""Stored environments (Mistral's ``/v2/environments``): named sets of
variables an execution uses as its ``env`` by naming them
(``params.env`` given as a string), kept in ``store.schedules``.

Mistral's rules (``mistral/api/controllers/v2/environment.py``,
``mistral/db/v2/sqlalchemy/api.py``, ``mistral/engine/workflows.py``):

* the unique key is (name, project); a name finds the project's own
  environment, else a public one (``scope: public`` is readable by every
  project); changing or deleting another project's is refused;
* a create takes only ``name, description, variables, scope``, an update
  ``description, variables, scope`` (with ``name`` saying which), else
  "Please, check your environment definition. Only: [...] are allowed as
  definition keys.";
* an execution naming an unknown environment fails with "Environment is
  not found: <name>"; a stored environment's variables are copied into
  the execution's ``params.env`` when it starts, so a later change of the
  environment does not change a running execution.

Bodies have Mistral's fields (``id, name, description, variables, scope,
project_id, created_at, updated_at``), ``variables`` as a value (a REST
layer encodes it as a JSON string, as Mistral does).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from convection.common import Diagnostic, InvalidInput, NotFound
from convection.store import EnvironmentRecord, Store
from convection.workflows.definitions import NotAllowed, _visible

Body = dict[str, Any]
SortDir = Literal["asc", "desc"]

#: Mistral's ``environments_v2.name`` is a String(200).
MAX_NAME: Final = 200
MAX_DESCRIPTION: Final = 64 * 1024
#: Mistral's ``execution_field_size_limit_kb`` default (1024 KB).
MAX_VARIABLES_KB: Final = 1024
CREATE_KEYS: Final = ("name", "description", "variables", "scope")
UPDATE_KEYS: Final = ("description", "variables", "scope")
_FIELDS: Final = ("id", "name", "description", "variables", "scope", "project_id",
                  "created_at", "updated_at")  # fmt: skip


class EnvironmentNotFound(NotFound):
    """Mistral's ``DBEntityNotFoundError`` for an environment (HTTP 404)."""

    def __init__(self, name: str) -> None:
        self.name = name
        Exception.__init__(self, f"Environment not found [name={name}]")


def _bad(message: str, *path: str) -> InvalidInput:
    return InvalidInput([Diagnostic(message, path)])


def _time(value: Any) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def environment_body(record: EnvironmentRecord) -> Body:
    return {
        "id": record.id,
        "name": record.name,
        "description": record.description,
        "variables": record.variables,
        "scope": record.scope,
        "project_id": record.project,
        "created_at": _time(record.created_at),
        "updated_at": _time(record.updated_at),
    }


def check_keys(given: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """Mistral's check of a create's or update's keys."""
    if set(given) - set(allowed):
        raise _bad(
            f"Please, check your environment definition. Only: {list(allowed)} are allowed "
            "as definition keys."
        )


def checked_size(value: Any, field: str, what: str, limit_kb: int = MAX_VARIABLES_KB) -> None:
    """Mistral's ``SizeLimitExceededException`` for a JSON field."""
    size = len(json.dumps(value).encode()) // 1024
    if size > limit_kb:
        raise _bad(
            f"Field size limit exceeded [class={what}, field={field}, size={size}KB, "
            f"limit={limit_kb}KB]",
            field,
        )


def _checked(values: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(values)
    name = out.get("name")
    if "name" in out and (not isinstance(name, str) or not name or len(name) > MAX_NAME):
        raise _bad(f"name: an environment name is 1 to {MAX_NAME} characters", "name")
    description = out.get("description")
    if description is not None and (
        not isinstance(description, str) or len(description) > MAX_DESCRIPTION
    ):
        raise _bad(f"description: text of at most {MAX_DESCRIPTION} characters", "description")
    if "variables" in out:
        variables = out["variables"] if out["variables"] is not None else {}
        if not isinstance(variables, Mapping):
            raise _bad("JsonType must be a dictionary [variables]", "variables")
        checked_size(variables, "variables", "Environment")
        out["variables"] = dict(variables)
    scope = out.get("scope")
    if scope is not None and scope not in ("private", "public"):
        raise _bad(f"scope must be one of ['private', 'public'], not {scope!r}", "scope")
    return out


def _find(store: Store, project: str, name: str) -> EnvironmentRecord:
    found = store.schedules.get_environment_named(project, name)
    if found is None:
        raise EnvironmentNotFound(name)
    return found


def _own(store: Store, project: str, name: str) -> EnvironmentRecord:
    found = _find(store, project, name)
    if found.project != project:
        raise NotAllowed(f"Can not access Environment resource of other projects, ID: {found.id}")
    return found


def create_environment(store: Store, project: str, values: Mapping[str, Any]) -> Body:
    """Mistral's ``POST /v2/environments``."""
    check_keys(values, CREATE_KEYS)
    given = _checked(values)
    if not given.get("name"):
        raise _bad("name: an environment needs a name", "name")
    record = EnvironmentRecord(
        id=str(uuid.uuid4()), project=project, name=given["name"],
        description=given.get("description"), variables=given.get("variables") or {},
        scope=given.get("scope") or "private",
    )  # fmt: skip
    store.schedules.create_environment(record)
    made = store.schedules.get_environment(record.id)
    return environment_body(made or record)


def update_environment(store: Store, project: str, values: Mapping[str, Any]) -> Body:
    """Mistral's ``PUT /v2/environments``: ``name`` says which one."""
    given = dict(values)
    name = given.pop("name", None)
    if not name:
        raise _bad("Name of the environment is not provided.")
    check_keys(given, UPDATE_KEYS)
    fields = _checked(given)
    if fields.get("scope") is None:
        fields.pop("scope", None)
    found = _own(store, project, str(name))
    updated = store.schedules.update_environment(found.id, fields)
    if updated is None:
        raise EnvironmentNotFound(str(name))
    return environment_body(updated)


def get_environment(store: Store, project: str, name: str) -> Body:
    return environment_body(_find(store, project, name))


def delete_environment(store: Store, project: str, name: str) -> None:
    found = _own(store, project, name)
    if not store.schedules.delete_environment(found.id):
        raise EnvironmentNotFound(name)


def list_environments(
    store: Store,
    project: str,
    *,
    filters: Mapping[str, Any] | None = None,
    sort_keys: Sequence[str] = ("created_at",),
    sort_dir: SortDir = "asc",
    limit: int | None = None,
    marker: str | None = None,
) -> list[Body]:
    """The project's environments and the public ones, one keyset page."""
    lister = store.schedules.list_environments
    rows = _visible(lister, project, filters, sort_keys, sort_dir, limit, marker)
    return [environment_body(r) for r in rows]


def resolve_env(store: Store, project: str, env: Any) -> dict[str, Any]:
    """An execution's ``env`` from its ``params.env``: a mapping as given,
    a string the variables of that stored environment (Mistral's
    ``_get_environment``)."""
    if env is None:
        return {}
    if isinstance(env, Mapping):
        return dict(env)
    if isinstance(env, str):
        found = store.schedules.get_environment_named(project, env)
        if found is None:
            raise _bad(f"Environment is not found: {env}")
        return dict(found.variables)
    raise _bad(f"Unexpected value type for environment [env={env}, type={type(env)}]")
