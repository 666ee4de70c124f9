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
    is ``stored`` and whose parameter values are ``parameters``.

    * template: the given one, else the stored one;
    * files: the stored map, updated with the given one;
    * parameters: the stored values without ``clear``, then the given ones
      (environment files still override both, as in every update);
    * environment: the stored one, with the new files loaded onto it. The new
      files merge among themselves as any environment files do; their
      ``resource_registry`` is then loaded onto the stored one per entry, as
      Heat's ``ResourceRegistry.load`` does (a null removes an entry), so a
      patch that sets one resource's hooks keeps every other setting.
    """
    patch = _as_patch(given)
    template = patch.template or document(stored.template, "<existing template>")
    base = {k: v for k, v in stored.environment.items() if k != "parameters"}
    new_registry = merged_registry(patch.environments)
    if new_registry:
        old = base.get(REGISTRY)
        base[REGISTRY] = load_registry(old if isinstance(old, dict) else {}, new_registry)
    envs = (
        document(base, "<existing environment>"),
        *(_without_registry(d) for d in patch.environments),
    )
    values = {k: v for k, v in parameters.items() if k not in set(clear)}
    values.update(patch.parameters)
    return StackInputs(template, envs, {**stored.files, **patch.files}, values)


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
