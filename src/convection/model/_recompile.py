"""Compiling a stack's template again, reusing its previous compile.

An update usually changes a few resources of a large template, and
compiling all 10,000 again cost most of the update. What a resource's
definition (and its diagnostics) depends on is known: its own snippet, the
template's other sections (version, parameters, conditions, outputs), the
environment, the files, the parameter values, the stack's identity, and the
names, types and conditions of the resources it names. When all of that is
equal to the previous compile's but for a few snippets, whose changes leave
their type and condition alone, the other resources' definitions are the
previous ones, object for object (which also lets the plan reuse their
digests). Only the changed snippets are compiled, in a template holding
them and a stand-in (type and condition only) for each resource they might
name, which is every other resource name spelled anywhere in them.

Anything else falls back to a full compile: a changed section, type or
condition, too many changes, any diagnostic (or warning) that is not about
a stand-in, a dependency the stand-ins do not cover. So the result always
equals what a full compile gives; ``tests/model/test_recompile.py`` checks that
on random edits.

Only stacks are remembered (an identity with a real stack id), a few at a
time, so template validation and previews never see this cache.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from convection.common import Diagnostic, Limits
from convection.hot import Document, Environment, Template, functions, parse_template
from convection.model._values import PropertyValues
from convection.model.definition import StackDefinition, TypeCatalog, build_definition
from convection.model.template_types import TemplateAwareCatalog

#: Snippet keys whose change affects only the resource itself (HOT and CFN
#: spellings). A change to any other key (type, condition) compiles it all.
_OWN_KEYS = frozenset(
    {
        "properties",
        "metadata",
        "depends_on",
        "update_policy",
        "deletion_policy",
        "description",
        "external_id",
        "Properties",
        "Metadata",
        "DependsOn",
        "UpdatePolicy",
        "DeletionPolicy",
        "Description",
    }
)
#: What a stand-in keeps of the resource it stands for.
_STAND_IN_KEYS = ("type", "condition", "Type", "Condition")
#: Up to one resource in this many may change; beyond, a full compile is
#: about as fast and simpler to trust.
_AT_MOST_ONE_IN = 4
_REMEMBERED = 4


@dataclasses.dataclass(frozen=True, slots=True)
class Sources:
    """The parts of a stack's inputs a compile reads (``StackInputs``)."""

    template: Document
    environments: tuple[Document, ...]
    files: Mapping[str, str]
    parameters: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class Previous:
    """One remembered compile: what it read and what it built."""

    sources: Sources
    template: Template
    environment: Environment
    definition: StackDefinition
    #: The compile's result object, returned again for identical inputs.
    result: Any


_lock = threading.Lock()
_cache: OrderedDict[Hashable, Previous] = OrderedDict()


def recall(key: Hashable) -> Previous | None:
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
        return found


def remember(key: Hashable, previous: Previous) -> None:
    with _lock:
        _cache[key] = previous
        _cache.move_to_end(key)
        while len(_cache) > _REMEMBERED:
            _cache.popitem(last=False)


def changed_resources(new: Sources, old: Sources) -> list[str] | None:
    """The names whose snippets differ, in template order; None when
    anything else differs (or too much does) for a reuse to be exact."""
    if (
        new.template.name != old.template.name
        or new.template.warnings
        or old.template.warnings
        or new.files != old.files
        or new.parameters != old.parameters
        or not _same_documents(new.environments, old.environments)
    ):
        return None
    data, before = new.template.data, old.template.data
    if list(data) != list(before) or any(data[k] != before[k] for k in data if k != "resources"):
        return None
    resources, old_resources = data.get("resources"), before.get("resources")
    if not isinstance(resources, dict) or not isinstance(old_resources, dict):
        return None
    if list(resources) != list(old_resources):
        return None
    changed = [n for n, s in resources.items() if s != old_resources[n]]
    if len(changed) * _AT_MOST_ONE_IN > len(resources):
        return None
    for name in changed:
        snippet, was = resources[name], old_resources[name]
        if not isinstance(snippet, dict) or not isinstance(was, dict):
            return None
        keys = snippet.keys() | was.keys()
        if any(snippet.get(k) != was.get(k) for k in keys - _OWN_KEYS):
            return None
    return changed


def _same_documents(new: tuple[Document, ...], old: tuple[Document, ...]) -> bool:
    return len(new) == len(old) and all(
        a.name == b.name and a.data == b.data and a.warnings == b.warnings
        for a, b in zip(new, old, strict=True)
    )


def recompile(
    sources: Sources,
    previous: Previous,
    changed: list[str],
    *,
    catalog: TypeCatalog | None,
    strict: bool,
    limits: Limits,
    values: bool = False,
) -> tuple[Template, StackDefinition] | None:
    """The new template and definition, or None to compile in full.
    With ``values``, the changed resources' property values are checked
    (a stand-in has none), with the unchanged parameter values."""
    data = sources.template.data
    resources: dict[str, Any] = data["resources"]
    stand_ins = _named(resources, changed) - set(changed)
    mini: dict[str, Any] = {k: v for k, v in data.items() if k not in ("resources", "outputs")}
    # Outputs go too: they only read resources, which are all unchanged by
    # name, type and condition, so the previous output definitions stand.
    mini["resources"] = {
        name: (resources[name] if name in changed else _stand_in(resources[name]))
        for name in resources
        if name in stand_ins or name in changed
    }
    doc = Document(sources.template.name, mini, sources.template.source)
    template, diags = parse_template(doc, files=sources.files)
    if template is None:
        return None
    nested = (
        None
        if catalog is None
        else TemplateAwareCatalog(catalog, sources.files, strict=strict, limits=limits)
    )
    old = previous.definition
    checker = PropertyValues(old.parameters, template.files, limits) if values else None
    definition, found = build_definition(
        template, previous.environment, old.parameters, catalog=nested, values=checker
    )
    diags.extend(found)
    if any(not _about(d, stand_ins) for d in diags):
        return None  # a full compile reports it, in its place
    for name in changed:
        now = definition.resources.get(name)
        if (now is None) != (name not in old.resources) or (
            now is not None and not _covered(now, resources, mini["resources"])
        ):
            return None
    return _splice(sources, previous, changed, template, definition)


def _named(resources: Mapping[str, Any], changed: list[str]) -> set[str]:
    """Every resource name spelled anywhere in the changed snippets."""
    found: set[str] = set()
    for name in changed:
        found.update(s for s in _strings(resources[name]) if s in resources)
    return found


def _strings(tree: Any) -> Iterator[str]:
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _stand_in(snippet: Any) -> Any:
    if not isinstance(snippet, dict):
        return snippet
    return {k: snippet[k] for k in _STAND_IN_KEYS if k in snippet}


def _about(d: Diagnostic, stand_ins: set[str]) -> bool:
    """Is ``d`` about a stand-in (and so not about the real template)?"""
    return len(d.path) >= 2 and d.path[0] == "resources" and d.path[1] in stand_ins


def _covered(definition: Any, resources: Mapping[str, Any], mini: Mapping[str, Any]) -> bool:
    """Every resource the changed one needs was in the small template, so
    its ``requires`` is what the full template gives."""
    named = set(functions.dependencies(definition.properties))
    named.update(functions.dependencies(definition.metadata))
    named.update(definition.depends_on)
    return all(n in mini or n not in resources for n in named)


def _splice(
    sources: Sources,
    previous: Previous,
    changed: list[str],
    template: Template,
    definition: StackDefinition,
) -> tuple[Template, StackDefinition]:
    swap = set(changed)
    snippets = {
        name: template.resources[name] if name in swap else s
        for name, s in previous.template.resources.items()
    }
    new_template = dataclasses.replace(
        previous.template,
        resources=snippets,
        source=sources.template.source,
        raw=sources.template.data,
    )
    resources = {
        name: definition.resources[name] if name in swap else r
        for name, r in previous.definition.resources.items()
    }
    new_definition = dataclasses.replace(
        previous.definition, template=new_template, resources=resources
    )
    return new_template, new_definition
