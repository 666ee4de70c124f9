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
  ``reports.py``: an execution's tree read (report, sub-executions);
  ``adhoc.py``: actions run outside any workflow;
* ``attach.py``: one engine for stacks and workflows.

The kernel schedules, leases, times and journals; nothing here does.
"""

from convection.workflows.engine.adhoc import (
    checked_timeout,
    delete_action_execution,
    start_action_execution,
)
from convection.workflows.engine.attach import attach, engine_for, wait_execution
from convection.workflows.engine.cron_fire import fire_due
from convection.workflows.engine.cron_triggers import (
    CronTriggerNotFound,
    create_cron_trigger,
    cron_trigger_body,
    delete_cron_trigger,
    get_cron_trigger,
    list_cron_triggers,
)
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
from convection.workflows.engine.progress import (
    definition_graph,
    execution_progress,
    stored_graph,
)
from convection.workflows.engine.reports import (
    execution_report,
    execution_sub_executions,
    task_sub_executions,
)
from convection.workflows.engine.states import InvalidTransition

__all__ = [
    "Body",
    "CronTriggerNotFound",
    "InvalidTransition",
    "WorkflowFrontEnd",
    "attach",
    "checked_timeout",
    "complete_action_execution",
    "create_cron_trigger",
    "create_execution",
    "cron_trigger_body",
    "definition_graph",
    "delete_action_execution",
    "delete_cron_trigger",
    "delete_execution",
    "engine_for",
    "execution_progress",
    "execution_report",
    "execution_sub_executions",
    "fire_due",
    "get_action_execution",
    "get_cron_trigger",
    "get_execution",
    "get_task",
    "list_action_executions",
    "list_cron_triggers",
    "list_executions",
    "list_tasks",
    "rerun_task",
    "skip_task",
    "start_action_execution",
    "stored_graph",
    "task_sub_executions",
    "update_execution",
    "wait_execution",
]
