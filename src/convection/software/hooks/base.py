"""The hook seam, and the registry that picks a hook by config ``group``.

A hook is what heat-agents calls a hook script: given a derived config, it
runs it with one configuration tool and reports what happened. Here a hook
is an object with one async method and no state of its own; it acts on the
node only through a :class:`Transport`, so every hook works on every kind
of node.

The registry maps a config's ``group`` to a hook. Built-ins: ``script``,
``ansible``, and ``Heat::Ungrouped`` (Heat's default group) as ``script``.
Third-party hooks register under the ``convection.hooks`` entry point
group: the entry point's name is the config group, its object is a hook
class or factory called with no arguments. Entry points are loaded when
their group is first asked for, so one broken plugin breaks only its own
group; a built-in name cannot be taken over by a plugin.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol, runtime_checkable

from convection.software.derived import DerivedConfig
from convection.software.errors import HookNotFound, InvalidConfig
from convection.software.outcome import DeployResult
from convection.software.transports.base import FileBatch, Transport

ENTRY_POINT_GROUP: Final = "convection.hooks"
_SAFE_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


@runtime_checkable
class Hook(Protocol):
    """Runs one derived config on one node."""

    async def run(
        self, config: DerivedConfig, transport: Transport, *, timeout: float
    ) -> DeployResult:
        """Run ``config`` and return its outputs, output tails and status.

        A failed run is a result (non-zero status), not an exception; raise
        only when no result could be had (the node is unreachable).
        """
        ...


def safe_id(config: DerivedConfig) -> str:
    """The config id, checked to be a plain file name (it names files on the node)."""
    if not _SAFE_ID.match(config.id):
        raise InvalidConfig("must be letters, digits, '_', '.', '-' (max 128)", field="id")
    return config.id


def config_text(config: DerivedConfig) -> str:
    """The config as the text a tool reads: a string as is, structure as JSON."""
    if config.config is None:
        return ""
    return config.config if isinstance(config.config, str) else json.dumps(config.config)


def output_files(outputs_path: str, config: DerivedConfig) -> dict[str, str]:
    """Each declared output's file: ``OUTPUTS_PATH.NAME``."""
    return {output.name: f"{outputs_path}.{output.name}" for output in config.outputs}


async def read_outputs(
    transport: Transport, outputs_path: str, config: DerivedConfig
) -> dict[str, str]:
    """heat-agents' output collection: the text of ``OUTPUTS_PATH.NAME`` for
    each declared output whose file exists (read as is, newline included).
    All of them in one round trip, none when no output is declared."""
    files = output_files(outputs_path, config)
    if not files:
        return {}
    found = await transport.apply(FileBatch(read=tuple(files.values())))
    return {
        name: data.decode("utf-8", "replace")
        for name, path in files.items()
        if (data := found[path]) is not None
    }


async def clear_outputs(transport: Transport, outputs_path: str, config: DerivedConfig) -> None:
    """Remove output files an earlier, interrupted attempt may have left."""
    files = tuple(output_files(outputs_path, config).values())
    if files:
        await transport.apply(FileBatch(remove=files))


HookFactory = Callable[[], Hook]


class HookRegistry:
    """Hooks by config group: built-ins first, then entry points, lazily."""

    def __init__(
        self,
        hooks: Mapping[str, Hook] | None = None,
        entry_points: Iterable[importlib.metadata.EntryPoint] = (),
    ) -> None:
        self._hooks: dict[str, Hook] = dict(hooks or {})
        self._builtin = frozenset(self._hooks)
        self._missing: dict[str, str] = {}
        self._pending: dict[str, importlib.metadata.EntryPoint] = {}
        for ep in entry_points:
            if ep.name not in self._builtin:
                self._pending.setdefault(ep.name, ep)

    def register(self, group: str, hook: Hook) -> None:
        """Add (or replace) the hook for ``group``."""
        self._hooks[group] = hook
        self._pending.pop(group, None)

    def unavailable(self, group: str, detail: str) -> None:
        """Mark a known group whose tool is missing here, so asking for it says
        why *before* a deployment writes its marker."""
        self._hooks.pop(group, None)
        self._missing[group] = detail

    def groups(self) -> tuple[str, ...]:
        return tuple(sorted({*self._hooks, *self._pending}))

    def get(self, group: str) -> Hook:
        """The hook for ``group``; :class:`HookNotFound` when there is none."""
        hook = self._hooks.get(group)
        if hook is not None:
            return hook
        if group in self._missing:
            raise HookNotFound(group, detail=self._missing[group])
        ep = self._pending.get(group)
        if ep is None:
            raise HookNotFound(group, self.groups())
        try:
            loaded: Any = ep.load()
            if isinstance(loaded, type) or (callable(loaded) and not isinstance(loaded, Hook)):
                loaded = loaded()  # a hook class or factory
            hook = loaded
        except Exception as exc:
            raise HookNotFound(
                group, detail=f"entry point {ep.value} failed: {type(exc).__name__}"
            ) from None
        if not isinstance(hook, Hook):
            raise HookNotFound(group, detail=f"entry point {ep.value} is not a hook")
        self._hooks[group] = hook
        del self._pending[group]
        return hook


def installed_entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    """The ``convection.hooks`` entry points of the installed distributions."""
    return tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
