"""A separate engine process for the crash tests: runs every active
traversal of the store at ``argv[1]`` until none is left.

The test kills it with SIGKILL at random moments and starts another, which
must take the work up where the store says it is.
"""

from __future__ import annotations

import sys

from convection.convergence import EngineConfig
from convection.service.stacks import Stacks, StacksConfig
from convection.store.sql import SQLStore


def main() -> None:
    store = SQLStore(sys.argv[1])
    # Short leases: a successor takes over a dead engine's nodes quickly.
    config = EngineConfig(lease_seconds=0.6, scan_seconds=0.05, concurrency=16)
    stacks = Stacks(store, config=StacksConfig(engine=config))
    print("started", flush=True)  # the test times its kill from here
    stacks.run_engine(timeout=120)
    store.close()


if __name__ == "__main__":
    main()
