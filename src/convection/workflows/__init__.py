"""Workflows: Mistral's v2 language and its engine, a second front-end of
the kernel (``convection.kernel``). Empty until issue 14 fills it.

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

__all__: list[str] = []
