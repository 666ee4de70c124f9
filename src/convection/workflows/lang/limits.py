"""Limits on what one workflow, workbook or action document may hold.

The loader already caps a document's size and depth (``common.Limits``);
these cap the counts that later phases walk more than once, so that no
document, however it is written within the size limit, makes a check
cost more than linear time in what it holds. Mistral has none of these:
its names are limited only by its database columns (255 characters).
"""

from __future__ import annotations

from typing import Final

#: Tasks in one workflow. A 10,000-task workflow parses in well under a
#: second; Heat's comparable cap (resources per stack) is 1,000.
MAX_TASKS_PER_WORKFLOW: Final = 10_000

#: Workflows in one workflow document or workbook.
MAX_WORKFLOWS_PER_DOCUMENT: Final = 1_000

#: Ad-hoc actions in one action document or workbook.
MAX_ACTIONS_PER_DOCUMENT: Final = 1_000

#: A workflow, action or workbook name: Mistral's ``name`` columns are
#: ``String(255)``, so a longer name fails there, after validation.
MAX_NAME_LENGTH: Final = 255

#: A task name (Mistral's ``MAX_LENGTH_TASK_NAME``, mistral/lang/v2/tasks.py).
MAX_TASK_NAME_LENGTH: Final = 255

#: A task with ``join``: its name is part of a 255-character lock and key
#: (``join-task-<execution id>-<name>``), so 47 characters fewer
#: (Mistral's ``MAX_LENGTH_JOIN_TASK_NAME``).
MAX_JOIN_TASK_NAME_LENGTH: Final = MAX_TASK_NAME_LENGTH - 47
