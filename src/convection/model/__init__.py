"""The stack model, pure: a template, its environment and parameter
values become a :class:`StackDefinition` and its dependency :class:`Graph`
(``compile_stack``, every phase's errors at once).

Also here: template resources as types (``template_types``), the reuse of
earlier compiles (``_recompile``: a stack's previous one, for updates;
``_member_compile``: one compile shared by a group's members), and Heat's
group semantics as values (``groups``: batches, member names, removal
policies, scaling arithmetic, group attributes).

No I/O, no clock, no store: it imports only ``hot`` and ``common``.
"""

import lazy_loader

# Each name loads its module on first use: importing the package costs
# nothing, so a command pays only for the layers it touches. The names
# and their modules are listed once, typed, in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
