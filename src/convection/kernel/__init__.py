"""The durable execution kernel: traversals of nodes, run to completion
across crashes.

What lives here, and nothing else:

* traversal leases (one engine runs a traversal at a time) and node
  leases (a claimed node is one engine's until its lease lapses);
* timers as rows: a node that waits holds no worker and no lease;
* the journal, which writes every change of one event-loop turn in one
  transaction;
* take-up after a crash: an engine rebuilds any active traversal whose
  lease lapsed, through its front-end;
* the executor seam (:class:`Executor`): where a claimed node's job runs.

It knows nothing of resources, stacks or workflows. A front-end
(:class:`FrontEnd`: stack convergence in ``convection.convergence``, and
workflow executions next) says what a node's job does, what a traversal is
when taken up, and how a run ends. Traversals are of a kind (``stack``,
``workflow``); :class:`FrontEnds` routes each to the front-end of its kind,
so one kernel runs them all. Must not import any layer above ``store`` and
``runtime``.
"""

from convection.kernel.executor import Executor
from convection.kernel.frontend import UNREAD, FrontEnd
from convection.kernel.journal import Journal
from convection.kernel.leases import TraversalLeases
from convection.kernel.outcome import Outcome, done
from convection.kernel.ports import KernelSettings, KernelStore
from convection.kernel.presence import beat, hear
from convection.kernel.record import UNRECORDED
from convection.kernel.remote import Dispatch, RemoteJobs
from convection.kernel.router import FrontEnds
from convection.kernel.run import FINISHED, Run, Stop, Tally
from convection.kernel.timers import POLL, Timers
from convection.kernel.walker import RECORD_ATTEMPTS, Kernel
from convection.kernel.worker import Worker

__all__ = [
    "FINISHED",
    "POLL",
    "RECORD_ATTEMPTS",
    "UNREAD",
    "UNRECORDED",
    "Dispatch",
    "Executor",
    "FrontEnd",
    "FrontEnds",
    "Journal",
    "Kernel",
    "KernelSettings",
    "KernelStore",
    "Outcome",
    "RemoteJobs",
    "Run",
    "Stop",
    "Tally",
    "Timers",
    "TraversalLeases",
    "Worker",
    "beat",
    "done",
    "hear",
]
