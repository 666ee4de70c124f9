"""Mistral's v2 language: the workflow, workbook and ad-hoc action parsers
(``parse_workflows``, ``parse_workbook``, ``parse_actions``), then each
workflow's graph and its renderings.

The input's first byte chooses the parser; the rest is the document.
Seeds are every Mistral document of the fixtures and examples, under each
parser.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from _fuzzlib import Unclean, check_diagnostics, main, mistral_documents

from convection.common import Diagnostics
from convection.workflows import (
    WorkflowSpec,
    parse_actions,
    parse_workbook,
    parse_workflows,
    to_dot,
    to_mermaid,
    workflow_graph,
)

PARSERS = (parse_workflows, parse_workbook, parse_actions)


def seeds() -> list[bytes]:
    return [bytes([i]) + p.read_bytes() for p in mistral_documents() for i in range(len(PARSERS))]


def _graphs(specs: Sequence[WorkflowSpec]) -> None:
    for spec in specs:
        graph = workflow_graph(spec)
        to_dot(graph)
        to_mermaid(graph)


def one_input(data: bytes) -> None:
    if not data:
        return
    choice, text = data[0] % len(PARSERS), data[1:]
    diags: Diagnostics
    if choice == 0:
        workflows, diags = parse_workflows(text, "fuzz.yaml")
        found: object = workflows
        _graphs(workflows)
    elif choice == 1:
        workbook, diags = parse_workbook(text, "fuzz.yaml")
        found = workbook
        if workbook is not None:
            _graphs(workbook.workflows)
    else:
        actions, diags = parse_actions(text, "fuzz.yaml")
        found = actions
    check_diagnostics(diags)
    if diags.has_errors and found:
        raise Unclean("a parser returned specs beside errors")


if __name__ == "__main__":
    main(sys.modules[__name__])
