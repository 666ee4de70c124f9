"""Shared type vocabulary.

Every layer speaks in these aliases, so a reader can tell at a glance whether a
value is raw template data, a location, or a path into a document.
"""

from __future__ import annotations

from typing import Any, TypeAlias

#: Plain data as it comes out of YAML or JSON: dicts, lists, str, int, float,
#: bool and None. Kept as ``Any`` because recursive aliases cost mypy dearly on
#: large literals and buy little here.
JSON: TypeAlias = Any

#: A path into a document: ``("resources", "web", "properties", "networks", 0)``.
PathKey: TypeAlias = str | int
Path: TypeAlias = tuple[PathKey, ...]


def format_path(path: Path) -> str:
    """Render a path the way Heat users read it: ``resources.web.networks[0].port``."""
    out: list[str] = []
    for key in path:
        if isinstance(key, int):
            out.append(f"[{key}]")
        elif out:
            out.append(f".{key}")
        else:
            out.append(str(key))
    return "".join(out)
