"""The resource registry of an environment (Heat's ``ResourceRegistry``).

Private to :mod:`convection.hot.environment`, which re-exports the public
names; it lives apart only to keep each module small.

Lookups follow Heat's order (``heat/engine/environment.py``): a template-path
type, the per-resource entry, the exact entry, then wildcards, sorted by
(longer registry path first, then path text). Templates written for Heat
depend on that order: ``OS::*`` sorts before ``OS::Nova::Server`` and wins,
because ``*`` sorts before letters. Heat recurses forever on an alias loop;
here a loop is a located error.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Literal, TypeAlias

from convection.common import JSON, Diagnostic, Diagnostics, InvalidInput, Mark
from convection.hot.loader import SourceMap

RESOURCE_REGISTRY = "resource_registry"
HOOK_TYPES = ("pre-create", "pre-update", "pre-delete", "post-create", "post-update", "post-delete")
RESTRICTED_ACTIONS = ("update", "replace")
#: Heat decides "template resource" by suffix alone; ``.yml`` is *not* one.
TEMPLATE_SUFFIXES = (".yaml", ".template")

_FLAGS: dict[str, tuple[str, ...]] = {"hooks": HOOK_TYPES, "restricted_actions": RESTRICTED_ACTIONS}
_Level: TypeAlias = dict[str, Any]


def is_template_name(name: str) -> bool:
    """Whether Heat treats a type name or registry value as a template path."""
    return name.endswith(TEMPLATE_SUFFIXES)


def kind_of(value: JSON) -> str:
    """A value's JSON kind with its article, for messages."""
    for types, name in (
        (bool, "a boolean"),
        ((int, float), "a number"),
        (str, "a string"),
        (list, "a list"),
        (dict, "a mapping"),
    ):
        if isinstance(value, types):
            return name
    return "null"


@dataclass(frozen=True, slots=True)
class _Info:
    """One registry entry; ``path`` is its place in the registry tree."""

    path: tuple[str, ...]
    value: str
    kind: Literal["map", "glob", "template"]
    mark: Mark | None = field(default=None, compare=False)

    def matches(self, type_name: str) -> bool:
        # A many-to-one glob must not match its own target, or it would recurse.
        return type_name != self.value and type_name.startswith(self.path[-1][:-1])

    def target(self, type_name: str) -> str:
        if self.kind == "glob" and self.value.endswith("*"):
            return self.value[:-1] + type_name[len(self.path[-1]) - 1 :]
        return self.value


def _info(path: tuple[str, ...], value: str, mark: Mark | None) -> _Info:
    name = path[-1]
    if is_template_name(name):
        return _Info(path, name, "template", mark)  # the key itself names the template
    if is_template_name(value):
        return _Info(path, value, "template", mark)
    return _Info(path, value, "glob" if name.endswith("*") else "map", mark)


@dataclass(frozen=True, slots=True)
class RegistryEntry:
    """What a resource type resolves to after the user's registry."""

    #: The type as the template wrote it.
    requested: str
    #: What to build: a plugin type name, or a template path/URL when ``is_template``.
    type_name: str
    is_template: bool
    #: Type names followed, from ``requested`` to the last alias.
    chain: tuple[str, ...]
    #: Registry path of the template entry used; pass to ``for_nested(remove=)``.
    registry_path: tuple[str, ...] | None = None


class _Unresolved(Exception):
    """A candidate's chain ended at an unknown type; Heat then tries the next."""


class _RegistryBuilder:
    """Loads registry data in Heat's order (nulls remove what came before),
    reporting bad entries as located diagnostics instead of raising."""

    def __init__(self, origins: Mapping[str, SourceMap], diags: Diagnostics) -> None:
        self.origins = origins
        self.diags = diags
        self.tree: _Level = {"resources": {}}

    def mark(self, path: tuple[str, ...]) -> Mark | None:
        source = self.origins.get(path[0]) if path else None
        return source.mark((RESOURCE_REGISTRY, *path)) if source is not None else None

    def error(self, message: str, path: tuple[str, ...]) -> None:
        self.diags.error(message, (RESOURCE_REGISTRY, *path), self.mark(path))

    def level(self, path: tuple[str, ...]) -> _Level:
        level = self.tree
        for key in path:
            if not isinstance(level.get(key), dict):
                level[key] = {}
            level = level[key]
        return level

    def load(self, path: tuple[str, ...], data: Mapping[str, JSON]) -> None:
        level = self.level(path)
        for key, value in data.items():
            here = (*path, key)
            if value is None:
                _remove(level, key)
            elif key in _FLAGS:
                problem = _flag_problem(key, value)
                if problem:
                    self.error(problem, here)
                else:
                    level[key] = value
            elif isinstance(value, dict):
                if path or key == "resources":
                    self.load(here, value)
                else:
                    self.error(
                        f'resource_registry entry "{key}" is a mapping; only "resources" '
                        "holds per-resource settings",
                        here,
                    )
            elif path == ("resources",) or (not path and key == "resources"):
                self.error(
                    f'resource_registry "{key}" must be a mapping (hooks, restricted_actions, '
                    f"type overrides or nested resources), not {kind_of(value)}",
                    here,
                )
            elif isinstance(value, str):
                level[key] = _info(here, value, self.mark(here))
            else:
                self.error(
                    f'resource_registry entry "{key}" must be a resource type or a template '
                    f"path, not {kind_of(value)}",
                    here,
                )
        self.tree.setdefault("resources", {})


def _remove(level: _Level, key: str) -> None:
    """Heat's null: a glob removes matching type entries at this level only."""
    if not key.endswith("*"):
        level.pop(key, None)
        return
    for name in [n for n, v in level.items() if isinstance(v, _Info) and n.startswith(key[:-1])]:
        del level[name]


def _flag_problem(key: str, value: JSON) -> str | None:
    allowed = _FLAGS[key]
    if isinstance(value, str):
        ok = value in allowed
    else:
        ok = isinstance(value, list) and all(isinstance(v, str) and v in allowed for v in value)
    if ok:
        return None
    if key == "hooks":
        return (
            f'Invalid hook type "{value}" for resource breakpoint, '
            f"acceptable hook types are: {allowed}"
        )
    return (
        f'Invalid restricted_action type "{value}" for resource, '
        f"acceptable restricted_action types are: {allowed}"
    )


def _flags(entry: JSON) -> set[str]:
    if isinstance(entry, str):
        return {entry}
    return set(entry) if isinstance(entry, list) else set()


def _drill(level: _Level, name: str) -> _Level:
    """Heat's child registry for nested resource ``name``: every matching
    pattern's settings, then the exact entry's, which therefore win."""
    out: _Level = {}
    for pattern, entry in level.items():
        if isinstance(entry, dict) and fnmatchcase(name, pattern):
            out.update(entry)
    exact = level.get(name)
    if isinstance(exact, dict):
        out.update(exact)
    return out


def _as_names(path: str | Sequence[str] | None) -> tuple[str, ...]:
    if path is None:
        return ()
    return (path,) if isinstance(path, str) else tuple(path)


def _dump(level: _Level) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    for key, value in level.items():
        if isinstance(value, dict):
            out[key] = _dump(value)
        elif isinstance(value, _Info):
            out[key] = value.value
        else:
            out[key] = copy.deepcopy(value)
    return out


class ResourceRegistry:
    """The user's registry: aliases, template resources and per-resource settings.

    Immutable: derivations (``for_nested``, ``with_template_types``) return new
    registries, so one can be shared by every resource of a stack.
    """

    __slots__ = ("_globs", "_tree", "origins", "raw")

    def __init__(self, tree: _Level, raw: Mapping[str, JSON], origins: Mapping[str, SourceMap]):
        self._tree = tree
        #: The data as given; merging works on it, as Heat's merge does.
        self.raw = raw
        #: Top-level key -> the file it came from, for marks.
        self.origins = origins
        self._globs = [v for v in tree.values() if isinstance(v, _Info) and v.kind == "glob"]

    @classmethod
    def from_data(
        cls,
        data: Mapping[str, JSON],
        *,
        origins: Mapping[str, SourceMap] | None = None,
        diags: Diagnostics | None = None,
    ) -> ResourceRegistry:
        builder = _RegistryBuilder(origins or {}, diags if diags is not None else Diagnostics())
        builder.load((), data)
        return cls(builder.tree, data, dict(origins or {}))

    @classmethod
    def empty(cls) -> ResourceRegistry:
        return cls({"resources": {}}, {}, {})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ResourceRegistry) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ResourceRegistry({self.as_dict()!r})"

    def as_dict(self) -> dict[str, JSON]:
        """Heat's ``ResourceRegistry.as_dict``: ``resources`` is always present."""
        return _dump(self._tree)

    def resolve(
        self,
        type_name: str,
        resource_path: str | Sequence[str] | None = None,
        *,
        is_known: Callable[[str], bool] | None = None,
    ) -> RegistryEntry:
        """Follow aliases for a resource; per-resource entries take precedence.

        ``is_known`` says whether a plugin type exists. Heat skips a candidate
        whose chain ends at an unknown type and tries the next, then falls back
        to the plugin registry; without it every type counts as known. A
        returned non-template ``type_name`` must still be checked by the caller.
        Raises :class:`InvalidInput` on an alias loop (Heat recurses forever).
        """
        names = _as_names(resource_path)
        registry = self
        for name in names[:-1]:
            registry = registry.for_nested(name)
        resource_name = names[-1] if names else None
        try:
            return registry._follow(type_name, resource_name, is_known, (type_name,), ())
        except _Unresolved:
            return RegistryEntry(type_name, type_name, False, (type_name,))

    def _follow(
        self,
        type_name: str,
        resource_name: str | None,
        is_known: Callable[[str], bool] | None,
        chain: tuple[str, ...],
        used: tuple[tuple[str, ...], ...],
    ) -> RegistryEntry:
        for info in self._candidates(type_name, resource_name):
            if info.kind == "template":
                return RegistryEntry(chain[0], info.value, True, chain, info.path)
            target = info.target(type_name)
            if target in chain or info.path in used:
                where = "/".join(info.path)
                raise InvalidInput(
                    [
                        Diagnostic(
                            "resource_registry maps resource types in a loop: "
                            + " -> ".join((*chain, target))
                            + f" (at {where})",
                            (RESOURCE_REGISTRY, *info.path),
                            info.mark,
                        )
                    ]
                )
            try:
                return self._follow(
                    target, resource_name, is_known, (*chain, target), (*used, info.path)
                )
            except _Unresolved:
                continue
        if is_known is None or is_known(type_name):
            return RegistryEntry(chain[0], type_name, False, chain)
        raise _Unresolved

    def _candidates(self, type_name: str, resource_name: str | None) -> list[_Info]:
        found: dict[tuple[str, ...], _Info] = {}
        top = self._tree.get(type_name)
        if is_template_name(type_name):
            found[(type_name,)] = (
                top if isinstance(top, _Info) else _Info((type_name,), type_name, "template")
            )
        if resource_name is not None:
            own = self._tree["resources"].get(resource_name)
            if isinstance(own, dict) and isinstance(own.get(type_name), _Info):
                found[own[type_name].path] = own[type_name]
        if isinstance(top, _Info):
            found[top.path] = top
        for glob in self._globs:
            if glob.matches(type_name):
                found[glob.path] = glob
        return sorted(found.values(), key=lambda i: (-len(i.path), i.path))

    def _settings(self, resource_path: str | Sequence[str], key: str) -> frozenset[str]:
        names = _as_names(resource_path)
        if not names:
            return frozenset()
        level: _Level = self._tree["resources"]
        for name in names[:-1]:
            level = _drill(level, name)
        out: set[str] = set()
        for pattern, entry in level.items():
            if isinstance(entry, dict) and fnmatchcase(names[-1], pattern):
                out |= _flags(entry.get(key))
        return frozenset(out)

    def hooks_for(self, resource_path: str | Sequence[str]) -> frozenset[str]:
        """Hooks set for a resource, given as a name or a path through nested stacks."""
        return self._settings(resource_path, "hooks")

    def restricted_actions_for(self, resource_path: str | Sequence[str]) -> frozenset[str]:
        return self._settings(resource_path, "restricted_actions")

    def matches_hook(self, resource_path: str | Sequence[str], hook: str) -> bool:
        return hook in self.hooks_for(resource_path)

    def for_nested(
        self, resource_name: str, *, remove: RegistryEntry | None = None
    ) -> ResourceRegistry:
        """The registry a nested stack made by ``resource_name`` sees (Heat's
        ``get_child_environment``): the same type entries, minus the template
        entry that made the nested stack, and the settings under that name."""
        tree: _Level = dict(self._tree)
        resources: _Level = self._tree["resources"]
        path = remove.registry_path if remove is not None else None
        if path and len(path) == 1 and isinstance(tree.get(path[0]), _Info):
            del tree[path[0]]
        elif path:
            # A per-resource entry; in a nested registry it keeps its full path.
            owner = resources.get(path[-2])
            found = owner.get(path[-1]) if isinstance(owner, dict) else None
            if isinstance(found, _Info) and found.path == path:
                assert isinstance(owner, dict)
                resources = {
                    **resources,
                    path[-2]: {k: v for k, v in owner.items() if v is not found},
                }
        tree["resources"] = _drill(resources, resource_name)
        return ResourceRegistry(tree, _dump(tree), self.origins)

    def with_template_types(self, type_names: Iterable[str]) -> ResourceRegistry:
        """Heat registers each template-path type it looks up, so stored
        environments list them; call with the types a stack used."""
        tree: _Level = dict(self._tree)
        for name in type_names:
            if is_template_name(name) and name not in tree:
                tree[name] = _Info((name,), name, "template")
        return ResourceRegistry(tree, _dump(tree), self.origins)
