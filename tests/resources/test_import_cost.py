"""What a process pays before it does anything: building the type registry
and opening a current store must not import SSH or migration machinery
(asyncssh with its cryptography bindings; Alembic with Mako and Pygments),
which every CLI command and engine would otherwise load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from convection.store.sql import SQLStore


def test_registry_and_a_current_store_import_neither_asyncssh_nor_alembic(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'stacks.db'}"
    SQLStore(url).close()  # created at head
    code = (
        "import sys\n"
        "from convection.resources.registry import default_registry\n"
        "from convection.store.sql import SQLStore\n"
        "default_registry()\n"
        f"SQLStore({url!r}).close()\n"
        "print(sorted(m for m in ('asyncssh', 'alembic', 'mako') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
