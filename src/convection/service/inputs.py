"""What the stack service adds to an update's inputs before compiling them.

* :class:`StackPatch` and :func:`patch_inputs`: Heat's PATCH update
  (``existing``), where every part is optional and the stack's stored
  template, files, environment and parameters are reused, the given ones
  merged over them, as Heat's ``update_stack`` does with ``existing``;
* :func:`hooks_environment`: heatclient's ``--pre-create`` and
  ``--pre-update`` flags, written into an environment as its
  ``hooks_to_env`` writes them.

Pure functions of values: the service reads the stored records.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from convection.common import JSON
from convection.hot import Document, SourceMap
from convection.model import StackInputs
from convection.store import TemplateRecord

REGISTRY = "resource_registry"
PARAMETERS = "parameters"
PARAMETER_DEFAULTS = "parameter_defaults"
EVENT_SINKS = "event_sinks"
#: Stored sections a PATCH does not take whole: parameters (the stack's
#: values, reapplied below) and merge strategies (Heat never stores them).
_SECTIONS = frozenset({PARAMETERS, "parameter_merge_strategies"})
#: Registry keys whose value is taken whole, never merged into.
_WHOLE = frozenset({"hooks", "restricted_actions"})


@dataclass(frozen=True, slots=True)
class StackPatch:
    """A PATCH update's inputs: anything not given is the stored one.

    ``environments`` are new environment files, in order, and ``files`` what
    they (or the template) reference; ``parameters`` patch the stored values.
    """

    template: Document | None = None
    environments: tuple[Document, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)


def document(data: Mapping[str, JSON], name: str) -> Document:
    """A document made by the service rather than read from a file."""
    return Document(name, dict(data), SourceMap(name))


def patch_inputs(
    stored: TemplateRecord,
    parameters: Mapping[str, Any],
    given: StackInputs | StackPatch | None,
    clear: Collection[str] = (),
) -> StackInputs:
    """The inputs of a PATCH update of a stack whose stored template record
    is ``stored`` and whose parameter values are ``parameters``, as Heat's
    ``_prepare_stack_updates`` (heat/engine/service.py) makes them:

    * template: the given one, else the stored one;
    * files: the stored map, updated with the given one;
    * parameters and ``parameter_defaults``: the request's, with the new
      environment files merged over them by their merge strategies
      (``merge_environments``) as in any update; what that leaves set
      *replaces* the stored value, never merges onto it, and only the stored
      values nothing set are kept (``parameters`` without ``clear``). A key
      the template does not declare is dropped, as Heat pops it;
    * environment: the stored one, with the new files loaded onto it; their
      ``resource_registry`` is loaded onto the stored one per entry, as
      Heat's ``ResourceRegistry.load`` does (a null removes an entry), so a
      patch that sets one resource's hooks keeps every other setting.

    The stored environment is given *after* the new files, holding only what
    they leave alone, so the files' merge starts from the request's values,
    as Heat's does.
    """
    patch = _as_patch(given)
    template = patch.template or document(stored.template, "<existing template>")
    declared = _declared(template)
    sent = _declared_only(patch.parameters, declared)
    envs = tuple(_without_registry(_undeclared_dropped(d, declared)) for d in patch.environments)
    base = _left_alone(stored, parameters, patch, envs, set(clear) | _merged_keys(sent, envs))
    base[PARAMETERS] = _declared_only(base[PARAMETERS], declared)
    # Heat loads the new event sinks after the stored ones: those lead.
    sinks = base.pop(EVENT_SINKS, None)
    first = (document({EVENT_SINKS: sinks}, "<existing event sinks>"),) if sinks else ()
    existing = document(base, "<existing environment>")
    files = {**stored.files, **patch.files}
    return StackInputs(template, (*first, *envs, existing), files, sent)


def _left_alone(
    stored: TemplateRecord,
    parameters: Mapping[str, Any],
    patch: StackPatch,
    envs: Sequence[Document],
    replaced: Collection[str],
) -> dict[str, JSON]:
    """The stored environment as a PATCH leaves it: its registry with the
    new files' loaded onto it, and only the parameters and
    ``parameter_defaults`` the request and the new files do not set (Heat's
    ``Environment.load`` then replaces the others whole)."""
    base = {k: v for k, v in stored.environment.items() if k not in _SECTIONS}
    new_registry = merged_registry(patch.environments)
    if new_registry:
        old = base.get(REGISTRY)
        base[REGISTRY] = load_registry(old if isinstance(old, dict) else {}, new_registry)
    base[PARAMETERS] = _without(parameters, replaced)
    defaults = stored.environment.get(PARAMETER_DEFAULTS)
    if isinstance(defaults, dict):
        base[PARAMETER_DEFAULTS] = _without(defaults, _merged_keys({}, envs, PARAMETER_DEFAULTS))
    return base


def _merged_keys(
    start: Mapping[str, Any], envs: Sequence[Document], section: str = PARAMETERS
) -> set[str]:
    """The keys ``merge_environments`` (heat/common/environment_util.py)
    leaves in ``section``, starting from ``start``: a file's section is
    taken whole while nothing is there yet, later ones add their keys that
    are not null."""
    keys = set(start)
    for doc in envs:
        raw = doc.data.get(section)
        if not isinstance(raw, dict) or not raw:
            continue
        keys |= set(raw) if not keys else {k for k, v in raw.items() if v is not None}
    return keys


def _without(values: Mapping[str, Any], keys: Collection[str]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if k not in keys}


def _declared(template: Document) -> frozenset[str] | None:
    """The parameter names the template declares (HOT's ``parameters``,
    CloudFormation's ``Parameters``); None when it has no readable section,
    which the compile reports."""
    section = "parameters" if "heat_template_version" in template.data else "Parameters"
    found = template.data.get(section, {})
    return frozenset(found) if isinstance(found, dict) else None


def _declared_only(values: Mapping[str, Any], declared: frozenset[str] | None) -> dict[str, Any]:
    """Heat's PATCH keeps only parameters the template declares: a stored or
    sent value for one the new template dropped is popped, not refused."""
    return dict(values) if declared is None else {k: v for k, v in values.items() if k in declared}


def _undeclared_dropped(doc: Document, declared: frozenset[str] | None) -> Document:
    raw = doc.data.get(PARAMETERS)
    if declared is None or not isinstance(raw, dict) or set(raw) <= declared:
        return doc
    data = {**doc.data, PARAMETERS: _declared_only(raw, declared)}
    return dataclasses.replace(doc, data=data)


def _as_patch(given: StackInputs | StackPatch | None) -> StackPatch:
    if given is None:
        return StackPatch()
    if isinstance(given, StackPatch):
        return given
    return StackPatch(given.template, given.environments, given.files, given.parameters)


def _without_registry(doc: Document) -> Document:
    if REGISTRY not in doc.data:
        return doc
    return dataclasses.replace(doc, data={k: v for k, v in doc.data.items() if k != REGISTRY})


def merged_registry(envs: Sequence[Document]) -> dict[str, JSON]:
    """The registry several files merge to on Heat's server: a shallow
    update of the top level, where a null counts only in the first file."""
    out: dict[str, JSON] = {}
    for doc in envs:
        raw = doc.data.get(REGISTRY)
        if not isinstance(raw, dict):
            continue
        fresh = not out
        out.update({k: v for k, v in raw.items() if fresh or v is not None})
    return out


def load_registry(base: Mapping[str, JSON], new: Mapping[str, JSON]) -> dict[str, JSON]:
    """Heat's ``ResourceRegistry.load`` of ``new`` onto ``base``: mappings
    merge key by key, a null removes the entry, anything else replaces it."""
    out = dict(base)
    for key, value in new.items():
        if value is None:
            out.pop(key, None)
            continue
        before = out.get(key)
        if isinstance(value, dict) and isinstance(before, dict) and key not in _WHOLE:
            out[key] = load_registry(before, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _deep_update(target: dict[str, JSON], new: Mapping[str, JSON]) -> None:
    """heatclient's ``deep_update``: how the client merges its env files."""
    for key, value in new.items():
        before = target.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            _deep_update(before, value)
        else:
            target[key] = copy.deepcopy(value)


def hooks_environment(envs: Sequence[Document], paths: Sequence[str], hook: str) -> Document:
    """An environment file, to be given after ``envs``, that sets ``hook``
    on each resource path (``nested/*/name``: slashes go into nested
    stacks, wildcards are allowed), as heatclient's ``hooks_to_env``.

    heatclient writes the hooks into the deep merge of all its environment
    files; this file carries that merge of ``resource_registry.resources``
    too, so that the server-side merge, where a later ``resources``
    replaces an earlier one, keeps every file's per-resource settings.
    """
    resources: dict[str, JSON] = {}
    for doc in envs:
        registry = doc.data.get(REGISTRY)
        found = registry.get("resources") if isinstance(registry, dict) else None
        if isinstance(found, dict):
            _deep_update(resources, found)
    for path in paths:
        level = resources
        for part in (p for p in path.split("/") if p):
            nxt = level.get(part)
            if not isinstance(nxt, dict):
                nxt = level[part] = {}
            level = nxt
        level["hooks"] = hook
    return document({REGISTRY: {"resources": resources}}, f"<--{hook} flags>")
