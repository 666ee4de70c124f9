"""Where actions are found by name: the built-ins, then the plugins that
installed packages declare in the ``convection.actions`` entry point group
(Mistral's ``mistral.actions``). One name, one class."""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Iterable, Iterator
from typing import Any, Final

from convection.common import ConvectionError, NotFound, suggest
from convection.workflows.actions.base import ActionPlugin

ENTRY_POINT_GROUP: Final = "convection.actions"


class DuplicateAction(ConvectionError):
    """Two classes claim one action name."""

    def __init__(self, name: str, existing: type[ActionPlugin], new: type[ActionPlugin]) -> None:
        self.action_name = name
        super().__init__(
            f"action {name} is already registered by {existing.class_name()}; "
            f"{new.class_name()} cannot register it again"
        )


class UnknownAction(NotFound):
    """Mistral's ``Failed to find action [action_name=...]``, with a near miss."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        super().__init__("Action", name)
        self.args = (f"Failed to find action [action_name={name}]{suggest(name, known)}",)


class ActionLoadError(ConvectionError):
    """Entry points that did not load, all of them in one message."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("action plugins failed to load: " + "; ".join(problems))


class ActionRegistry:
    """Action classes by name."""

    def __init__(self, plugins: Iterable[type[ActionPlugin]] = ()) -> None:
        self._by_name: dict[str, type[ActionPlugin]] = {}
        for cls in plugins:
            self.register(cls)

    def register(self, cls: type[ActionPlugin]) -> None:
        """Add ``cls`` under its name; the same class again is a no-op (a
        built-in also declared as an entry point)."""
        if not (isinstance(cls, type) and issubclass(cls, ActionPlugin)):
            raise TypeError(f"{cls!r} is not an ActionPlugin subclass")
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{cls.class_name()} has no action name")
        existing = self._by_name.get(name)
        if existing is not None and existing is not cls:
            raise DuplicateAction(name, existing, cls)
        self._by_name[name] = cls

    def get(self, name: str) -> type[ActionPlugin] | None:
        return self._by_name.get(name)

    def lookup(self, name: str) -> type[ActionPlugin]:
        """The class of ``name``, or :class:`UnknownAction` with a did-you-mean."""
        cls = self._by_name.get(name)
        if cls is None:
            raise UnknownAction(name, self._by_name)
        return cls

    def names(self) -> list[str]:
        """Every action name, sorted (for ``action list``)."""
        return sorted(self._by_name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[type[ActionPlugin]]:
        return iter(self._by_name[n] for n in self.names())

    def __len__(self) -> int:
        return len(self._by_name)

    def load_entry_points(self, entry_points: Iterable[importlib.metadata.EntryPoint]) -> None:
        """Register what each entry point names (a class, or an iterable of
        classes). Every one is tried, so one error lists every broken plugin."""
        problems: list[str] = []
        for ep in entry_points:
            try:
                for cls in _classes(ep.load()):
                    self.register(cls)
            except Exception as exc:  # someone else's import error, or a bad class
                problems.append(f"{ep.name} ({ep.value}): {type(exc).__name__}: {exc}")
        if problems:
            raise ActionLoadError(problems)


def _classes(loaded: Any) -> list[type[ActionPlugin]]:
    if isinstance(loaded, type):
        return [loaded]
    if isinstance(loaded, Iterable):
        return list(loaded)
    raise TypeError(f"{loaded!r} is neither an action class nor a list of them")


def builtin_actions() -> tuple[type[ActionPlugin], ...]:
    """Mistral's ``std.*`` and Convection's own actions."""
    from convection.workflows.actions import convection_actions, http, mail, software, ssh, std

    return (
        *std.ACTIONS,
        *http.ACTIONS,
        *mail.ACTIONS,
        *ssh.ACTIONS,
        *convection_actions.ACTIONS,
        *software.ACTIONS,
    )


def installed_entry_points() -> list[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


@functools.cache
def default_registry() -> ActionRegistry:
    """The built-ins plus every installed plugin, loaded once per process."""
    registry = ActionRegistry(builtin_actions())
    registry.load_entry_points(installed_entry_points())
    return registry
