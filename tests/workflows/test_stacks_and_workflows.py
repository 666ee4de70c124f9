"""examples/stacks-and-workflows, run as its README says (``run.sh``, the
real CLI on a real SQLite store): a workflow in a stack creates a second
stack, which waits for the workflow's signal; then both are deleted and
nothing is left, not the workflow nor its execution."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from convection.store.sql import SQLStore
from convection.workflows import list_executions, list_workflows

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "stacks-and-workflows"


def test_run_sh_drives_a_stack_that_waits_for_the_workflow(tmp_path: Path) -> None:
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "TMPDIR": str(tmp_path), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(
        [str(EXAMPLE / "run.sh")], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "[default/app]: CREATE_COMPLETE" in out
    assert '{"1": "release 2"}' in out  # the workflow's signal completed the wait
    assert "SUCCESS" in out
    assert out.rstrip().endswith("Stack control DELETE_COMPLETE")
    store = SQLStore(f"sqlite:///{tmp_path / 'stacks-and-workflows.db'}")
    try:
        assert store.list_stacks("default") == []
        assert list_workflows(store, "default") == []  # deleted with the control stack
        assert list_executions(store, "default") == []
    finally:
        store.close()
