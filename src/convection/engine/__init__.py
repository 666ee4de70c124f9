"""The engine: runs a plan as a persisted traversal.

* :class:`Engine` (``walker``): claims ready nodes, runs their jobs, journals
  outcomes, resumes what a dead engine left;
* :class:`EngineConfig`: concurrency bounds, leases, polling;
* :mod:`convection.engine.operations`: turning a plan into a traversal.

Everything else in the package is internal.
"""

from convection.engine.config import EngineConfig
from convection.engine.walker import Engine

__all__ = ["Engine", "EngineConfig"]
