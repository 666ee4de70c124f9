"""``RemoteWorkflows``: the workflow operations, answered by a server's
Mistral ``/v2`` API.

Each method is one of :class:`~convection.cli.local_workflows.LocalWorkflows`'
with its arguments, return shape and exceptions (:mod:`.mistral`). The
project goes in ``X-Project-Id`` (the token's must be the same; under
``--no-auth`` it is the project). A listing without ``limit`` follows
Mistral's ``next`` links, since the local one returns every row.

A definition is checked here, with the language the server runs, before
it is sent: the server only answers the text's errors, without the
warnings, and against a source name of its own; checked here they are
printed at the file's lines, warnings too, exactly as in embedded mode.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from convection.cli.remote import mistral
from convection.cli.remote.http import ErrorMap, ServerClient
from convection.cli.remote.watch import ServerWatch
from convection.common import InvalidInput

if TYPE_CHECKING:
    from convection.cli.workflow_service import DefinitionKind
    from convection.common import Diagnostic
    from convection.workflows import Uploaded

Dicts = list[dict[str, Any]]
Body = dict[str, Any]
Query = list[tuple[str, str]]
PROJECT_HEADER = "X-Project-Id"


@dataclass(frozen=True, slots=True)
class _Route:
    """One kind of definition on ``/v2``: its path, its listing's key, its
    body undone, and the language's parser for it."""

    path: str
    collection: str
    view: Callable[[Body], Body]
    parser: str


_ROUTES: dict[str, _Route] = {
    "workflow": _Route("/v2/workflows", "workflows", mistral.workflow, "parse_workflows"),
    "workbook": _Route("/v2/workbooks", "workbooks", mistral.definition, "parse_workbook"),
    "action": _Route("/v2/actions", "actions", mistral.definition, "parse_actions"),
}


def _one(identifier: str) -> str:
    return quote(identifier, safe="")


def _paging(
    sort_keys: Sequence[str], sort_dir: str, limit: int | None, marker: str | None
) -> Query:
    query: Query = [("sort_dirs", sort_dir)]
    query += [("sort_keys", ",".join(sort_keys))] if sort_keys else []
    query += [("limit", str(limit))] if limit is not None else []
    query += [("marker", marker)] if marker is not None else []
    return query


def _filters(filters: Mapping[str, Any] | None) -> Query:
    """Equality filters as Mistral takes them; several values are ``in:``."""
    query: Query = []
    for key, value in (filters or {}).items():
        values = value if isinstance(value, list | tuple) else [value]
        text = [str(v).lower() if isinstance(v, bool) else str(v) for v in values]
        query.append((key, text[0] if len(text) == 1 else "in:" + ",".join(text)))
    return query


def _is_uuid(text: str) -> bool:
    """python-mistralclient's ``uuidutils.is_uuid_like``: a cron trigger's
    workflow is sent as ``workflow_id`` when it looks like one."""
    try:
        return str(uuid.UUID(text)) == text.lower()
    except ValueError:
        return False


def _encoded(body: Mapping[str, Any], fields: Sequence[str]) -> Body:
    """``fields`` as JSON strings (Mistral's ``JsonType``), as
    python-mistralclient sends them."""
    return {k: json.dumps(v) if k in fields and v is not None else v for k, v in body.items()}


def _checked(kind: DefinitionKind, text: str, source: str) -> list[Diagnostic]:
    """The definition's warnings; its errors raised, located in ``source``
    (what ``convection.workflows.definitions`` does before it stores)."""
    from convection import workflows

    found, diags = getattr(workflows, _ROUTES[kind].parser)(text, source)
    if diags.has_errors or found is None:
        raise InvalidInput(diags.items)
    return [d for d in diags.items if not d.is_error]


class RemoteWorkflows:
    """The workflow operations of a ``convection server`` (or any Mistral API)."""

    def __init__(self, url: str, token: str | None) -> None:
        self.client = ServerClient(url, token, errors=mistral.mistral_error)
        self._watch = ServerWatch()

    @property
    def engine(self) -> ServerWatch:
        """The server runs the engine; ``--wait`` only watches."""
        return self._watch

    def close(self) -> None:
        self.client.close()

    def _call(
        self,
        project: str,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        query: Sequence[tuple[str, str]] = (),
        text: str | None = None,
        errors: ErrorMap | None = None,
    ) -> Any:
        headers = {PROJECT_HEADER: project}
        return self.client.call(
            method, path, body=body, params=query, text=text, headers=headers, errors=errors
        )

    def _listed(
        self, project: str, path: str, collection: str, query: Query, limit: int | None
    ) -> Dicts:
        """Every page up to ``limit`` (all of them without one)."""
        page = self._call(project, "GET", path, query=query)
        found: Dicts = list(page[collection])
        while page.get("next") and (limit is None or len(found) < limit):
            page = self._call(project, "GET", str(page["next"]))
            found += page[collection]
        return found if limit is None else found[:limit]

    # -- definitions -------------------------------------------------------------------
    def _upload(
        self, project: str, kind: DefinitionKind, method: str, path: str, text: str, *,
        source: str, namespace: str, scope: str,
    ) -> Uploaded:  # fmt: skip
        from convection.workflows import Uploaded

        warnings = _checked(kind, text, source)
        route = _ROUTES[kind]
        query = [("namespace", namespace), ("scope", scope)]
        answer = self._call(project, method, path, query=query, text=text)
        # Several definitions come under the collection's key; one (a
        # workbook, a workflow by id) is the answer itself.
        items = answer.get(route.collection, [answer])
        return Uploaded([route.view(i) for i in items], warnings)

    def create(
        self, project: str, kind: DefinitionKind, text: str, *, source: str, namespace: str,
        scope: Literal["private", "public"],
    ) -> Uploaded:  # fmt: skip
        path = _ROUTES[kind].path
        return self._upload(
            project, kind, "POST", path, text, source=source, namespace=namespace, scope=scope
        )

    def update(
        self, project: str, kind: DefinitionKind, text: str, *, source: str, namespace: str,
        scope: Literal["private", "public"], identifier: str | None = None,
    ) -> Uploaded:  # fmt: skip
        """``PUT`` by the document's names, or (a workflow's ``--id``) one."""
        path = _ROUTES[kind].path + ("" if identifier is None else f"/{_one(identifier)}")
        return self._upload(
            project, kind, "PUT", path, text, source=source, namespace=namespace, scope=scope
        )

    def list(
        self, project: str, kind: DefinitionKind, *, namespace: str | None = None,
        filters: Mapping[str, Any] | None = None, sort_keys: Sequence[str] = ("created_at",),
        sort_dir: Literal["asc", "desc"] = "asc", limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        route = _ROUTES[kind]
        query = _paging(sort_keys, sort_dir, limit, marker) + _filters(filters)
        query += [("namespace", namespace)] if namespace is not None else []
        found = self._listed(project, route.path, route.collection, query, limit)
        return [route.view(i) for i in found]

    def get(
        self, project: str, kind: DefinitionKind, identifier: str, namespace: str = ""
    ) -> dict[str, Any]:
        route = _ROUTES[kind]
        path = f"{route.path}/{_one(identifier)}"
        return route.view(self._call(project, "GET", path, query=[("namespace", namespace)]))

    def delete(
        self, project: str, kind: DefinitionKind, identifier: str, namespace: str = ""
    ) -> None:
        path = f"{_ROUTES[kind].path}/{_one(identifier)}"
        self._call(project, "DELETE", path, query=[("namespace", namespace)])

    def actions(
        self, project: str, *, namespace: str | None = None, is_system: bool | None = None
    ) -> Dicts:
        """System and ad-hoc actions, by name as the local list sorts them."""
        query: Query = [("sort_keys", "name")]
        query += [("namespace", namespace)] if namespace is not None else []
        query += _filters({"is_system": is_system} if is_system is not None else None)
        return self._listed(project, "/v2/actions", "actions", query, None)

    # -- executions --------------------------------------------------------------------
    def create_execution(
        self, project: str, workflow: str, *, input: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None, namespace: str = "", description: str = "",
    ) -> dict[str, Any]:  # fmt: skip
        body: Body = {"workflow_name": workflow, "workflow_namespace": namespace}
        body.update(description=description, params=dict(params or {}))
        if input is not None:
            body["input"] = dict(input)
        return mistral.execution(self._call(project, "POST", "/v2/executions", body=body))

    def list_executions(
        self, project: str, *, filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",), sort_dir: str = "asc",
        limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        query = _paging(sort_keys, sort_dir, limit, marker) + _filters(filters)
        query.append(("include_output", "true"))
        found = self._listed(project, "/v2/executions", "executions", query, limit)
        return [mistral.execution(e) for e in found]

    def get_execution(self, project: str, execution_id: str) -> dict[str, Any]:
        path = f"/v2/executions/{_one(execution_id)}"
        return mistral.execution(self._call(project, "GET", path))

    def update_execution(
        self, project: str, execution_id: str, *, state: str | None = None,
        state_info: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """A 400 here is a refused change of state (the operation's Conflict)."""
        body = {k: v for k, v in (("state", state), ("state_info", state_info)) if v is not None}
        path = f"/v2/executions/{_one(execution_id)}"
        answer = self._call(project, "PUT", path, body=body, errors=mistral.conflicts)
        return mistral.execution(answer)

    def delete_execution(self, project: str, execution_id: str, *, force: bool = False) -> None:
        query = [("force", "true")] if force else []
        self._call(project, "DELETE", f"/v2/executions/{_one(execution_id)}", query=query)

    # -- tasks and action executions ----------------------------------------------------
    def list_tasks(
        self, project: str, *, execution_id: str | None = None,
        filters: Mapping[str, Any] | None = None, sort_keys: Sequence[str] = ("created_at",),
        sort_dir: str = "asc", limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        path = "/v2/tasks" if execution_id is None else f"/v2/executions/{_one(execution_id)}/tasks"
        query = _paging(sort_keys, sort_dir, limit, marker) + _filters(filters)
        return [mistral.task(t) for t in self._listed(project, path, "tasks", query, limit)]

    def get_task(self, project: str, task_id: str) -> dict[str, Any]:
        return mistral.task(self._call(project, "GET", f"/v2/tasks/{_one(task_id)}"))

    def _put_task(self, project: str, task_id: str, body: Body) -> dict[str, Any]:
        """Rerun and skip: a 400 is a refused change (the operation's Conflict)."""
        path = f"/v2/tasks/{_one(task_id)}"
        return mistral.task(self._call(project, "PUT", path, body=body, errors=mistral.conflicts))

    def rerun_task(
        self, project: str, task_id: str, *, reset: bool = True,
        env: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        body: Body = {"state": "RUNNING", "reset": reset}
        if env is not None:
            body["env"] = dict(env)
        return self._put_task(project, task_id, body)

    def skip_task(self, project: str, task_id: str) -> dict[str, Any]:
        return self._put_task(project, task_id, {"state": "SKIPPED"})

    def list_action_executions(
        self, project: str, *, task_execution_id: str | None = None,
        sort_keys: Sequence[str] = ("created_at",), sort_dir: str = "asc",
        limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        path = "/v2/action_executions"
        if task_execution_id is not None:
            path = f"/v2/tasks/{_one(task_execution_id)}/action_executions"
        query = [*_paging(sort_keys, sort_dir, limit, marker), ("include_output", "true")]
        found = self._listed(project, path, "action_executions", query, limit)
        return [mistral.action_execution(a) for a in found]

    def get_action_execution(self, project: str, action_execution_id: str) -> dict[str, Any]:
        path = f"/v2/action_executions/{_one(action_execution_id)}"
        return mistral.action_execution(self._call(project, "GET", path))

    # -- cron triggers and environments -------------------------------------------------
    def create_cron_trigger(
        self, project: str, name: str, workflow: str, *,
        workflow_input: Mapping[str, Any] | None = None,
        workflow_params: Mapping[str, Any] | None = None, pattern: str | None = None,
        first_time: str | None = None, count: int | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """The body python-mistralclient's ``cron_triggers.create`` sends."""
        body: Body = {"name": name, "pattern": pattern, "first_execution_time": first_time}
        body["remaining_executions"] = count
        body["workflow_id" if _is_uuid(workflow) else "workflow_name"] = workflow
        given = {"workflow_input": workflow_input, "workflow_params": workflow_params}
        body.update(_encoded({k: v for k, v in given.items() if v}, tuple(given)))
        answer = self._call(project, "POST", "/v2/cron_triggers", body=body)
        return mistral.cron_trigger(answer)

    def list_cron_triggers(
        self, project: str, *, filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",), sort_dir: Literal["asc", "desc"] = "asc",
        limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        query = _paging(sort_keys, sort_dir, limit, marker) + _filters(filters)
        found = self._listed(project, "/v2/cron_triggers", "cron_triggers", query, limit)
        return [mistral.cron_trigger(t) for t in found]

    def get_cron_trigger(self, project: str, identifier: str) -> dict[str, Any]:
        path = f"/v2/cron_triggers/{_one(identifier)}"
        return mistral.cron_trigger(self._call(project, "GET", path))

    def delete_cron_trigger(self, project: str, identifier: str) -> None:
        self._call(project, "DELETE", f"/v2/cron_triggers/{_one(identifier)}")

    def create_environment(self, project: str, values: Mapping[str, Any]) -> dict[str, Any]:
        body = _encoded(values, ("variables",))
        return mistral.environment(self._call(project, "POST", "/v2/environments", body=body))

    def update_environment(self, project: str, values: Mapping[str, Any]) -> dict[str, Any]:
        body = _encoded(values, ("variables",))
        return mistral.environment(self._call(project, "PUT", "/v2/environments", body=body))

    def list_environments(
        self, project: str, *, filters: Mapping[str, Any] | None = None,
        sort_keys: Sequence[str] = ("created_at",), sort_dir: Literal["asc", "desc"] = "asc",
        limit: int | None = None, marker: str | None = None,
    ) -> Dicts:  # fmt: skip
        query = _paging(sort_keys, sort_dir, limit, marker) + _filters(filters)
        found = self._listed(project, "/v2/environments", "environments", query, limit)
        return [mistral.environment(e) for e in found]

    def get_environment(self, project: str, name: str) -> dict[str, Any]:
        path = f"/v2/environments/{_one(name)}"
        return mistral.environment(self._call(project, "GET", path))

    def delete_environment(self, project: str, name: str) -> None:
        self._call(project, "DELETE", f"/v2/environments/{_one(name)}")
