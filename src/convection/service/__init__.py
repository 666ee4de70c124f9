"""The service layer: operations in Python, and the only judge of what is
legal. The CLI calls it in embedded mode; the REST API calls the same.

* ``stacks`` (:class:`Stacks`) and ``stacks_read``: Heat's stack
  operations and reads;
* ``hooks``, ``signals``, ``inputs``, ``views``, ``sources``: breakpoints,
  signals, PATCH inputs, what reads show, reading files from disk;
* ``software``: Heat's software config and deployment API;
* ``validate``: template-validate.

It drives stacks through ``convergence`` and reads them from ``store``;
nothing above it (``api``, ``cli``, the dashboard) reaches past it into
the store or the engine to decide anything.
"""

import lazy_loader

# Each name loads its module on first use: importing the package costs
# nothing, so a command pays only for the layers it touches. The names
# and their modules are listed once, typed, in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
