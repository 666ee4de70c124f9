"""Declared inputs: ``input`` of a workflow or an ad-hoc action.

Mistral's ``types.UNIQUE_STRING_OR_ONE_KEY_DICT_LIST``: a non-empty list
whose items are names (required inputs) or one-key mappings ``name:
default``, turned into a mapping by ``get_dict_from_entries``.
"""

from __future__ import annotations

from typing import Any

from convection.common import JSON, Path
from convection.workflows.lang._check import Checker, distinct, show
from convection.workflows.lang.specs import REQUIRED


def declared_inputs(ck: Checker, value: Any, path: Path) -> dict[str, JSON]:
    """The names and defaults; a name given twice is an error here, where
    Mistral's ``uniqueItems`` only catches identical items and keeps the
    last of ``[a, {a: 1}]`` silently."""
    if not isinstance(value, list) or not value:
        what = "[] is too short" if value == [] else f"{show(value)} is not of type 'array'"
        ck.error(f"{what}: expected a list of names and 'name: default' mappings", path)
        return {}
    distinct(ck, value, path)
    out: dict[str, JSON] = {}
    for i, item in enumerate(value):
        entry = _entry(ck, item, (*path, i))
        if entry is None:
            continue
        name, default = entry
        if name in out:
            ck.error(f"the input {name!r} is declared twice", (*path, i))
        out[name] = default
    return out


def _entry(ck: Checker, item: Any, path: Path) -> tuple[str, JSON] | None:
    if isinstance(item, str) and item:
        return item, REQUIRED
    if isinstance(item, dict) and len(item) == 1:
        name, default = next(iter(item.items()))
        if name:
            return name, default
    ck.error(
        f"{show(item)} is not valid under any of the given schemas: expected a name "
        "or a one-key mapping 'name: default'",
        path,
    )
    return None
