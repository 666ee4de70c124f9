"""No document may produce a traceback: random trees built from Mistral's
vocabulary, and mutations of every fixture, go through the three parsers,
and only specs or located diagnostics come out."""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from convection.common import Diagnostics
from convection.workflows import parse_actions, parse_workbook, parse_workflows

from ._helpers import FIXTURES

WORDS = [
    "version", "name", "type", "direct", "reverse", "tasks", "task-defaults", "input",
    "output", "output-on-error", "vars", "tags", "description", "action", "workflow",
    "publish", "publish-on-error", "branch", "global", "atomic", "next", "on-success",
    "on-error", "on-complete", "on-skip", "join", "all", "one", "requires", "with-items",
    "concurrency", "retry", "count", "delay", "break-on", "continue-on", "wait-before",
    "wait-after", "timeout", "pause-before", "fail-on", "keep-result", "safe-rerun",
    "target", "base", "base-input", "workflows", "actions", "fail", "noop", "succeed",
    "pause", "t1", "t2", "t3", "2.0",
]  # fmt: skip

STRINGS = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(
        [
            "x in <% $.xs %>",
            "x in [1, 2",
            'fail msg="boom"',
            "fail(msg=x)",
            "std.echo output=<% $.a %> n=3",
            "std.echo output=hello",
            "<% $.a %> {{ _.b }}",
            "<% * %>",
            "{{ }",
            "count=3 delay=1",
            "t1 k=[1]",
            "(x) y",
            "",
        ]
    ),
    st.text(max_size=12),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(0, 2), STRINGS)
TREES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(STRINGS, inner, max_size=5)
    ),
    max_leaves=40,
)


def clean(diags: Diagnostics, result: Any, *, yaml_text: bool) -> None:
    """Each diagnostic has a message and a place. JSON that YAML cannot
    read (control characters) has no marks (the loader's source map comes
    from YAML), so there the path alone is the place."""
    for d in diags:
        assert d.message, d
        assert d.mark is not None if yaml_text else (d.mark is not None or d.path), d
    assert not (diags.has_errors and result)


def every_parser(text: str, *, yaml_text: bool = False) -> None:
    for parse in (parse_workflows, parse_workbook, parse_actions):
        result, diags = parse(text, "fuzz.yaml")
        clean(diags, result, yaml_text=yaml_text)


@settings(max_examples=300)
@given(st.dictionaries(STRINGS, TREES, max_size=4))
def test_random_workflow_bodies(body: dict[str, Any]) -> None:
    for doc in (
        {"version": "2.0", "wf": body, "name": "wb"},
        {"version": "2.0", "wf": {"tasks": body}},
        {"version": "2.0", "wf": {"type": "reverse", "tasks": body}},
    ):
        every_parser(json.dumps(doc))
        every_parser(yaml.safe_dump(doc), yaml_text=True)


def _fixtures() -> list[Any]:
    return [yaml.safe_load(p.read_text()) for p in sorted(FIXTURES.glob("*.yaml"))]


def _paths(tree: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(tree, dict):
        for key, value in tree.items():
            out += _paths(value, (*path, key))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            out += _paths(value, (*path, i))
    return out


@settings(max_examples=300)
@given(st.data())
def test_mutated_fixtures(data: st.DataObject) -> None:
    doc = copy.deepcopy(data.draw(st.sampled_from(_fixtures())))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(doc)[1:]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(TREES)
        elif isinstance(parent, dict):
            del parent[path[-1]]
    every_parser(json.dumps(doc))
    every_parser(yaml.safe_dump(doc), yaml_text=True)
