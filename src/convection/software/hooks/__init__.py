"""Hooks by config ``group``: the built-in script and ansible hooks, the
registry, and the ``convection.hooks`` entry point group for third parties."""

from __future__ import annotations

from convection.software.derived import UNGROUPED
from convection.software.errors import HookNotFound
from convection.software.hooks.ansible import AnsibleHook, find_ansible_playbook
from convection.software.hooks.base import (
    ENTRY_POINT_GROUP,
    Hook,
    HookRegistry,
    installed_entry_points,
)
from convection.software.hooks.script import ScriptHook


def default_registry(*, entry_points: bool = True) -> HookRegistry:
    """``script``, ``ansible``, ``Heat::Ungrouped`` (as script), then the
    installed ``convection.hooks`` entry points unless ``entry_points=False``."""
    script = ScriptHook()
    builtins: dict[str, Hook] = {"script": script, UNGROUPED: script, "ansible": AnsibleHook()}
    registry = HookRegistry(builtins, installed_entry_points() if entry_points else ())
    try:
        find_ansible_playbook()
    except HookNotFound as exc:
        registry.unavailable("ansible", exc.detail)
    return registry


__all__ = [
    "ENTRY_POINT_GROUP",
    "AnsibleHook",
    "Hook",
    "HookRegistry",
    "ScriptHook",
    "default_registry",
    "find_ansible_playbook",
    "installed_entry_points",
]
