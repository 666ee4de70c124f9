"""Mistral's Workflow Language v2, pure: documents, workbooks and ad-hoc
actions parsed into frozen specs, validated as Mistral validates them at
upload, every error located (``file:line:column`` and a document path).

Like ``convection.hot`` it does no I/O beyond reading the text it is
handed, and imports no engine or store. Expressions (YAQL and Jinja) are
``lang.expressions`` (evaluated by the engine, syntax-checked here).
"""

from convection.workflows.lang.actions import action_chain
from convection.workflows.lang.documents import parse_actions, parse_workbook, parse_workflows
from convection.workflows.lang.expressions import (
    EvaluationError,
    ExpressionHost,
    JinjaEvaluationError,
    MixedExpressionError,
    YaqlEvaluationError,
    evaluate,
    is_expression,
    syntax_errors,
    task_references,
)
from convection.workflows.lang.graph import Edge, WorkflowGraph, workflow_graph
from convection.workflows.lang.graph_format import to_dot, to_mermaid
from convection.workflows.lang.inline import Command, split_command
from convection.workflows.lang.limits import (
    MAX_ACTIONS_PER_DOCUMENT,
    MAX_TASKS_PER_WORKFLOW,
    MAX_WORKFLOWS_PER_DOCUMENT,
)
from convection.workflows.lang.specs import (
    ENGINE_COMMANDS,
    REQUIRED,
    ActionSpec,
    OnClause,
    Policies,
    Publish,
    Retry,
    TaskDefaults,
    TaskSpec,
    Transition,
    WithItems,
    WorkbookSpec,
    WorkflowSpec,
    lookup_order,
)

__all__ = [
    "ENGINE_COMMANDS",
    "MAX_ACTIONS_PER_DOCUMENT",
    "MAX_TASKS_PER_WORKFLOW",
    "MAX_WORKFLOWS_PER_DOCUMENT",
    "REQUIRED",
    "ActionSpec",
    "Command",
    "Edge",
    "EvaluationError",
    "ExpressionHost",
    "JinjaEvaluationError",
    "MixedExpressionError",
    "OnClause",
    "Policies",
    "Publish",
    "Retry",
    "TaskDefaults",
    "TaskSpec",
    "Transition",
    "WithItems",
    "WorkbookSpec",
    "WorkflowGraph",
    "WorkflowSpec",
    "YaqlEvaluationError",
    "action_chain",
    "evaluate",
    "is_expression",
    "lookup_order",
    "parse_actions",
    "parse_workbook",
    "parse_workflows",
    "split_command",
    "syntax_errors",
    "task_references",
    "to_dot",
    "to_mermaid",
    "workflow_graph",
]
