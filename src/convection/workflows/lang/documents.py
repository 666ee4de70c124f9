"""The three kinds of document a user uploads, as Mistral reads them
(mistral/lang/parser.py, mistral/lang/base.py ``BaseListSpec``,
mistral/lang/v2/workbook.py):

* a workflow document: ``version`` and one or more workflows;
* a workbook: ``version``, ``name``, ``description``, ``tags``,
  ``workflows`` and ``actions``, and nothing else;
* an ad-hoc action document: ``version`` and one or more actions.

Each entry point returns the specs and every diagnostic: located errors
(``file:line:column`` and the document path), never a traceback. When
there is any error the specs are empty, as Mistral stores nothing of a
document it refuses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, TypeVar

from convection.common import (
    DEFAULT_LIMITS,
    Diagnostic,
    Diagnostics,
    InvalidInput,
    LimitExceeded,
    Limits,
    Path,
)
from convection.hot import Document, load
from convection.workflows.lang._check import Checker, nonempty_string, show, unique_strings
from convection.workflows.lang.actions import check_chains, parse_action
from convection.workflows.lang.limits import (
    MAX_ACTIONS_PER_DOCUMENT,
    MAX_NAME_LENGTH,
    MAX_WORKFLOWS_PER_DOCUMENT,
)
from convection.workflows.lang.specs import ActionSpec, WorkbookSpec, WorkflowSpec
from convection.workflows.lang.workflows import parse_workflow

WORKBOOK_KEYS: Final = ("version", "name", "description", "tags", "workflows", "actions")

#: A workbook's workflow and action names (``NON_VERSION_WORD_REGEX``).
_WORKBOOK_ITEM: Final = re.compile(r"^[\w-]+$")

_Spec = TypeVar("_Spec", WorkflowSpec, ActionSpec)


def parse_workflows(
    text: str | bytes, name: str = "<workflow>", *, limits: Limits = DEFAULT_LIMITS
) -> tuple[list[WorkflowSpec], Diagnostics]:
    """A workflow document: ``version: '2.0'`` and the workflows by name."""
    doc, diags = _load(text, name, limits)
    if doc is None:
        return [], diags
    ck = Checker(doc.source, diags)
    items = _list_items(ck, doc, "workflow", MAX_WORKFLOWS_PER_DOCUMENT)
    specs = [parse_workflow(ck, key, body, (key,)) for key, body in items]
    return _if_clean([s for s in specs if s is not None], diags)


def parse_actions(
    text: str | bytes, name: str = "<actions>", *, limits: Limits = DEFAULT_LIMITS
) -> tuple[list[ActionSpec], Diagnostics]:
    """An ad-hoc action document: ``version: '2.0'`` and the actions by name."""
    doc, diags = _load(text, name, limits)
    if doc is None:
        return [], diags
    ck = Checker(doc.source, diags)
    items = _list_items(ck, doc, "action", MAX_ACTIONS_PER_DOCUMENT)
    specs = [s for s in (parse_action(ck, k, v, (k,)) for k, v in items) if s is not None]
    check_chains(ck, specs)
    return _if_clean(specs, diags)


def parse_workbook(
    text: str | bytes, name: str = "<workbook>", *, limits: Limits = DEFAULT_LIMITS
) -> tuple[WorkbookSpec | None, Diagnostics]:
    """A workbook; its workflows and actions carry its name
    (``qualified_name`` is ``<workbook>.<name>``)."""
    doc, diags = _load(text, name, limits)
    if doc is None:
        return None, diags
    ck = Checker(doc.source, diags)
    data = doc.data
    _version(ck, data, required=True)
    ck.unknown_keys(data, WORKBOOK_KEYS, (), "a workbook")
    wb_name = _workbook_name(ck, data)
    description = data.get("description")
    if description is not None and not nonempty_string(ck, description, ("description",)):
        description = None
    tags = data.get("tags")
    if tags is not None and not unique_strings(ck, tags, ("tags",)):
        tags = None
    workflows = _section(ck, data, "workflows", wb_name, parse_workflow)
    actions = _section(ck, data, "actions", wb_name, parse_action)
    check_chains(ck, actions)
    if diags.has_errors or wb_name is None:
        return None, diags
    spec = WorkbookSpec(wb_name, description, tuple(tags or ()), tuple(workflows), tuple(actions))
    return spec, diags


def _load(text: str | bytes, name: str, limits: Limits) -> tuple[Document | None, Diagnostics]:
    """The loader's errors in Mistral's words (``parse_yaml``)."""
    diags = Diagnostics()
    try:
        doc = load(text, name, limits=limits)
    except InvalidInput as exc:
        limit = isinstance(exc, LimitExceeded)
        diags.extend(_mistral_words(d, name, limit) for d in exc.diagnostics)
        return None, diags
    diags.extend(doc.warnings)
    return doc, diags


def _mistral_words(diag: Diagnostic, name: str, limit: bool) -> Diagnostic:
    """Mistral says ``Definition could not be parsed: ...`` of any document
    its YAML loader refuses; a limit's message stays as it is."""
    heat = f"Error parsing template {name} "
    message = diag.message.removeprefix(heat)
    if message.startswith("The template is not a JSON object or YAML mapping"):
        message = "the document is not a mapping (expected 'version' and named entries)"
    if not limit:
        message = "Definition could not be parsed: " + message
    return Diagnostic(message, diag.path, diag.mark, diag.severity, diag.upstream)


def _version(ck: Checker, data: dict[str, Any], *, required: bool, path: Path = ()) -> None:
    """``version`` must read as the number 2.0 (Mistral's ``_get_spec_version``:
    ``'2.0'``, ``2.0`` and ``2`` pass); documents that list workflows or
    actions must also give it (``BaseListSpec`` requires it)."""
    if "version" not in data:
        if required:
            ck.error("'version' is a required property: expected version: '2.0'", path)
        return
    value = data["version"]
    try:
        number = float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        number = None
    if number != 2.0 or value == "":
        ck.error(f"Unsupported DSL version: {value}", (*path, "version"))


def _list_items(ck: Checker, doc: Document, kind: str, limit: int) -> list[tuple[str, Any]]:
    data = doc.data
    _version(ck, data, required=True)
    items = [(k, v) for k, v in data.items() if k != "version"]
    if not items:
        ck.error(f"At least one item must be in the list: the document defines no {kind}", ())
    if len(items) > limit:
        ck.error(f"the document defines {len(items)} {kind}s, more than the limit of {limit}", ())
        return []
    return items


def _workbook_name(ck: Checker, data: dict[str, Any]) -> str | None:
    if "name" not in data:
        ck.error("'name' is a required property: a workbook needs a name", ())
        return None
    value = data["name"]
    if not nonempty_string(ck, value, ("name",)):
        return None
    if len(value) > MAX_NAME_LENGTH:
        ck.error(f"a workbook name must not exceed {MAX_NAME_LENGTH} characters", ("name",))
        return None
    found: str = value
    return found


def _section(
    ck: Checker,
    data: dict[str, Any],
    key: str,
    workbook: str | None,
    parse: Callable[..., _Spec | None],
) -> list[_Spec]:
    """``workflows`` or ``actions`` of a workbook: names are words (with
    ``-``); a ``version`` entry may repeat the document's."""
    if key not in data:
        return []
    section = data[key]
    if not isinstance(section, dict) or not section:
        ck.error(f"{show(section)} is not a non-empty mapping of names to {key}", (key,))
        return []
    limit = MAX_WORKFLOWS_PER_DOCUMENT if key == "workflows" else MAX_ACTIONS_PER_DOCUMENT
    if len(section) > limit:
        ck.error(
            f"the workbook defines {len(section)} {key}, more than the limit of {limit}", (key,)
        )
        return []
    out: list[_Spec] = []
    for name, body in section.items():
        if name == "version":
            _version(ck, {"version": body}, required=False, path=(key,))
            continue
        if not _WORKBOOK_ITEM.match(name):
            ck.error(
                f"Additional properties are not allowed ({name!r} was unexpected): a "
                f"workbook's {key} are named with letters, digits, '_' and '-'",
                (key, name),
            )
            continue
        spec = parse(ck, name, body, (key, name), workbook)
        if spec is not None:
            out.append(spec)
    return out


def _if_clean(specs: list[_Spec], diags: Diagnostics) -> tuple[list[_Spec], Diagnostics]:
    return ([] if diags.has_errors else specs), diags
