"""``RemoteStacks``: the stack service's methods, answered by a server.

Each method is one of :class:`~convection.service.stacks.Stacks`'s, with its
arguments, return shape and exceptions (:mod:`.http`, :mod:`.views`), over
Heat's routes: a stack given by name or id is looked up once (Heat's 302
to ``/stacks/NAME/ID``) and its path remembered for the invocation. What
Heat's API has no route for is composed from routes that exist, as
heatclient composes it: nested stacks' resources, events and hooks
(:mod:`.nested`), a stack's outputs with values (from the stack itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote, unquote

from convection.cli.remote import nested, views
from convection.cli.remote.bodies import Identity, inputs_body, located
from convection.cli.remote.http import Params, ServerClient, prefix, stack_path
from convection.cli.remote.watch import ServerWatch
from convection.common import DEFAULT_LIMITS, InvalidInput, Limits, NotFound

if TYPE_CHECKING:
    # The compiler is imported by the operations that send inputs, not by a
    # read against a server.
    from convection.model import StackInputs
    from convection.service import StackPatch

Dicts = list[dict[str, Any]]


class RemoteStacks:
    """The stack service of a ``convection server`` (or any Heat API)."""

    def __init__(self, url: str, token: str | None, *, limits: Limits = DEFAULT_LIMITS) -> None:
        self.client = ServerClient(url, token)
        self.limits = limits
        self._paths: dict[tuple[str, str], str] = {}
        self._types: dict[tuple[str, str], str] = {}
        self._watch = ServerWatch()

    @property
    def engine(self) -> ServerWatch:
        """The server runs the engine; ``--wait`` only watches."""
        return self._watch

    def close(self) -> None:
        self.client.close()

    # -- reads -------------------------------------------------------------------

    def path(self, project: str, name_or_id: str) -> str:
        """The stack's own URL path (looked up once per invocation)."""
        key = (project, name_or_id)
        found = self._paths.get(key)
        if found is None:
            found = self._paths[key] = self.client.locate(project, name_or_id)
        return found

    def get(self, project: str, name_or_id: str, sub: str = "", params: Params = ()) -> Any:
        return self.client.call("GET", self.path(project, name_or_id) + sub, params=params)

    def show(self, project: str, name_or_id: str) -> dict[str, Any]:
        return views.stack(self.get(project, name_or_id)["stack"], project)

    def list(
        self,
        project: str | None = None,
        *,
        include_deleted: bool = False,
        show_nested: bool = False,
        filters: Mapping[str, str | Sequence[str]] | None = None,
        tags: Sequence[str] = (),
        tags_any: Sequence[str] = (),
        not_tags: Sequence[str] = (),
        not_tags_any: Sequence[str] = (),
        sort_keys: Sequence[str] = (),
        sort_dir: Literal["asc", "desc"] = "desc",
        limit: int | None = None,
        marker: str | None = None,
    ) -> Dicts:
        """Heat's ``GET /stacks`` with the same filters."""
        if project is None:
            raise InvalidInput.single(
                "--all-projects needs the store: a server lists one project's stacks "
                "(the token's; choose it with --project)."
            )
        params: list[tuple[str, str]] = [("sort_dir", sort_dir)]
        for key, values in (filters or {}).items():
            params += [(key, v) for v in ([values] if isinstance(values, str) else values)]
        for key, names in (
            ("tags", tags),
            ("tags_any", tags_any),
            ("not_tags", not_tags),
            ("not_tags_any", not_tags_any),
            ("sort_keys", sort_keys),
        ):
            if names:
                params.append((key, ",".join(names)))
        params += [("show_deleted", "true")] if include_deleted else []
        params += [("show_nested", "true")] if show_nested else []
        params += [("limit", str(limit))] if limit is not None else []
        params += [("marker", marker)] if marker is not None else []
        body = self.client.call("GET", f"{prefix(project)}/stacks", params=params)
        return [views.stack(s, project) for s in body["stacks"]]

    def resources(self, project: str, name_or_id: str, *, nested_depth: int = 0) -> Dicts:
        params = [("nested_depth", str(nested_depth))] if nested_depth > 0 else []
        body = self.get(project, name_or_id, "/resources", params)
        return [views.resource(r) for r in body["resources"]]

    def resource(self, project: str, name_or_id: str, resource: str) -> dict[str, Any]:
        body = self.get(project, name_or_id, f"/resources/{quote(resource, safe='')}")
        return views.resource(body["resource"])

    def events(
        self,
        project: str,
        name_or_id: str,
        *,
        resource_name: str | None = None,
        limit: int | None = None,
        marker: str | None = None,
        sort_dir: Literal["asc", "desc"] = "asc",
        nested_depth: int = 0,
    ) -> Dicts:
        """Events through the stack's events route; a resource's through its
        ``resource_name`` filter (the resource's own route answers 404 when
        it has none, where the service answers an empty list)."""
        params: list[tuple[str, str]] = [("sort_dir", sort_dir)]
        params += [("resource_name", resource_name)] if resource_name is not None else []
        params += [("limit", str(limit))] if limit is not None else []
        params += [("marker", marker)] if marker is not None else []
        params += [("nested_depth", str(nested_depth))] if nested_depth > 0 else []
        body = self.get(project, name_or_id, "/events", params)
        found = []
        for e in body["events"]:
            stack_name, stack_id = views.stack_of(e)
            kind = e.get("resource_type") or self._type_of(project, stack_name, stack_id, e)
            view = views.event(e, str(kind))
            if nested_depth > 0:
                view["stack_name"] = stack_name
            found.append(view)
        return found

    def _type_of(self, project: str, stack_name: str, stack_id: str, event: dict[str, Any]) -> str:
        """An event's ``resource_type``, which Heat's event list leaves out:
        from the stack's resources, else (the stack's own events, removed
        resources) from the event's show; remembered for the invocation."""
        key = (stack_id, str(event["resource_name"]))
        path = stack_path(project, stack_name, stack_id)
        if key not in self._types:
            for r in self.client.call("GET", path + "/resources")["resources"]:
                self._types[(stack_id, str(r["resource_name"]))] = str(r["resource_type"])
        if key not in self._types:
            name, event_id = (quote(str(event[k]), safe="") for k in ("resource_name", "id"))
            shown = self.client.call("GET", f"{path}/resources/{name}/events/{event_id}")
            self._types[key] = str(shown["event"].get("resource_type") or "")
        return self._types[key]

    def outputs(self, project: str, name_or_id: str) -> Dicts:
        """With their values: Heat's outputs route lists keys only."""
        found: Dicts = self.show(project, name_or_id).get("outputs") or []
        return found

    def output(self, project: str, name_or_id: str, key: str) -> dict[str, Any]:
        """From the stack, as the service finds it (and with its NotFound)."""
        for found in self.outputs(project, name_or_id):
            if found["output_key"] == key:
                return found
        raise NotFound("output", key)

    def template(self, project: str, name_or_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self.get(project, name_or_id, "/template")
        return found

    def environment(self, project: str, name_or_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self.get(project, name_or_id, "/environment")
        return found

    def files(self, project: str, name_or_id: str) -> dict[str, str]:
        found: dict[str, str] = self.get(project, name_or_id, "/files")
        return found

    def hook_poll(self, project: str, name_or_id: str, *, nested_depth: int = 0) -> Dicts:
        return nested.hook_poll(self, project, name_or_id, nested_depth)

    # -- operations ----------------------------------------------------------------

    def create(
        self,
        project: str,
        name: str,
        inputs: StackInputs,
        *,
        timeout_mins: int | None = None,
        enable_rollback: bool = False,
        tags: Sequence[str] = (),
    ) -> dict[str, Any]:
        body = {
            **inputs_body(inputs),
            "stack_name": name,
            "disable_rollback": not enable_rollback,
            "tags": list(tags),
        }
        if timeout_mins is not None:
            body["timeout_mins"] = timeout_mins
        with located(inputs, Identity(name, "None", project), self.limits):
            answer = self.client.call("POST", f"{prefix(project)}/stacks", body=body)
        stack_id = str(answer["stack"]["id"])
        self._paths[(project, stack_id)] = stack_path(project, name, stack_id)
        return {"id": stack_id, "stack_name": name}

    def update(
        self,
        project: str,
        name_or_id: str,
        inputs: StackInputs | StackPatch | None,
        *,
        existing: bool = False,
        clear_parameters: Sequence[str] = (),
        rollback: bool | None = None,
        timeout_mins: int | None = None,
        tags: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """PUT replaces the inputs; ``existing`` is Heat's PATCH."""
        path = self.path(project, name_or_id)
        body = self._update_body(inputs, existing, clear_parameters)
        if rollback is not None:
            body["disable_rollback"] = not rollback
        if timeout_mins is not None:
            body["timeout_mins"] = timeout_mins
        if tags is not None:
            body["tags"] = list(tags)
        name, stack_id = _identity(path)
        with located(None if existing else inputs, Identity(name, stack_id, project), self.limits):
            self.client.call("PATCH" if existing else "PUT", path, body=body)
        return {"id": stack_id, "stack_name": name}

    def _update_body(
        self, inputs: StackInputs | StackPatch | None, existing: bool, clear: Sequence[str]
    ) -> dict[str, Any]:
        if not existing:
            if inputs is None or inputs.template is None:
                raise InvalidInput.single("A template is required unless the update is a PATCH")
            return inputs_body(inputs)
        body = inputs_body(inputs) if inputs is not None else {}
        body["clear_parameters"] = list(clear)
        return body

    def preview_create(self, project: str, name: str, inputs: StackInputs) -> dict[str, Dicts]:
        from convection.plan import PREVIEW_KEYS

        body = {**inputs_body(inputs), "stack_name": name}
        with located(inputs, Identity(name, "None", project), self.limits):
            answer = self.client.call("POST", f"{prefix(project)}/stacks/preview", body=body)
        out: dict[str, Dicts] = {k: [] for k in PREVIEW_KEYS}
        out["added"] = list(answer["stack"].get("resources") or [])
        return out

    def preview_update(
        self,
        project: str,
        name_or_id: str,
        inputs: StackInputs | StackPatch | None,
        *,
        existing: bool = False,
        clear_parameters: Sequence[str] = (),
    ) -> dict[str, Dicts]:
        path = self.path(project, name_or_id)
        body = self._update_body(inputs, existing, clear_parameters)
        name, stack_id = _identity(path)
        with located(None if existing else inputs, Identity(name, stack_id, project), self.limits):
            answer = self.client.call("PATCH" if existing else "PUT", path + "/preview", body=body)
        changes: dict[str, Dicts] = answer["resource_changes"]
        return changes

    def delete(self, project: str, name_or_id: str) -> None:
        self.client.call("DELETE", self.path(project, name_or_id))

    def _act(self, project: str, name_or_id: str, action: str) -> None:
        self.client.call("POST", self.path(project, name_or_id) + "/actions", body={action: None})

    def cancel_update(self, project: str, name_or_id: str, *, rollback: bool = True) -> None:
        action = "cancel_update" if rollback else "cancel_without_rollback"
        self._act(project, name_or_id, action)

    def check(self, project: str, name_or_id: str) -> None:
        self._act(project, name_or_id, "check")

    def suspend(self, project: str, name_or_id: str) -> None:
        self._act(project, name_or_id, "suspend")

    def resume(self, project: str, name_or_id: str) -> None:
        self._act(project, name_or_id, "resume")

    def mark_unhealthy(
        self,
        project: str,
        name_or_id: str,
        resource: str,
        reason: str = "",
        *,
        unhealthy: bool = True,
    ) -> None:
        body = {"mark_unhealthy": unhealthy, "resource_status_reason": reason}
        path = f"{self.path(project, name_or_id)}/resources/{quote(resource, safe='')}"
        self.client.call("PATCH", path, body=body)

    def signal(self, project: str, name_or_id: str, resource: str, data: Mapping[str, Any]) -> int:
        """Heat's signal answers no id; 0 stands for it (the CLI prints none)."""
        path = f"{self.path(project, name_or_id)}/resources/{quote(resource, safe='')}/signal"
        self.client.call("POST", path, body=dict(data))
        return 0

    def hook_clear(self, project: str, name_or_id: str, resource: str, hook_type: str) -> int:
        """A signal ``{unset_hook}`` to the resource, in the nested stack its
        path (``web/3``) names."""
        stack_id, name = nested.resolve_path(self, project, name_or_id, resource)
        return self.signal(project, stack_id, name, {"unset_hook": hook_type})


def _identity(path: str) -> tuple[str, str]:
    """(name, id) of a stack's path (quoted as :func:`stack_path` made it)."""
    name, stack_id = path.rsplit("/", 2)[-2:]
    return unquote(name), unquote(stack_id)
