"""Where local nodes live on this machine: one rule for the node resources
(``Convection::Local::Node``, the SSH hosts' pinned known_hosts files) and
for the ``convection.software.run`` action.

The root is the operator's setting, never a template's or a workflow's
choice: deleting a node removes its directory, and a sandbox's directories
are given to the node's user, so nothing a user writes may point it
elsewhere.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

import platformdirs

#: The operator's setting for where local sandboxes (and SSH hosts' pinned
#: known_hosts files) live.
NODE_ROOT_ENV: Final = "CONVECTION_NODE_ROOT"
#: A root engine's default, as for any system service (a user the node runs
#: as must be able to reach its sandbox, and /root is closed to it).
SYSTEM_NODE_ROOT: Final = "/var/lib/convection/nodes"

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.-]")


def node_root() -> Path:
    """``$CONVECTION_NODE_ROOT``, else ``/var/lib/convection/nodes`` for a
    root engine, else the user's data dir (``~/.local/share/convection/nodes``)."""
    configured = os.environ.get(NODE_ROOT_ENV)
    if configured:
        return Path(os.path.abspath(os.path.expanduser(configured)))
    if os.geteuid() == 0:
        return Path(SYSTEM_NODE_ROOT)
    return Path(platformdirs.user_data_dir("convection")) / "nodes"


def safe_dir_name(name: str) -> str:
    """A directory name made of ``name``: portable characters only, bounded."""
    cleaned = _UNSAFE.sub("_", name).lstrip(".") or "node"
    return cleaned[:120]
