"""Resource types: the plugin API (``api``), the type registry
(``registry``), the built-in types (``heat/``) and fakes (``testing``).

Import from ``convection.resources.api``; this package imports nothing
itself, so loading the API never loads every built-in type.
"""
