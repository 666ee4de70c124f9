"""Planning: stored state + a new definition -> what to do, and in which order.

Pure: no I/O, no clock. See :mod:`convection.plan.model` for the data, and
:func:`build_plan` for how it is made.
"""

import lazy_loader

# Each name loads its module on first use: importing the package costs
# nothing, so a command pays only for the layers it touches. The names
# and their modules are listed once, typed, in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
