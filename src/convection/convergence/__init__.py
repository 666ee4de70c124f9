"""Stack execution on the kernel: Heat's convergence, as a front-end of
``convection.kernel``.

* :class:`Engine` (``walker``): the kernel's loop with stacks as its
  front-end (``frontend.StackFrontEnd``): take-up, jobs, endings;
* :class:`EngineConfig`: concurrency bounds, leases, polling, timeouts;
* ``operations``: turning a plan into a traversal (create, update, delete,
  rollback, whole-stack actions);
* the jobs (``job_*``), the plugin's context, hooks, signal wakes, nested
  stacks (``nested``, ``hub``, ``nested_wake``), a stack's final state
  (``finish``) and outputs.

What a resource *is* belongs to the plugins (``convection.resources``);
what is legal to ask belongs to the service layer above. Must not import
``service``, ``api``, ``cli`` or anything else above it.
"""

import lazy_loader

# Each name loads its module on first use: importing the package costs
# nothing, so a command pays only for the layers it touches. The names
# and their modules are listed once, typed, in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
