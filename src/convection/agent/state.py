"""The agent's own durable record: which configs it has reported.

``deploy`` keeps the run's marker and result on the node (the state
directory's ``node/work/deployed``); this keeps the last step, the report,
as one small file per derived config id under ``reported/``, written
(atomically: temp file, rename) only after the API accepted the report.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

#: A config id names a file: letters, digits, ``_.-`` (as hooks require).
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class AgentState:
    """``--state-dir``: the node sandbox hooks run in, and the reports made."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.node_root = root / "node"
        self._reported = root / "reported"
        self._reported.mkdir(parents=True, exist_ok=True, mode=0o700)

    def _path(self, config_id: str) -> Path:
        if not _PLAIN.match(config_id):
            raise ValueError(f"config id {config_id!r} is not a plain name")
        return self._reported / f"{config_id}.json"

    def reported(self, config_id: str) -> bool:
        return self._path(config_id).exists()

    def mark_reported(self, config_id: str, deployment_id: str | None, status: str) -> None:
        path = self._path(config_id)
        temp = path.with_suffix(".tmp")
        temp.write_text(json.dumps({"deployment_id": deployment_id, "status": status}))
        os.replace(temp, path)
