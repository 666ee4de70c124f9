"""Stored definitions: workflows, workbooks and ad-hoc actions, uploaded as
text, validated as Mistral validates them, and kept in ``store.workflows``.

These are the operations behind ``convection workflow|workbook|action
create|update|list|show|delete|definition`` and, later, Mistral's
``/v2/workflows``, ``/v2/workbooks`` and ``/v2/actions``: each takes a store
and a project and returns bodies with Mistral's REST field names
(``mistral/api/controllers/v2/resources.py``): ``id, name, namespace,
input, interface, definition, tags, scope, project_id, created_at,
updated_at`` (and ``is_system``, ``description`` for actions). JSON-typed
fields (``interface``) are plain values here; a REST layer encodes them as
Mistral does.

Mistral's rules, from its services and DB layer:

* a document of several workflows stores each with its own definition: the
  document's ``version`` and that workflow's entry
  (``_cut_wf_definition_from_all``, ``mistral/services/workflows.py``);
  Mistral re-dumps them with PyYAML, this cuts the lines out of the text so
  comments and layout stay, and falls back to a dump when the text cannot
  be cut (a flow-style document);
* a workbook's workflows and actions are stored as ``<workbook>.<name>``
  with the workbook's scope and namespace, their text cut out of the
  workbook by indentation (``_parse_def_from_wb``, ``mistral/lang/parser.py``),
  created or updated (``_on_workbook_update``, ``mistral/services/workbooks.py``);
* an ad-hoc action keeps the whole document it came in
  (``_get_action_values``, ``mistral/services/actions.py``); its ``input``
  reads ``name, name=<default as JSON>`` (``get_input_list``);
* the unique key is (name, namespace, project); a definition is found by id
  or by name in a namespace, the project's own first, then a public one;
  changing or deleting another project's definition is refused
  (``check_db_obj_access``, ``mistral/db/utils.py``), and so is changing a
  system action;
* deleting a workflow is refused only for cron and event triggers (which
  do not exist here yet), never for its executions: an execution keeps the
  text it started with (``delete_workflow_definition``,
  ``mistral/db/v2/sqlalchemy/api.py``); deleting a workbook deletes its row
  only (``delete_workbook``), as Mistral does.

The store writes one row per call, where Mistral uses one transaction per
upload: every name is checked before the first write, and rows already
written are removed again if a later write fails.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar

from convection.common import Conflict, Diagnostic, InvalidInput, NotFound, suggest
from convection.store import (
    ActionDefinitionRecord,
    DefinitionExists,
    WorkbookRecord,
    WorkflowDefinitionRecord,
)
from convection.workflows.lang import (
    REQUIRED,
    ActionSpec,
    WorkbookSpec,
    WorkflowSpec,
    parse_actions,
    parse_workbook,
    parse_workflows,
)

if TYPE_CHECKING:
    from convection.store import Store, WorkflowStore
    from convection.workflows.actions import ActionRegistry

Body = dict[str, Any]
Scope = Literal["private", "public"]
SortDir = Literal["asc", "desc"]

#: Mistral's ``datetime_to_str`` (``mistral/utils/__init__.py``).
_TIME_FORMAT: Final = "%Y-%m-%d %H:%M:%S"


# -- errors, in Mistral's words ----------------------------------------------------------
class DefinitionNotFound(NotFound):
    """No such workflow, workbook or action (Mistral's ``DBEntityNotFoundError``,
    HTTP 404), with Mistral's message."""

    def __init__(self, kind: str, name: str, message: str) -> None:
        self.kind = kind
        self.name = name
        Exception.__init__(self, message)


class NotAllowed(Conflict):
    """Another project's definition, or a system action (Mistral's
    ``NotAllowedException``, HTTP 403, and ``InvalidActionException``)."""


def workflow_not_found(identifier: str, namespace: str) -> DefinitionNotFound:
    return DefinitionNotFound(
        "workflow",
        identifier,
        f"Workflow not found [workflow_identifier={identifier}, namespace={namespace}]",
    )


def workbook_not_found(name: str) -> DefinitionNotFound:
    return DefinitionNotFound("workbook", name, f"Workbook not found [workbook_name={name}]")


def action_not_found(name: str, known: Iterable[str] = ()) -> DefinitionNotFound:
    """Mistral's message, with a near miss among ``known`` names if any."""
    message = f"Action definition not found [action_name={name}]{suggest(name, known)}"
    return DefinitionNotFound("action", name, message)


_MODELS: Final = {
    "workflow": "WorkflowDefinition",
    "workbook": "Workbook",
    "action": "ActionDefinition",
}


def _check_access(kind: str, record: Any, project: str) -> None:
    if record.project != project:
        raise NotAllowed(
            f"Can not access {_MODELS[kind]} resource of other projects, ID: {record.id}"
        )


# -- what an upload gives back -----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Uploaded:
    """The stored definitions' bodies, and the warnings of the validation."""

    items: list[Body]
    warnings: list[Diagnostic] = field(default_factory=list)


def _valid(found: Any, diags: Any) -> list[Diagnostic]:
    if diags.has_errors or found is None:
        raise InvalidInput(diags.items)
    return [d for d in diags.items if not d.is_error]


# -- bodies ------------------------------------------------------------------------------
def _time(value: datetime | None) -> str | None:
    return None if value is None else value.strftime(_TIME_FORMAT)


#: Each kind's fields, in the order of Mistral's resources (and of its JSON).
_WORKFLOW_FIELDS: Final = ("id", "name", "namespace", "input", "interface", "definition",
                           "tags", "scope", "project_id", "created_at", "updated_at")  # fmt: skip
_WORKBOOK_FIELDS: Final = ("id", "name", "namespace", "definition", "tags", "scope",
                           "project_id", "created_at", "updated_at")  # fmt: skip
_ACTION_FIELDS: Final = ("id", "name", "is_system", "input", "description", "tags",
                         "definition", "scope", "project_id", "namespace", "created_at",
                         "updated_at")  # fmt: skip


def _field(record: Any, name: str) -> Any:
    """One field as Mistral shows it: where a record's attribute is named
    or typed otherwise, and a stored action never being a system one."""
    if name == "project_id":
        return record.project
    if name == "tags":
        return list(record.tags)
    if name in ("created_at", "updated_at"):
        return _time(getattr(record, name))
    if name == "is_system":
        return False
    return getattr(record, name)


def _body(record: Any, fields: Sequence[str]) -> Body:
    return {name: _field(record, name) for name in fields}


def workflow_body(record: WorkflowDefinitionRecord) -> Body:
    """A workflow as Mistral's API shows it (``resources.Workflow``)."""
    return _body(record, _WORKFLOW_FIELDS)


def workbook_body(record: WorkbookRecord) -> Body:
    """A workbook as Mistral's API shows it (``resources.Workbook``)."""
    return _body(record, _WORKBOOK_FIELDS)


def action_body(record: ActionDefinitionRecord) -> Body:
    """An ad-hoc action as Mistral's API shows it (``resources.Action``)."""
    return _body(record, _ACTION_FIELDS)


def system_action_body(cls: Any) -> Body:
    """A registered action (a plugin), as Mistral shows a system action:
    read-only, public, no definition text."""
    from convection.workflows.actions import input_text

    return {
        "id": None,
        "name": cls.name,
        "is_system": True,
        "input": input_text(cls),
        "description": cls.description,
        "tags": [],
        "definition": None,
        "scope": "public",
        "project_id": None,
        "namespace": "",
        "created_at": None,
        "updated_at": None,
    }


def input_text(declared: Mapping[str, Any]) -> str:
    """Declared input as Mistral writes it: ``a, b=1, c="x"`` (required
    names bare, defaults as JSON; ``get_input_list``)."""
    return ", ".join(
        name if default is REQUIRED else f"{name}={json.dumps(default)}"
        for name, default in declared.items()
    )


def interface(spec: WorkflowSpec) -> Body:
    """``{"input": [...], "output": [...]}``: the input list as written
    (``name`` or ``{name: default}``) and the output's keys."""
    inputs: list[Any] = [
        name if default is REQUIRED else {name: default} for name, default in spec.input.items()
    ]
    return {"input": inputs, "output": list(spec.output)}


# -- cutting one entry's text out of a document ------------------------------------------
_TOP_KEY: Final = re.compile(
    r"""^(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([^\s#'"][^:#]*?))\s*:(?:\s|$)"""
)


def _top_key(line: str) -> str | None:
    match = _TOP_KEY.match(line)
    if match is None:
        return None
    double, single, plain = match.groups()
    if double is not None:
        return str(json.loads(f'"{double}"'))
    if single is not None:
        return single.replace("''", "'")
    return plain


def _entries(text: str) -> dict[str, str] | None:
    """The top-level entries of a block-style YAML mapping, each its own
    lines (the comments just above a key go with it); None when the text
    is not laid out so (a flow mapping, several documents)."""
    lines = text.splitlines(keepends=True)
    starts: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        if not line.strip() or line[0] in " \t#":
            continue
        if line.rstrip() in ("---", "..."):
            if starts:
                return None
            continue
        key = _top_key(line)
        if key is None:
            return None
        starts.append((i, key))
    out: dict[str, str] = {}
    for n, (i, key) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        # comments and blank lines at column 0 just above the next key are its own
        while end > i + 1 and n + 1 < len(starts) and _loose(lines[end - 1]):
            end -= 1
        begin = i
        while begin > 0 and lines[begin - 1].startswith("#"):
            begin -= 1
        if key in out:
            return None
        out[key] = "".join(lines[begin:end])
    return out


def _loose(line: str) -> bool:
    return not line.strip() or line.startswith("#")


def cut_workflow(text: str, name: str, spec: WorkflowSpec) -> str:
    """One workflow of a multi-workflow document as a document of its own:
    ``version`` and its entry, as written; a YAML dump of the two when the
    cut does not parse back to the same workflow."""
    entries = _entries(text)
    if entries is not None and "version" in entries and name in entries:
        cut = (entries["version"].rstrip("\n") + "\n" + entries[name]).rstrip() + "\n"
        specs, diags = parse_workflows(cut, name)
        if not diags.has_errors and specs == [spec]:
            return cut
    import yaml

    data = yaml.safe_load(text)
    return str(yaml.safe_dump({"version": data["version"], name: data[name]}, sort_keys=False))


def cut_from_workbook(text: str, section: str, name: str) -> str:
    """A workbook item's text, by indentation (Mistral's ``_parse_def_from_wb``):
    the item's key line and every deeper line after it, dedented."""
    found = re.search(rf"(?m)^{section}:", text)
    if found is None:
        return ""
    lines = text[found.start() :].splitlines(keepends=True)[1:]
    wanted = {f"{name}:", f'"{name}":', f"'{name}':"}
    out: list[str] = []
    indent = 0
    rest = iter(lines)
    for line in rest:
        if line.strip() in wanted:
            indent = len(line) - len(line.lstrip())
            out.append(line.lstrip())
            break
    else:
        return ""
    for line in rest:
        stripped = line.strip()
        if not stripped:
            out.append(line)
        elif stripped.startswith("#"):
            hash_at = line.index("#")
            out.append(line if indent > hash_at else line[indent:])
        elif indent < len(line) - len(line.lstrip()):
            out.append(line[indent:])
        else:
            break
    return "".join(out).rstrip() + "\n"


# -- workflows ---------------------------------------------------------------------------
def _rows(store: Store) -> WorkflowStore:
    return store.workflows


def _new_id() -> str:
    return str(uuid.uuid4())


def _own(found: Any, project: str) -> Any | None:
    """A lookup's answer if it is the project's own (not another's public one)."""
    return found if found is not None and found.project == project else None


def _workflow_values(spec: WorkflowSpec, definition: str, scope: str) -> Body:
    return {
        "definition": definition,
        "input": input_text(spec.input),
        "interface": interface(spec),
        "tags": list(spec.tags),
        "scope": scope,
    }


def _definitions(text: str, specs: Sequence[WorkflowSpec]) -> list[str]:
    if len(specs) == 1:
        return [text]
    return [cut_workflow(text, spec.name, spec) for spec in specs]


def _undo(deletes: Iterable[Callable[[], object]]) -> None:
    for delete in deletes:
        try:
            delete()
        except Exception:  # best effort: the first error is the one to report
            continue


def create_workflows(
    store: Store,
    project: str,
    text: str,
    *,
    source: str = "<workflow>",
    namespace: str = "",
    scope: Scope = "private",
) -> Uploaded:
    """Every workflow of a document, each stored with its own text; none
    if any name is taken (Mistral's ``DBDuplicateEntryError``)."""
    specs, diags = parse_workflows(text, source)
    warnings = _valid(specs, diags)
    rows = _rows(store)
    for spec in specs:
        if _own(rows.get_workflow(project, spec.name, namespace), project) is not None:
            raise DefinitionExists("workflow", spec.name, namespace, project)
    made: list[WorkflowDefinitionRecord] = []
    try:
        for spec, definition in zip(specs, _definitions(text, specs), strict=True):
            record = WorkflowDefinitionRecord(
                id=_new_id(),
                project=project,
                name=spec.name,
                namespace=namespace,
                **_workflow_values(spec, definition, scope),
            )
            rows.create_workflow(record)
            made.append(record)
    except Exception:
        _undo(partial(rows.delete_workflow, r.id) for r in made)
        raise
    return Uploaded([_workflow_by_id(rows, project, r.id) for r in made], warnings)


def update_workflows(
    store: Store,
    project: str,
    text: str,
    *,
    source: str = "<workflow>",
    namespace: str = "",
    scope: Scope = "private",
    identifier: str | None = None,
) -> Uploaded:
    """Each workflow of the document replaces the stored one of its name
    (or, with ``identifier``, the one workflow of that id or name): its
    text, input, tags and scope (Mistral's ``update_workflows``)."""
    specs, diags = parse_workflows(text, source)
    warnings = _valid(specs, diags)
    if identifier is not None and len(specs) > 1:
        raise InvalidInput.single(
            "More than one workflows are not supported for update with UUID provided."
        )
    rows = _rows(store)
    targets = []
    for spec in specs:
        key = identifier if identifier is not None else spec.name
        found = rows.get_workflow(project, key, namespace)
        if found is None:
            raise workflow_not_found(key, namespace)
        _check_access("workflow", found, project)
        targets.append(found)
    out = []
    for spec, found, definition in zip(specs, targets, _definitions(text, specs), strict=True):
        values = _workflow_values(spec, definition, scope)
        if identifier is not None:
            values["name"] = spec.name
        updated = rows.update_workflow(found.id, values)
        if updated is None:
            raise workflow_not_found(found.name, namespace)
        out.append(workflow_body(updated))
    return Uploaded(out, warnings)


def _workflow_by_id(rows: WorkflowStore, project: str, workflow_id: str) -> Body:
    found = rows.get_workflow(project, workflow_id)
    if found is None:
        raise workflow_not_found(workflow_id, "")
    return workflow_body(found)


def get_workflow_record(
    store: Store, project: str, identifier: str, namespace: str = ""
) -> WorkflowDefinitionRecord:
    return _record(_WORKFLOWS, store, project, identifier, namespace)


def get_workflow(store: Store, project: str, identifier: str, namespace: str = "") -> Body:
    """By id or by name in ``namespace``: the project's own, else a public one."""
    return workflow_body(get_workflow_record(store, project, identifier, namespace))


def delete_workflow(store: Store, project: str, identifier: str, namespace: str = "") -> None:
    _delete(_WORKFLOWS, store, project, identifier, namespace)


def _visible(
    lister: Callable[..., list[Any]],
    project: str,
    filters: Mapping[str, Any] | None,
    sort_keys: Sequence[str],
    sort_dir: SortDir,
    limit: int | None,
    marker: str | None,
) -> list[Any]:
    """The project's rows and every project's public ones, one page: both
    keyset listings share the sort and the marker, so merging them and
    keeping ``limit`` is the page of their union."""
    own = lister(
        project, filters=filters, sort_keys=sort_keys, sort_dir=sort_dir, limit=limit, marker=marker
    )
    public_filters = {**(filters or {}), "scope": "public"}
    if (filters or {}).get("scope") not in (None, "public"):
        public: list[Any] = []
    else:
        public = lister(
            None,
            filters=public_filters,
            sort_keys=sort_keys,
            sort_dir=sort_dir,
            limit=limit,
            marker=marker,
        )
    merged = {r.id: r for r in [*own, *public] if r.project == project or r.scope == "public"}
    keys = list(dict.fromkeys([*(sort_keys or ("created_at",)), "id"]))

    def order(record: Any) -> tuple[Any, ...]:
        values = []
        for k in keys:
            value = getattr(record, k)
            if value is None and k in ("updated_at", "started_at"):
                value = record.created_at
            values.append(value)
        return tuple(values)

    rows = sorted(merged.values(), key=order, reverse=sort_dir == "desc")
    return rows if limit is None else rows[:limit]


def _filters(namespace: str | None, extra: Mapping[str, Any] | None) -> dict[str, Any] | None:
    out = dict(extra or {})
    if namespace is not None:
        out["namespace"] = namespace
    return out or None


R = TypeVar("R", WorkflowDefinitionRecord, WorkbookRecord, ActionDefinitionRecord)


@dataclass(frozen=True, slots=True)
class _Kind(Generic[R]):
    """What finding, deleting and listing differ in between workflows,
    workbooks and ad-hoc actions: their rows in ``store.workflows``, their
    body and Mistral's not-found error (given the identifier and namespace)."""

    name: str
    get: Callable[[WorkflowStore, str, str, str], R | None]
    delete: Callable[[WorkflowStore, str], bool]
    lister: Callable[[WorkflowStore], Callable[..., list[R]]]
    body: Callable[[R], Body]
    not_found: Callable[[str, str], DefinitionNotFound]


_WORKFLOWS: Final[_Kind[WorkflowDefinitionRecord]] = _Kind(
    name="workflow",
    get=lambda rows, project, key, namespace: rows.get_workflow(project, key, namespace),
    delete=lambda rows, row_id: rows.delete_workflow(row_id),
    lister=lambda rows: rows.list_workflows,
    body=workflow_body,
    not_found=workflow_not_found,
)
_WORKBOOKS: Final[_Kind[WorkbookRecord]] = _Kind(
    name="workbook",
    get=lambda rows, project, key, namespace: rows.get_workbook(project, key, namespace),
    delete=lambda rows, row_id: rows.delete_workbook(row_id),
    lister=lambda rows: rows.list_workbooks,
    body=workbook_body,
    not_found=lambda name, _namespace: workbook_not_found(name),
)
_ACTIONS: Final[_Kind[ActionDefinitionRecord]] = _Kind(
    name="action",
    get=lambda rows, project, key, namespace: rows.get_adhoc_action(project, key, namespace),
    delete=lambda rows, row_id: rows.delete_adhoc_action(row_id),
    lister=lambda rows: rows.list_adhoc_actions,
    body=action_body,
    not_found=lambda name, _namespace: action_not_found(name),
)


def _record(kind: _Kind[R], store: Store, project: str, identifier: str, namespace: str) -> R:
    found = kind.get(_rows(store), project, identifier, namespace)
    if found is None:
        raise kind.not_found(identifier, namespace)
    return found


def _delete(kind: _Kind[R], store: Store, project: str, identifier: str, namespace: str) -> None:
    """Only the project's own; found first, so another's is refused, not missed."""
    found = _record(kind, store, project, identifier, namespace)
    _check_access(kind.name, found, project)
    if not kind.delete(_rows(store), found.id):
        raise kind.not_found(identifier, namespace)


def _list(
    kind: _Kind[R],
    store: Store,
    project: str,
    namespace: str | None,
    filters: Mapping[str, Any] | None,
    sort_keys: Sequence[str],
    sort_dir: SortDir,
    limit: int | None,
    marker: str | None,
) -> list[Body]:
    lister = kind.lister(_rows(store))
    rows = _visible(
        lister, project, _filters(namespace, filters), sort_keys, sort_dir, limit, marker
    )
    return [kind.body(r) for r in rows]


def list_workflows(
    store: Store,
    project: str,
    *,
    namespace: str | None = None,
    filters: Mapping[str, Any] | None = None,
    sort_keys: Sequence[str] = ("created_at",),
    sort_dir: SortDir = "asc",
    limit: int | None = None,
    marker: str | None = None,
) -> list[Body]:
    """The project's workflows and the public ones, paged as Mistral pages
    (``marker`` is the id of the previous page's last one)."""
    return _list(_WORKFLOWS, store, project, namespace, filters, sort_keys, sort_dir, limit, marker)


# -- workbooks ---------------------------------------------------------------------------
def _workbook_items(
    text: str, spec: WorkbookSpec, scope: str
) -> tuple[list[tuple[WorkflowSpec, Body]], list[tuple[ActionSpec, Body]]]:
    workflows = [
        (wf, _workflow_values(wf, cut_from_workbook(text, "workflows", wf.name), scope))
        for wf in spec.workflows
    ]
    actions = [
        (a, _action_values(a, cut_from_workbook(text, "actions", a.name), scope))
        for a in spec.actions
    ]
    return workflows, actions


def _store_workbook_items(
    rows: WorkflowStore,
    project: str,
    namespace: str,
    items: tuple[list[tuple[WorkflowSpec, Body]], list[tuple[ActionSpec, Body]]],
    undo: list[Callable[[], object]],
) -> None:
    """Create or update each ``<workbook>.<name>`` (``_on_workbook_update``)."""
    workflows, actions = items
    for a, values in actions:
        found = _own(rows.get_adhoc_action(project, a.qualified_name, namespace), project)
        if found is not None:
            rows.update_adhoc_action(found.id, values)
            continue
        record = ActionDefinitionRecord(
            id=_new_id(), project=project, name=a.qualified_name, namespace=namespace, **values
        )
        rows.create_adhoc_action(record)
        undo.append(partial(rows.delete_adhoc_action, record.id))
    for wf, values in workflows:
        found = _own(rows.get_workflow(project, wf.qualified_name, namespace), project)
        if found is not None:
            rows.update_workflow(found.id, values)
            continue
        workflow = WorkflowDefinitionRecord(
            id=_new_id(), project=project, name=wf.qualified_name, namespace=namespace, **values
        )
        rows.create_workflow(workflow)
        undo.append(partial(rows.delete_workflow, workflow.id))


def create_workbook(
    store: Store,
    project: str,
    text: str,
    *,
    source: str = "<workbook>",
    namespace: str = "",
    scope: Scope = "private",
) -> Uploaded:
    """The workbook (its whole text), and its workflows and ad-hoc actions
    as ``<workbook>.<name>``, created or updated."""
    spec, diags = parse_workbook(text, source)
    warnings = _valid(spec, diags)
    assert spec is not None
    rows = _rows(store)
    items = _workbook_items(text, spec, scope)
    record = WorkbookRecord(
        id=_new_id(),
        project=project,
        name=spec.name,
        namespace=namespace,
        scope=scope,
        definition=text,
        tags=list(spec.tags),
    )
    rows.create_workbook(record)
    undo: list[Callable[[], object]] = [partial(rows.delete_workbook, record.id)]
    try:
        _store_workbook_items(rows, project, namespace, items, undo)
    except Exception:
        _undo(reversed(undo))
        raise
    return Uploaded([get_workbook(store, project, record.id, namespace)], warnings)


def update_workbook(
    store: Store,
    project: str,
    text: str,
    *,
    source: str = "<workbook>",
    namespace: str = "",
    scope: Scope = "private",
) -> Uploaded:
    """The workbook of the document's name: its text, tags and scope; its
    workflows and actions created or updated (those it no longer names
    stay, as in Mistral)."""
    spec, diags = parse_workbook(text, source)
    warnings = _valid(spec, diags)
    assert spec is not None
    rows = _rows(store)
    found = rows.get_workbook(project, spec.name, namespace)
    if found is None:
        raise workbook_not_found(spec.name)
    _check_access("workbook", found, project)
    items = _workbook_items(text, spec, scope)
    updated = rows.update_workbook(
        found.id, {"definition": text, "tags": list(spec.tags), "scope": scope}
    )
    if updated is None:
        raise workbook_not_found(spec.name)
    _store_workbook_items(rows, project, namespace, items, [])
    return Uploaded([workbook_body(updated)], warnings)


def get_workbook_record(
    store: Store, project: str, name: str, namespace: str = ""
) -> WorkbookRecord:
    return _record(_WORKBOOKS, store, project, name, namespace)


def get_workbook(store: Store, project: str, name: str, namespace: str = "") -> Body:
    return workbook_body(get_workbook_record(store, project, name, namespace))


def delete_workbook(store: Store, project: str, name: str, namespace: str = "") -> None:
    """The workbook's row (its workflows and actions stay, as in Mistral's
    ``delete_workbook``)."""
    _delete(_WORKBOOKS, store, project, name, namespace)


def list_workbooks(
    store: Store,
    project: str,
    *,
    namespace: str | None = None,
    filters: Mapping[str, Any] | None = None,
    sort_keys: Sequence[str] = ("created_at",),
    sort_dir: SortDir = "asc",
    limit: int | None = None,
    marker: str | None = None,
) -> list[Body]:
    return _list(_WORKBOOKS, store, project, namespace, filters, sort_keys, sort_dir, limit, marker)


# -- ad-hoc actions ----------------------------------------------------------------------
def _action_values(spec: ActionSpec, definition: str, scope: str) -> Body:
    return {
        "definition": definition,
        "input": input_text(spec.input),
        "description": spec.description or "",
        "tags": list(spec.tags),
        "scope": scope,
    }


def _system(registry: ActionRegistry | None) -> ActionRegistry:
    if registry is not None:
        return registry
    from convection.workflows.actions import default_registry

    return default_registry()


def create_actions(
    store: Store,
    project: str,
    text: str,
    *,
    source: str = "<actions>",
    namespace: str = "",
    scope: Scope = "private",
    registry: ActionRegistry | None = None,
) -> Uploaded:
    """Every ad-hoc action of a document, each keeping the whole document
    as its definition (Mistral's ``create_actions``)."""
    specs, diags = parse_actions(text, source)
    warnings = _valid(specs, diags)
    rows = _rows(store)
    system = set(_system(registry).names())
    for spec in specs:
        taken = spec.name in system
        if taken or _own(rows.get_adhoc_action(project, spec.name, namespace), project):
            raise DefinitionExists("action", spec.name, namespace, project)
    made: list[str] = []
    try:
        for spec in specs:
            record = ActionDefinitionRecord(
                id=_new_id(),
                project=project,
                name=spec.name,
                namespace=namespace,
                **_action_values(spec, text, scope),
            )
            rows.create_adhoc_action(record)
            made.append(record.id)
    except Exception:
        _undo(partial(rows.delete_adhoc_action, i) for i in made)
        raise
    return Uploaded(
        [get_action(store, project, i, namespace, registry=registry) for i in made], warnings
    )


def update_actions(
    store: Store,
    project: str,
    text: str,
    *,
    source: str = "<actions>",
    namespace: str = "",
    scope: Scope = "private",
    registry: ActionRegistry | None = None,
) -> Uploaded:
    """Each action of the document replaces the stored one of its name;
    a system action cannot be changed."""
    specs, diags = parse_actions(text, source)
    warnings = _valid(specs, diags)
    rows = _rows(store)
    system = set(_system(registry).names())
    targets = []
    for spec in specs:
        if spec.name in system:
            raise NotAllowed(f"Attempt to modify a system action: {spec.name}")
        found = rows.get_adhoc_action(project, spec.name, namespace)
        if found is None:
            raise action_not_found(spec.name)
        _check_access("action", found, project)
        targets.append(found)
    out = []
    for spec, found in zip(specs, targets, strict=True):
        updated = rows.update_adhoc_action(found.id, _action_values(spec, text, scope))
        if updated is None:
            raise action_not_found(spec.name)
        out.append(action_body(updated))
    return Uploaded(out, warnings)


def get_action(
    store: Store,
    project: str,
    identifier: str,
    namespace: str = "",
    *,
    registry: ActionRegistry | None = None,
) -> Body:
    """A system action by name, else an ad-hoc one by id or name."""
    system = _system(registry)
    if identifier in set(system.names()):
        return system_action_body(system.lookup(identifier))
    found = _rows(store).get_adhoc_action(project, identifier, namespace)
    if found is None:
        raise action_not_found(identifier, system.names())
    return action_body(found)


def delete_action(
    store: Store,
    project: str,
    identifier: str,
    namespace: str = "",
    *,
    registry: ActionRegistry | None = None,
) -> None:
    if identifier in set(_system(registry).names()):
        raise NotAllowed(f"Attempt to delete a system action: {identifier}")
    _delete(_ACTIONS, store, project, identifier, namespace)


def list_actions(
    store: Store,
    project: str,
    *,
    namespace: str | None = None,
    is_system: bool | None = None,
    registry: ActionRegistry | None = None,
) -> list[Body]:
    """System actions (the registry's) and the project's and public ad-hoc
    ones, by name (Mistral's default sort for actions)."""
    out: list[Body] = []
    if is_system is not False and namespace in (None, ""):
        system = _system(registry)
        out += [system_action_body(system.lookup(n)) for n in system.names()]
    if is_system is not True:
        out += _list(_ACTIONS, store, project, namespace, None, ("name",), "asc", None, None)
    return sorted(out, key=lambda b: (b["name"], b["namespace"]))
