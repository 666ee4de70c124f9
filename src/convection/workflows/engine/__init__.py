"""The workflow engine: Mistral's executions as the kernel's second
front-end (``kernel.FrontEnd``).

* ``frontend.py``: what a ``workflow`` traversal is and how it ends;
* ``job.py``: one task's life (policies, its action or sub-workflow);
  ``items.py``: its action, once or per with-items item; ``child.py``:
  sub-workflows; ``publish.py`` and ``dispatch.py``: what it publishes and
  what it leads to (transitions, engine commands, joins);
* ``finish.py``: the execution's end; ``launch.py``: its start;
* ``operations.py``: what users do (start, pause, resume, cancel, rerun,
  skip, complete an asynchronous action), with Mistral's bodies;
* ``attach.py``: one engine for stacks and workflows.

The kernel schedules, leases, times and journals; nothing here does.
"""

from convection.workflows.engine.attach import attach, engine_for, wait_execution
from convection.workflows.engine.frontend import WorkflowFrontEnd
from convection.workflows.engine.operations import (
    Body,
    complete_action_execution,
    create_execution,
    delete_execution,
    get_action_execution,
    get_execution,
    get_task,
    list_action_executions,
    list_executions,
    list_tasks,
    rerun_task,
    skip_task,
    update_execution,
)
from convection.workflows.engine.states import InvalidTransition

__all__ = [
    "Body",
    "InvalidTransition",
    "WorkflowFrontEnd",
    "attach",
    "complete_action_execution",
    "create_execution",
    "delete_execution",
    "engine_for",
    "get_action_execution",
    "get_execution",
    "get_task",
    "list_action_executions",
    "list_executions",
    "list_tasks",
    "rerun_task",
    "skip_task",
    "update_execution",
    "wait_execution",
]
