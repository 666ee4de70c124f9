"""Durable state: records, journal changes and the narrow :class:`Store`
protocol, implemented on SQLite (WAL) and PostgreSQL (``sql``) and in
memory (``memory``), with Alembic migrations.

Only code in this package touches SQL. It knows records (stacks,
resources, traversals, nodes, timers, events, signals, tokens, software
rows), not what they mean; it imports only ``common``.
"""

import lazy_loader

# Each name loads its module on first use: importing the package costs
# nothing, so a command pays only for the layers it touches. The names
# and their modules are listed once, typed, in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
