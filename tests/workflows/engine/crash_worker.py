"""A separate engine process for the workflow crash trials (``test_crash.py``).

``crash_worker.py URL WORKFLOWS INPUT`` uploads the workflows of the file
``WORKFLOWS`` to the store at ``URL``, starts an execution of ``crash_main``
with the JSON ``INPUT``, prints ``started <execution id>`` and runs the
engine until nothing is left to run.

The test SIGKILLs it at a seeded moment after ``started``; ``convection
engine --until-idle`` must then take the execution up where the store says
it is. ``test.ledger`` reaches this process as an installed plugin would:
through the ``convection.actions`` entry point of a dist-info directory on
``PYTHONPATH``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from convection.convergence import EngineConfig
from convection.service.stacks import Stacks, StacksConfig
from convection.store.sql import SQLStore
from convection.workflows import create_execution, create_workflows, engine_for
from convection.workflows.actions import default_registry

PROJECT = "crash"


def main() -> None:
    url, workflows, given = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
    if "test.ledger" not in default_registry():
        sys.exit("test.ledger is not installed: the entry point was not found")
    store = SQLStore(url)
    # Short leases: the resuming engine takes a dead engine's nodes up quickly.
    config = EngineConfig(lease_seconds=0.6, scan_seconds=0.05, concurrency=16)
    stacks = Stacks(store, config=StacksConfig(engine=config))
    engine_for(stacks)
    create_workflows(store, PROJECT, workflows.read_text())
    execution = create_execution(store, PROJECT, "crash_main", input=given)
    print("started", execution["id"], flush=True)  # the test times its kill from here
    stacks.run_engine(timeout=120)
    store.close()


if __name__ == "__main__":
    main()
