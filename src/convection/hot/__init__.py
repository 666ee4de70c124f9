"""The HOT template language: loading, versions, functions, parameters,
conditions and environments. Pure: nothing here does I/O except the loader's
reading of text it is handed, and get_file through an explicit file source."""

import lazy_loader

# Each name loads its module on first use: importing the package costs
# nothing, so a command pays only for the layers it touches. The names
# and their modules are listed once, typed, in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
