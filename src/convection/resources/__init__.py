"""Resource types: the plugin API (``api``), the type registry
(``registry``), the built-in types (``heat/``, ``nodes/``, ``software/``)
and fakes (``testing``).

Third-party plugins import ``convection.resources.api``, the declared
plugin API (pinned by a test); the rest of Convection imports the names
below. Built-in types load when the registry is first built, not here.
What a resource is lives here; what runs it (``convergence``) and what is
legal to ask of it (``service``) are above, and never imported.
"""

import lazy_loader

# Each name loads its module on first use: importing the package costs
# nothing, so a command pays only for the layers it touches. The names
# and their modules are listed once, typed, in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
