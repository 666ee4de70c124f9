"""A separate engine process for the crash tests: runs the store at
``argv[1]`` until nothing is active (or the test kills it)."""

from __future__ import annotations

import sys

from convection.convergence import EngineConfig
from convection.service.stacks import Stacks, StacksConfig
from convection.store.sql import SQLStore


def main() -> None:
    store = SQLStore(sys.argv[1])
    config = EngineConfig(lease_seconds=0.6, scan_seconds=0.05)
    stacks = Stacks(store, config=StacksConfig(engine=config))
    stacks.run_engine(timeout=120)
    store.close()


if __name__ == "__main__":
    main()
