"""Workflows: Mistral's v2 language and its engine, a second front-end of
the kernel (``convection.kernel``). The language (``workflows.lang``),
the actions (``workflows.actions``) and the stored definitions
(``workflows.definitions``: workflows, workbooks and ad-hoc actions kept in
``store.workflows``, with Mistral's rules and field names) and the engine
(``workflows.engine``: executions on the kernel) are here.

What will live here, in the layout of docs/architecture.md:

* ``workflows.lang``: the pure language (documents, workbooks, ad-hoc
  actions, tasks, policies, YAQL and Jinja expressions as trees, located
  errors). Like ``hot``, it does no I/O and imports no engine or store.
* ``workflows.engine``: executions as kernel traversals, tasks as nodes,
  waits as timer rows; it implements ``kernel.FrontEnd``.
* ``workflows.actions``: action plugins (``convection.actions`` entry
  point): ``std.*`` and Convection's own, which drive stacks through the
  service layer.

What must not live here: another scheduler, lease or journal (the kernel's
are the only ones), or any reach into the stack tables.
"""

import lazy_loader

# Each name loads its module on first use (the expressions pull in yaql and
# Jinja); the names and their modules are listed once, typed, in __init__.pyi.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
