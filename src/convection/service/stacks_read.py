"""The read half of the stack service: Heat's GET requests.

:class:`StackReads` is mixed into :class:`convection.service.stacks.Stacks`, which
owns the store and the registry; it lives apart only to keep each module
small. Everything returned is a dict (or list of dicts) with Heat's API
field names, redacted by :mod:`convection.service.views`.

Three small caches keep repeated reads cheap without holding any truth the
store lacks: template descriptions and template *heads* (the description
and parameter schemas, all a stack view reads of its template) by template
id, since templates never change once stored, and the store's position of
recently returned events, so an event ``marker`` (Heat's event uuid)
resolves without a scan. The heads make ``show`` O(1) in the number of
resources: without them every show parsed the whole stored template
(issue 6's outputs benchmark, docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from convection.common import InvalidInput, NotFound, ResourceNotFound, Status
from convection.hot import HEAD_SECTIONS
from convection.service.views import (
    event_view,
    masked_environment,
    output_view,
    redacted,
    required_by,
    resource_view,
    secret_values,
    stack_detail,
    stack_summary,
    template_description,
)
from convection.store import EventRecord, ResourceRecord, StackRecord, Store, TemplateRecord

if TYPE_CHECKING:
    from convection.resources import TypeRegistry

Dicts = list[dict[str, Any]]

#: Heat's stack list sort keys (and the store's own names) -> store keys.
SORT_KEYS = {
    "stack_name": "name",
    "stack_status": "status",
    "creation_time": "created_at",
    "updated_time": "updated_at",
    "name": "name",
    "status": "status",
    "created_at": "created_at",
    "updated_at": "updated_at",
}
#: Heat's stack list filters this service supports.
FILTER_KEYS = ("id", "name", "status", "action")
#: Entries kept by each cache before it starts again.
_CACHE_SIZE = 4096


class StackReads:
    """Reads of stacks, their resources, events, outputs and inputs.

    On its own it is what read-only commands use: it loads neither the
    engine nor the compiler, and builds the resource type registry only
    when a read needs a type's schema (a resource's attributes)."""

    def __init__(self, store: Store, registry: TypeRegistry | None = None) -> None:
        self.store = store
        self._registry = registry
        self._descriptions: dict[int, str] = {}
        self._heads: dict[int, TemplateRecord] = {}
        self._event_ids: dict[tuple[str, str], int] = {}

    @property
    def registry(self) -> TypeRegistry:
        if self._registry is None:
            from convection.resources import default_registry  # every built-in type

            self._registry = default_registry()
        return self._registry

    def show(self, project: str, name_or_id: str) -> dict[str, Any]:
        stack = self._get(project, name_or_id)
        return stack_detail(stack, self._head(stack.template_id))

    def identify(self, project: str, name_or_id: str) -> dict[str, Any]:
        """The stack as a list shows it, without reading its template: what
        a route needs to check the name in its URL (O(1))."""
        stack = self._get(project, name_or_id)
        return stack_summary(stack, None, description="")

    def resources(
        self, project: str, name_or_id: str, *, nested_depth: int = 0, detail: bool = False
    ) -> Dicts:
        """A stack's resources; with ``nested_depth``, those of its nested
        stacks that deep too, each with ``parent_resource`` (Heat's
        ``resource list --nested-depth``); with ``detail``, their
        attributes too (``--long``)."""
        found: Dicts = []
        for stack, parent_resource in self._tree(project, name_or_id, nested_depth):
            rows = self.store.list_resources(stack.id, current_only=True)
            needed = required_by(rows)
            for r in rows:
                view = resource_view(r, stack, needed.get(r.name, []), self.registry, detail=detail)
                if parent_resource is not None:
                    view["parent_resource"] = parent_resource
                found.append(view)
        return found

    def nested_stacks(self, project: str, name_or_id: str) -> dict[str, dict[str, str]]:
        """The live nested stacks a stack's resources own, by owner name,
        each as ``id`` and ``stack_name`` (Heat's ``nested`` link). One query."""
        stack = self._get(project, name_or_id)
        children = self.store.list_stacks(stack.project, parent_id=stack.id)
        return {
            c.parent_resource: {"id": c.id, "stack_name": c.name}
            for c in children
            if c.parent_resource is not None
        }

    def _tree(
        self, project: str, name_or_id: str, depth: int
    ) -> list[tuple[StackRecord, str | None]]:
        """The stack and its live nested stacks to ``depth``, parents first,
        each with the resource that owns it (None for the stack asked).
        A ``depth`` past the last level costs nothing: the walk stops at
        the first level with no stacks (a client's ``nested_depth`` may be
        any integer)."""
        top = self._get(project, name_or_id)
        out: list[tuple[StackRecord, str | None]] = [(top, None)]
        level = [top]
        for _ in range(max(0, depth)):
            if not level:
                break
            level = [
                child
                for parent in level
                for child in self.store.list_stacks(
                    parent.project, parent_id=parent.id, sort_keys=("name",), sort_dir="asc"
                )
            ]
            out.extend((child, child.parent_resource) for child in level)
        return out

    def resource(self, project: str, name_or_id: str, resource: str) -> dict[str, Any]:
        stack = self._get(project, name_or_id)
        row = self._resource_row(stack, resource)
        rows = self.store.list_resources(stack.id, current_only=True)
        needed = required_by(rows).get(row.name, [])
        view = resource_view(row, stack, needed, self.registry, detail=True)
        if stack.parent_resource is not None:
            view["parent_resource"] = stack.parent_resource
        return view

    def recent_events(self, project: str, name_or_id: str, limit: int) -> Dicts:
        """The stack's ``limit`` newest events, oldest first: a live view
        shows them, then follows ``events(marker=<the last one's id>)``
        from there, missing nothing (O(limit), where ``events`` with
        ``sort_dir="desc"`` reads them all)."""
        stack = self._get(project, name_or_id)
        found = self.store.last_events(stack.id, limit)
        if found:
            self._remember_event(found[0])
        return [event_view(e) for e in reversed(found)]

    def resource_masked(self, project: str, name_or_id: str, resource: str) -> dict[str, Any]:
        """A resource as ``resource show`` has it, with the properties last
        applied to it (Heat shows them only in an event's show), every
        secret of the stack masked in both, wherever it was spliced in:
        what the dashboard's resource panel shows. Heat's own API shows an
        attribute that holds a hidden value as it is; a screen others may
        look over does not."""
        stack = self._get(project, name_or_id)
        rows = self.store.list_resources(stack.id, current_only=True)
        row = next((r for r in rows if r.name == resource), None)
        if row is None:
            raise ResourceNotFound(resource, stack.name)
        template = self.store.get_template(stack.template_id) if stack.template_id else None
        secrets = secret_values(stack, template, rows, self.registry)
        view = resource_view(row, stack, required_by(rows).get(row.name, []), self.registry,
                             detail=True)  # fmt: skip
        if stack.parent_resource is not None:
            view["parent_resource"] = stack.parent_resource
        shown: dict[str, Any] = redacted(view, secrets)
        shown["properties"] = redacted(row.properties, secrets)
        return shown

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
        """A stack's events, oldest first (``sort_dir="desc"``: newest
        first). With ``marker`` (an event's ``id``), only the events after
        it in that order, as Heat pages them; ``limit`` counts after that.
        With ``nested_depth``, nested stacks' events are merged in by time,
        each with its ``stack_name`` (Heat's ``event list --nested-depth``)."""
        if nested_depth > 0:
            return self._nested_events(project, name_or_id, nested_depth, sort_dir, limit)
        stack = self._get(project, name_or_id)
        after = None if marker is None else self._event_position(stack.id, marker)
        if sort_dir == "asc":
            found = self.store.list_events(
                stack.id, resource_name=resource_name, after_id=after, limit=limit
            )
        elif sort_dir == "desc":
            every = self.store.list_events(stack.id, resource_name=resource_name)
            older = [e for e in every if after is None or e.id < after]
            found = older[::-1][:limit]
        else:
            raise InvalidInput.single(f"sort_dir must be asc or desc, not {sort_dir!r}")
        if found:
            self._remember_event(found[-1])
        return [event_view(e) for e in found]

    def _nested_events(
        self,
        project: str,
        name_or_id: str,
        depth: int,
        sort_dir: Literal["asc", "desc"],
        limit: int | None,
    ) -> Dicts:
        merged: list[tuple[EventRecord, StackRecord]] = []
        for stack, _ in self._tree(project, name_or_id, depth):
            merged.extend((e, stack) for e in self.store.list_events(stack.id))
        merged.sort(key=lambda pair: (pair[0].timestamp, pair[0].id), reverse=sort_dir == "desc")
        out = []
        for event, stack in merged[:limit]:
            view = event_view(event)
            view["stack_name"] = stack.name
            view["stack_identity"] = stack.id  # the REST API links each to its stack
            out.append(view)
        return out

    def outputs(self, project: str, name_or_id: str) -> Dicts:
        stack = self._get(project, name_or_id)
        return [output_view(o) for o in stack.outputs]

    def output(self, project: str, name_or_id: str, key: str) -> dict[str, Any]:
        for o in self.outputs(project, name_or_id):
            if o["output_key"] == key:
                return o
        raise NotFound("output", key)

    # -- what the stack was given (Heat's GET .../template, environment, files)

    def template(self, project: str, name_or_id: str) -> dict[str, Any]:
        """The template the stack converges to (during an update, the new one)."""
        return dict(self._template_record(project, name_or_id).template)

    def environment(self, project: str, name_or_id: str) -> dict[str, Any]:
        """The merged environment stored with it; hidden parameter values masked."""
        record = self._template_record(project, name_or_id)
        return masked_environment(record.environment, record.template, record.files)

    def files(self, project: str, name_or_id: str) -> dict[str, str]:
        """The ``files`` map stored with it (get_file contents, nested templates)."""
        return dict(self._template_record(project, name_or_id).files)

    def hook_poll(self, project: str, name_or_id: str, *, nested_depth: int = 0) -> Dicts:
        """Resources waiting at a hook (heatclient's ``stack hook poll``):
        each one's pause event, plus ``hook_type``, ``stack_name`` and
        ``resource_path``; with ``nested_depth``, nested stacks' too."""
        from convection.service.hooks import pending  # the engine's hook rules

        stack = self._get(project, name_or_id)
        return pending(self.store, stack, nested_depth)

    # -- helpers shared with the write half ------------------------------------

    def _get(self, project: str, name_or_id: str) -> StackRecord:
        stack = self.store.get_stack(project, name_or_id)
        if stack is None:
            raise NotFound("Stack", name_or_id)
        return stack

    def _live(self, project: str, name_or_id: str) -> StackRecord:
        stack = self._get(project, name_or_id)
        if stack.deleted_at is not None:
            raise NotFound("Stack", name_or_id)
        return stack

    def _resource_row(self, stack: StackRecord, name: str) -> ResourceRecord:
        for row in self.store.list_resources(stack.id, current_only=True):
            if row.name == name:
                return row
        raise ResourceNotFound(name, stack.name)

    def _template_record(self, project: str, name_or_id: str) -> TemplateRecord:
        stack = self._get(project, name_or_id)
        if stack.template_id is None:
            raise NotFound("Template of stack", name_or_id)
        return self.store.get_template(stack.template_id)

    def _remember_event(self, event: EventRecord) -> None:
        if len(self._event_ids) >= _CACHE_SIZE:
            self._event_ids.clear()
        self._event_ids[(event.stack_id, event.uuid)] = event.id

    def _event_position(self, stack_id: str, marker: str) -> int:
        """The store's id of the event whose API id is ``marker``."""
        known = self._event_ids.get((stack_id, marker))
        if known is not None:
            return known
        for e in self.store.list_events(stack_id):
            if e.uuid == marker:
                self._remember_event(e)
                return e.id
        raise NotFound("Event", marker)

    def _head(self, template_id: int | None) -> TemplateRecord | None:
        """The stored template with only what a stack view reads of it."""
        if template_id is None:
            return None
        found = self._heads.get(template_id)
        if found is None:
            record = self.store.get_template(template_id)
            found = self._remember_head(template_id, record.template, record.environment)
        return found

    def _remember_head(
        self, template_id: int, template: Mapping[str, Any], environment: Mapping[str, Any]
    ) -> TemplateRecord:
        """Keep what a stack view reads of ``template`` and its
        ``environment`` (the ``parameter_defaults``, which a parameter's
        shown value may come from); a caller that just stored it seeds this,
        so showing a 10,000-resource stack after its create does not read
        and decode the whole template back."""
        if len(self._heads) >= _CACHE_SIZE:
            self._heads.clear()
        head = {k: v for k, v in template.items() if k in HEAD_SECTIONS}
        env = {k: v for k, v in environment.items() if k == "parameter_defaults"}
        found = self._heads[template_id] = TemplateRecord(
            id=template_id, template=head, environment=env
        )
        return found

    def _description(self, stack: StackRecord) -> str:
        if stack.template_id is None:
            return ""
        found = self._descriptions.get(stack.template_id)
        if found is None:
            if len(self._descriptions) >= _CACHE_SIZE:
                self._descriptions.clear()
            record = self.store.get_template(stack.template_id)
            found = self._descriptions[stack.template_id] = template_description(record)
        return found

    # Last: inside this class body, ``list`` is this method.
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
        """Stacks as Heat's ``GET /stacks`` lists them (``project=None``:
        every project). Filters on ``id``, ``name``, ``action`` and
        ``status`` (``COMPLETE`` or ``CREATE_COMPLETE``), each a value or a
        list of values; ``tags`` (all of them), ``tags_any``, ``not_tags``
        (not all of them), ``not_tags_any`` (none of them). Heat's sort keys
        (``stack_name``, ``stack_status``, ``creation_time``,
        ``updated_time``); newest first by default. ``marker`` is the id of
        the last stack of the previous page. Nested stacks only with
        ``show_nested``, deleted ones only with ``include_deleted``."""
        query, states = _stack_filters(filters or {})
        keys = [_sort_key(k) for k in sort_keys] or ["created_at"]
        tagging = (tuple(tags), tuple(tags_any), tuple(not_tags), tuple(not_tags_any))
        later = any(tagging) or states is not None  # filters applied here, after the store
        try:
            rows = self.store.list_stacks(
                project,
                include_deleted=include_deleted,
                show_nested=show_nested,
                filters=query,
                sort_keys=keys,
                sort_dir=sort_dir,
                limit=None if later else limit,
                marker=marker,
            )
        except ValueError as exc:
            raise InvalidInput.single(str(exc)) from None
        if later:
            rows = [r for r in rows if _tags_match(r, *tagging) and _state_match(r, states)]
            rows = rows[:limit] if limit is not None else rows
        return [stack_summary(r, None, description=self._description(r)) for r in rows]


def _sort_key(key: str) -> str:
    found = SORT_KEYS.get(key)
    if found is None:
        allowed = ", ".join(k for k in SORT_KEYS if k != SORT_KEYS[k])
        raise InvalidInput.single(f"Cannot sort stacks by {key!r}; use one of {allowed}")
    return found


def _split_state(value: str) -> tuple[str | None, str]:
    """``CREATE_COMPLETE`` -> (CREATE, COMPLETE); ``COMPLETE`` -> (None, COMPLETE)."""
    for status in Status:
        if value.endswith("_" + status.value) and value != status.value:
            return value[: -len(status.value) - 1], status.value
    return None, value


def _stack_filters(
    filters: Mapping[str, str | Sequence[str]],
) -> tuple[dict[str, list[str]], set[tuple[str | None, str]] | None]:
    """Store filters, and the (action, status) pairs to check afterwards
    when a status filter names whole states (``CREATE_COMPLETE``)."""
    query: dict[str, list[str]] = {}
    for key, value in filters.items():
        if key not in FILTER_KEYS:
            known = ", ".join(FILTER_KEYS)
            raise InvalidInput.single(f"Cannot filter stacks on {key!r}; use one of {known}")
        query[key] = [value] if isinstance(value, str) else [str(v) for v in value]
    if "status" not in query:
        return query, None
    pairs = {_split_state(v) for v in query["status"]}
    query["status"] = sorted({status for _, status in pairs})
    if all(action is None for action, _ in pairs):
        return query, None
    return query, pairs


def _state_match(stack: StackRecord, pairs: set[tuple[str | None, str]] | None) -> bool:
    if pairs is None:
        return True
    return any(a in (None, stack.action) and s == stack.status for a, s in pairs)


def _tags_match(
    stack: StackRecord,
    tags: Sequence[str],
    tags_any: Sequence[str],
    not_tags: Sequence[str],
    not_tags_any: Sequence[str],
) -> bool:
    """Heat's four tag filters; each given one must hold."""
    have = set(stack.tags)
    return (
        (not tags or set(tags) <= have)
        and (not tags_any or bool(have & set(tags_any)))
        and (not not_tags or not set(not_tags) <= have)
        and (not not_tags_any or not have & set(not_tags_any))
    )
