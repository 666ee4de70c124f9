"""No input may produce a traceback.

Random and mutated templates go through everything ``template validate`` and
``template graph`` do (load, the service function, the graph and its
renderings, and the CLI on a real file), and only clean outcomes may come
out: success, or a :class:`ConvectionError` whose diagnostics all carry a
message. The CLI must exit 0 or 1 (2 means an internal error) and never
print a traceback.

Inputs come from four sources: mutations of every fixture and example
(keys deleted, renamed or duplicated, values replaced by other types, random
intrinsic function calls injected anywhere, the version changed), random
text and bytes (YAML syntax soup, control characters, deep nesting, huge
numbers, anchors and aliases), random JSON-like trees built from HOT's
vocabulary, and templates with HOT's sections holding random values, with an
environment and ``--parameter`` values.

Each test is bounded (300 examples at most, no deadline) so that the file
runs in well under a minute; a failure prints the smallest input found.
"""

from __future__ import annotations

import copy
import functools
import io
import json
import tempfile
from collections.abc import Callable, Mapping
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convection.cli.main import run
from convection.common.diagnostics import Diagnostic
from convection.common.errors import ConvectionError, InvalidInput
from convection.hot.functions.tables import CONDITION_FUNCTIONS, FUNCTIONS, VERSIONS
from convection.hot.loader import Document, load
from convection.hot.versions import all_versions
from convection.model import graph_format
from convection.model.compiler import StackInputs, compile_stack
from convection.resources.registry import default_registry
from convection.service.validate import validate_template

ROOT = Path(__file__).parents[1]
SOURCES = sorted(
    [*(ROOT / "tests" / "fixtures").rglob("*.yaml"), *(ROOT / "examples").rglob("*.yaml")]
)

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.filter_too_much,
    ],
)

# --- what a clean outcome is -------------------------------------------------------


def assert_clean_diagnostic(d: Diagnostic) -> None:
    assert isinstance(d.message, str) and d.message.strip(), repr(d)
    str(d)  # how the CLI prints it
    json.dumps(d.to_dict())  # and how --format json does


def assert_clean_error(exc: ConvectionError) -> None:
    if isinstance(exc, InvalidInput):
        assert exc.diagnostics, "InvalidInput without diagnostics"
        for d in exc.diagnostics:
            assert_clean_diagnostic(d)
    assert str(exc).strip()


@dataclass(frozen=True)
class Case:
    """One input: the template text, its environments, and the files beside it."""

    text: str | bytes
    environments: tuple[tuple[str, str], ...] = ()
    #: Files the template may name (nested templates, get_file), by name.
    siblings: Mapping[str, str] = field(default_factory=dict)
    parameters: Mapping[str, str] = field(default_factory=dict)


def check_pipeline(case: Case) -> None:
    """Load, validate (as the service does) and graph; then compile strictly."""
    try:
        template = load(case.text, "t.yaml")
        environments = tuple(load(text, name) for name, text in case.environments)
    except ConvectionError as exc:
        assert_clean_error(exc)
        return
    inputs = StackInputs(template, environments, dict(case.siblings), dict(case.parameters))
    _check_validate(inputs, template)
    try:
        compile_stack(inputs, catalog=default_registry().catalog(strict=True))
    except ConvectionError as exc:
        assert_clean_error(exc)


def _check_validate(inputs: StackInputs, template: Document) -> None:
    try:
        body, compiled = validate_template(inputs)
    except ConvectionError as exc:
        assert_clean_error(exc)
        return
    for d in compiled.warnings:
        assert_clean_diagnostic(d)
    json.dumps(body, default=str)
    yaml.safe_dump(body)
    graph = compiled.graph
    assert len(graph.topological_order()) == len(graph)
    assert len(graph.reverse_order()) == len(graph)
    labels = {n: r.type for n, r in compiled.definition.resources.items()}
    for fmt in graph_format.GraphFormat:
        graph_format.render_graph(graph, fmt, labels=labels)
    # Locating anything runs the loader's marking pass, which must not fail either.
    template.source.mark(("resources", "r", "properties"))


def check_cli(case: Case, command: list[str]) -> None:
    """The real entry point on a real file: exit 0 or 1, never a traceback.

    ``command`` is ``["validate", "-f", "json"]`` or the like; the template,
    environment and parameter options are added here.
    """
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        path = directory / "t.yaml"
        path.write_bytes(case.text if isinstance(case.text, bytes) else case.text.encode())
        for name, content in case.siblings.items():
            (directory / name).write_text(content)
        options = ["-t", str(path)]
        for name, content in case.environments:
            (directory / name).write_text(content)
            options += ["-e", str(directory / name)]
        options += [f"--parameter={k}={v}" for k, v in case.parameters.items()]
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = run(["template", *command, *options])
        printed = out.getvalue() + err.getvalue()
        assert code in (0, 1), f"exit {code} for {command}:\n{printed}"
        assert "Traceback" not in printed, printed
        assert "internal error" not in printed, printed


#: The CLI command each example also runs, if any. Building Typer's command
#: tree costs more than the pipeline itself, so a third of the examples skip it.
cli_commands = st.one_of(
    st.none(),
    st.builds(lambda f: ["validate", "-f", f], st.sampled_from(["table", "json", "yaml"])),
    st.builds(lambda f: ["graph", "-f", f.value], st.sampled_from(list(graph_format.GraphFormat))),
)


def check(case: Case, command: list[str] | None = None) -> None:
    check_pipeline(case)
    if command is not None:
        check_cli(case, command)


# --- values, names and function calls --------------------------------------------

VERSION_NAMES = [*VERSIONS, *(a for v in all_versions() for a in v.aliases)]
JUNK_VERSIONS: list[Any] = ["2099-01-01", "", "2016-10-14 ", 20161014, None, [], {}, True]
FUNCTION_NAMES = sorted(
    {n for t in (*FUNCTIONS.values(), *CONDITION_FUNCTIONS.values()) for n in t}
)
HUGE_STRING = "x" * 20_000

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "0", "1", "true", "false", "null", "%x%", "$x", "a,b", "/", "::"]),
)


def json_trees(leaves: st.SearchStrategy[Any], keys: st.SearchStrategy[str]) -> Any:
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)
        ),
        max_leaves=12,
    )


@functools.cache
def other_values(names: tuple[str, ...]) -> st.SearchStrategy[Any]:
    """Something of another type: what a value gets replaced with."""
    words = st.sampled_from(names) if names else st.just("x")
    return st.one_of(
        scalars,
        words,
        st.just(HUGE_STRING),
        st.just(10**25),
        st.lists(st.one_of(scalars, words), max_size=3),
        st.dictionaries(st.one_of(st.text(max_size=6), words), scalars, max_size=3),
    )


YAQL_EXPRESSIONS = [
    "$.data",
    "$.data.a",
    "len($.data)",
    "$.data.select($ * 2)",
    "$.data.where($ > 1)",
    "1 + 2",
    "range(10)",
    "range(100000).sum()",
    "true",
    "$.data.keys()",
    "$.data[0]",
    "$.nope.nope",
    "let(x => 1) -> $x",
    "'a' * 10",
    "",
    ")(",
]


@functools.cache  # building strategies costs more than drawing from them
def calls(names: tuple[str, ...]) -> st.SearchStrategy[Any]:
    """A random intrinsic function call, shaped like real ones or not at all."""
    words = st.sampled_from([*names, "value", "first_address", "name", "show", "0"])
    trees = json_trees(st.one_of(scalars, words), st.one_of(words, st.text(max_size=5)))
    specific = st.one_of(
        st.builds(lambda a: {"get_attr": a}, st.lists(st.one_of(words, trees), max_size=4)),
        st.builds(lambda a: {"get_resource": a}, st.one_of(words, trees)),
        st.builds(lambda a: {"get_param": a}, st.one_of(words, st.lists(words, max_size=3))),
        st.builds(
            lambda t, v, f, p: {"repeat": {"template": t, "for_each": {v: f}, "permutations": p}},
            trees,
            st.sampled_from(["%x%", "", "<%y%>"]),
            st.one_of(st.lists(st.one_of(scalars, words), max_size=5), trees),
            st.one_of(st.booleans(), scalars),
        ),
        st.builds(lambda a: {"repeat": a}, trees),
        st.builds(
            lambda e, d: {"yaql": {"expression": e, "data": d}},
            st.one_of(st.sampled_from(YAQL_EXPRESSIONS), st.text(max_size=15), trees),
            trees,
        ),
        st.builds(
            lambda t, p: {"str_replace": {"template": t, "params": p}},
            st.one_of(st.text(max_size=20), trees),
            st.one_of(st.dictionaries(st.text(max_size=4), trees, max_size=3), trees),
        ),
        st.builds(lambda a: {"if": a}, st.lists(st.one_of(words, trees), max_size=4)),
        st.builds(lambda a: {"list_join": a}, st.lists(trees, max_size=4)),
        st.builds(lambda a: {"map_merge": a}, st.one_of(st.lists(trees, max_size=3), trees)),
        st.builds(
            lambda a: {"make_url": a},
            st.dictionaries(
                st.sampled_from(["scheme", "host", "port", "path", "query", "x"]), trees
            ),
        ),
        st.builds(lambda a: {"str_split": a}, st.lists(trees, max_size=4)),
        st.builds(lambda a: {"digest": a}, st.lists(st.one_of(words, trees), max_size=3)),
    )
    anything = st.builds(lambda n, a: {n: a}, st.sampled_from(FUNCTION_NAMES), trees)
    return st.one_of(specific, anything)


# --- mutations of the fixtures -------------------------------------------------------


@dataclass(frozen=True)
class Source:
    path: Path
    data: dict[str, Any]
    names: list[str]

    @property
    def is_template(self) -> bool:
        return "heat_template_version" in self.data


def _names(data: Any) -> list[str]:
    found: set[str] = set()
    for section in ("resources", "parameters", "conditions", "outputs"):
        value = data.get(section) if isinstance(data, dict) else None
        if isinstance(value, dict):
            found.update(str(k) for k in value)
    return sorted(found)


def _source(path: Path) -> Source:
    data = load(path.read_text(), str(path)).data
    return Source(path, data, _names(data))


ALL_SOURCES = [_source(p) for p in SOURCES]
TEMPLATES = [s for s in ALL_SOURCES if s.is_template]
ENVIRONMENTS = [s for s in ALL_SOURCES if not s.is_template]


def _slots(data: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in a tree: the places a mutation can hit."""
    if isinstance(data, dict):
        for k, v in data.items():
            out.append((data, k))
            _slots(v, out)
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.append((data, i))
            _slots(v, out)
    return out


Draw = Callable[[st.SearchStrategy[Any]], Any]


def _delete(draw: Draw, data: dict[str, Any], names: list[str]) -> None:
    container, key = draw(st.sampled_from(_slots(data, [])))
    del container[key]


def _replace(draw: Draw, data: dict[str, Any], names: list[str]) -> None:
    container, key = draw(st.sampled_from(_slots(data, [])))
    container[key] = draw(other_values(tuple(names)))


def _rename(draw: Draw, data: dict[str, Any], names: list[str]) -> None:
    keyed = [(c, k) for c, k in _slots(data, []) if isinstance(c, dict)]
    container, key = draw(st.sampled_from(keyed))
    new = draw(st.one_of(st.sampled_from([*names, *FUNCTION_NAMES]), st.text(max_size=8)))
    container[new] = container.pop(key)


def _inject(draw: Draw, data: dict[str, Any], names: list[str]) -> None:
    container, key = draw(st.sampled_from(_slots(data, [])))
    container[key] = draw(calls(tuple(names)))


def _version(draw: Draw, data: dict[str, Any], names: list[str]) -> None:
    data["heat_template_version"] = draw(st.sampled_from([*VERSION_NAMES, *JUNK_VERSIONS]))


MUTATIONS = [_delete, _replace, _rename, _inject, _inject, _version]


def _dump(draw: Draw, data: Any) -> str:
    if draw(st.integers(0, 3)) == 0:
        return json.dumps(data)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=draw(st.booleans()))


def _text_mutation(draw: Draw, text: str) -> str:
    """Duplicate a line (a duplicate key, usually), or drop one."""
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    i = draw(st.integers(0, len(lines) - 1))
    if draw(st.booleans()):
        lines.insert(i, lines[i])
    else:
        del lines[i]
    return "\n".join(lines)


def _mutated(draw: Draw, source: Source, times: int) -> str:
    data = copy.deepcopy(source.data)
    for _ in range(times):
        if not _slots(data, []):
            break
        draw(st.sampled_from(MUTATIONS))(draw, data, source.names)
    text = _dump(draw, data)
    if draw(st.integers(0, 3)) == 0:
        text = _text_mutation(draw, text)
    return text


def _siblings(source: Source) -> dict[str, str]:
    return {
        p.name: p.read_text()
        for p in source.path.parent.glob("*.yaml")
        if p != source.path and p.name != "t.yaml"
    }


@st.composite
def mutated_templates(draw: Draw) -> Case:
    source = draw(st.sampled_from(TEMPLATES))
    text = _mutated(draw, source, draw(st.integers(1, 3)))
    siblings = _siblings(source)
    environments: tuple[tuple[str, str], ...] = ()
    envs_beside = [s for s in ENVIRONMENTS if s.path.parent == source.path.parent]
    if envs_beside and draw(st.booleans()):
        env = draw(st.sampled_from(envs_beside))
        environments = ((env.path.name, env.path.read_text()),)
        siblings.pop(env.path.name, None)
    return Case(text, environments, siblings)


@st.composite
def mutated_environments(draw: Draw) -> Case:
    env = draw(st.sampled_from(ENVIRONMENTS))
    beside = [s for s in TEMPLATES if s.path.parent == env.path.parent] or TEMPLATES
    template = draw(st.sampled_from(beside))
    env_text = _mutated(draw, env, draw(st.integers(1, 3)))
    siblings = {k: v for k, v in _siblings(template).items() if k != env.path.name}
    parameters = draw(
        st.dictionaries(st.sampled_from(template.names or ["x"]), st.text(max_size=5), max_size=2)
    )
    return Case(template.path.read_text(), ((env.path.name, env_text),), siblings, parameters)


@given(case=mutated_templates(), cli=cli_commands)
@FUZZ
def test_mutated_templates_fail_cleanly(case: Case, cli: list[str] | None) -> None:
    check(case, cli)


@given(case=mutated_environments(), cli=cli_commands)
@settings(FUZZ, max_examples=100)
def test_mutated_environments_fail_cleanly(case: Case, cli: list[str] | None) -> None:
    check(case, cli)


# --- random text and bytes ------------------------------------------------------------

TOKENS = [
    *"ab:-,[]{}'\"#|>&*!?%@`=~",
    ": ",
    "- ",
    "\n",
    "\n  ",
    "  ",
    "\t",
    "\r\n",
    "&x ",
    "*x",
    "<<: ",
    "<<: *x",
    "!!int ",
    "!!str ",
    "!!float ",
    "!!bool ",
    "!!null ",
    "!!timestamp ",
    "!!binary ",
    "!!map ",
    "!!seq ",
    "!!python/object ",
    "!foo ",
    "! ",
    "? ",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "%TAG ! tag:x:\n",
    "1e309",
    "-1e309",
    "0x1F",
    "0o17",
    "017",
    "1_000",
    "12:30:45",
    "190:20:30",
    "2016-10-14",
    "2001-12-14t21:59:43.10-05:00",
    ".inf",
    ".nan",
    "~",
    "null",
    "yes",
    "off",
    "On",
    "\x00",
    "\x07",
    "\x85",
    "\u2028",
    "\ufeff",
    "\ud7ff",
    "heat_template_version: 2021-04-16\n",
    "heat_template_version: ",
    "resources:\n",
    "  r:\n    type: OS::Heat::None\n",
    "type: ",
    "properties: ",
    "outputs:\n",
    "parameters:\n",
    "conditions:\n",
    "value: ",
    "{get_param: x}",
    "{get_attr: [r, x]}",
    "{get_resource: r}",
    "depends_on: ",
]


def _nested(n: int, kind: int) -> str:
    if kind == 0:
        return "a: " + "[" * n + "]" * n + "\n"
    if kind == 1:
        return "a: " + "{b: " * n + "1" + "}" * n + "\n"
    if kind == 2:
        return "a:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(n))
    if kind == 3:
        return "[" * n + "]" * n
    # JSON: it does not go through the YAML builder's depth check.
    return (
        '{"heat_template_version": "2021-04-16", "resources": {"r": '
        '{"type": "OS::Heat::Value", "properties": {"value": ' + "[" * n + "]" * n + "}}}}"
    )


def _laughs(n: int, used: bool) -> str:
    """Anchors doubling n times: defined only, or defined and used in a template."""
    anchors = ["a0: &a0 [x, x]", *(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, n))]
    if not used:
        return "".join(f"{line}\n" for line in anchors)
    return (
        "heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::Value\n"
        "    metadata:\n"
        + "".join(f"      {line}\n" for line in anchors)
        + f"    properties: {{value: *a{n - 1}}}\n"
    )


random_texts = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200),
    st.lists(st.sampled_from(TOKENS), max_size=60).map("".join),
    st.builds(_nested, st.integers(1, 1500), st.integers(0, 4)),
    st.builds(
        lambda digits, prefix: f"heat_template_version: 2021-04-16\nparameters:\n  p:\n"
        f"    type: number\n    default: {prefix}{digits}\n",
        st.integers(1, 6000).map(lambda n: "9" * n),
        st.sampled_from(["", "-", "0x", "0o", "0b", "1:", "+"]),
    ),
    st.builds(_laughs, st.integers(1, 30), st.booleans()),
)


@given(text=random_texts, cli=cli_commands)
@FUZZ
def test_random_text_fails_cleanly(text: str | bytes, cli: list[str] | None) -> None:
    check(Case(text), cli)


# --- random trees of HOT's vocabulary ---------------------------------------------

WORDS = [
    "heat_template_version",
    "description",
    "parameters",
    "parameter_groups",
    "resources",
    "outputs",
    "conditions",
    "type",
    "properties",
    "metadata",
    "depends_on",
    "deletion_policy",
    "update_policy",
    "condition",
    "external_id",
    "value",
    "default",
    "constraints",
    "hidden",
    "label",
    "tags",
    "immutable",
    "length",
    "range",
    "min",
    "max",
    "modulo",
    "step",
    "offset",
    "allowed_values",
    "allowed_pattern",
    "custom_constraint",
    "string",
    "number",
    "json",
    "boolean",
    "comma_delimited_list",
    "OS::Heat::None",
    "OS::Heat::Value",
    "OS::Heat::RandomString",
    "OS::Heat::TestResource",
    "OS::Nova::Server",
    "OS::Heat::ResourceGroup",
    "Delete",
    "Retain",
    "r",
    "s",
    "p",
    "c",
    *FUNCTION_NAMES,
]


@st.composite
def hot_trees(draw: Draw) -> Case:
    words = st.sampled_from(WORDS)
    tree = draw(json_trees(st.one_of(scalars, words), st.one_of(words, st.text(max_size=4))))
    data: dict[str, Any] = {"heat_template_version": draw(st.sampled_from(VERSION_NAMES))}
    if isinstance(tree, dict):
        data.update(tree)
    else:
        data[draw(words)] = tree
    section = draw(st.sampled_from(["resources", "parameters", "outputs", "conditions"]))
    data.setdefault(section, {})
    if isinstance(data[section], dict):
        data[section][draw(words)] = draw(calls(("r", "s", "p", "c")))
    return Case(_dump(draw, data))


@given(case=hot_trees(), cli=cli_commands)
@FUZZ
def test_random_trees_fail_cleanly(case: Case, cli: list[str] | None) -> None:
    check(case, cli)


# --- random templates with HOT's structure ---------------------------------------

PARAMETER_TYPES = ["string", "number", "comma_delimited_list", "json", "boolean", "junk"]
RESOURCE_TYPES = [
    "OS::Heat::None",
    "OS::Heat::Value",
    "OS::Heat::RandomString",
    "OS::Heat::TestResource",
    "OS::Heat::Delay",
    "OS::Nova::Server",
    "OS::Neutron::Port",
    "OS::Heat::ResourceGroup",
    "OS::Heat::SoftwareConfig",
    "My::Alias",
    "My::Missing",
    "nested.yaml",
    "missing.yaml",
]
CONSTRAINT_VALUES: list[Any] = [
    {"length": {"min": 1, "max": 3}},
    {"range": {"min": 0, "max": 10}},
    {"range": {"min": "a"}},
    {"modulo": {"step": 2, "offset": 1}},
    {"modulo": {"step": 0, "offset": 0}},
    {"allowed_values": ["a", 1, None]},
    {"allowed_values": "a"},
    {"allowed_pattern": "[a-z]+"},
    {"allowed_pattern": "(("},
    {"allowed_pattern": 5},
    {"custom_constraint": "net_cidr"},
    {"custom_constraint": "ip_addr"},
    {"custom_constraint": "cron_expression"},
    {"custom_constraint": "timezone"},
    {"custom_constraint": "expiration"},
    {"custom_constraint": "nova.flavor"},
    {"custom_constraint": "nope"},
    {"length": {"min": 1}, "description": 5},
    {},
]
NESTED = """heat_template_version: 2017-09-01
parameters:
  size: {type: string, constraints: [{allowed_values: [small, large]}]}
  count: {type: number, default: 1}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: size}}}
outputs:
  endpoint: {value: {get_attr: [v, value]}}
"""


#: ``--parameter`` values: short text, or JSON nested deeper than any limit.
parameter_values = st.one_of(
    st.text(max_size=5),
    st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 3000).map(lambda n: '{"a": ' * n + "1" + "}" * n),
)


@st.composite
def structured_templates(draw: Draw) -> Case:
    """Sections that look like a template's, holding random values and calls."""
    params = draw(st.lists(st.sampled_from(["p", "q", "size", "count"]), unique=True, max_size=3))
    resources = draw(st.lists(st.sampled_from(["r", "s", "t"]), unique=True, max_size=3))
    conditions = draw(st.lists(st.sampled_from(["c", "d"]), unique=True, max_size=2))
    names = [*params, *resources, *conditions]
    values = st.one_of(other_values(tuple(names)), calls(tuple(names)))
    data: dict[str, Any] = {
        "heat_template_version": draw(st.sampled_from(VERSION_NAMES)),
        "parameters": {
            name: {
                "type": draw(st.sampled_from(PARAMETER_TYPES)),
                **draw(st.fixed_dictionaries({}, optional={"default": values})),
                **draw(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "constraints": st.lists(st.sampled_from(CONSTRAINT_VALUES), max_size=2),
                            "hidden": st.one_of(st.booleans(), scalars),
                            "label": values,
                        },
                    )
                ),
            }
            for name in params
        },
        "conditions": {name: draw(calls(tuple(names))) for name in conditions},
        "resources": {
            name: {
                "type": draw(st.sampled_from(RESOURCE_TYPES)),
                **draw(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "properties": st.dictionaries(
                                st.sampled_from(
                                    ["value", "type", "length", "size", "count", "x", "flavor"]
                                ),
                                values,
                                max_size=3,
                            ),
                            "depends_on": st.one_of(
                                st.sampled_from(names or ["r"]), st.lists(values, max_size=2)
                            ),
                            "condition": st.one_of(st.sampled_from(names or ["c"]), values),
                            "metadata": values,
                            "deletion_policy": st.one_of(
                                st.sampled_from(["Delete", "retain", "Snapshot", "x"]), values
                            ),
                            "update_policy": values,
                            "external_id": values,
                        },
                    )
                ),
            }
            for name in resources
        },
        "outputs": draw(
            st.dictionaries(
                st.sampled_from(["o", "out"]),
                st.fixed_dictionaries(
                    {"value": values}, optional={"condition": values, "description": values}
                ),
                max_size=2,
            )
        ),
    }
    environment = {
        "resource_registry": {
            "My::Alias": draw(st.sampled_from(["OS::Heat::None", "nested.yaml", "My::Alias", "x"])),
            **draw(st.fixed_dictionaries({}, optional={"resources": other_values(tuple(names))})),
        },
        "parameters": draw(st.dictionaries(st.sampled_from(params or ["p"]), values, max_size=2)),
        "parameter_defaults": draw(
            st.dictionaries(st.sampled_from(params or ["p"]), values, max_size=2)
        ),
    }
    if not conditions:
        del data["conditions"]
    return Case(
        _dump(draw, data),
        (("env.yaml", _dump(draw, environment)),),
        {"nested.yaml": NESTED, "data.txt": "some data\n"},
        draw(st.dictionaries(st.sampled_from(params or ["p"]), parameter_values, max_size=2)),
    )


@given(case=structured_templates(), cli=cli_commands)
@FUZZ
def test_structured_templates_fail_cleanly(case: Case, cli: list[str] | None) -> None:
    check(case, cli)


def test_every_source_passes_the_checks_unmutated() -> None:
    """The fuzzing harness itself: every fixture goes through all of it."""
    assert len(TEMPLATES) >= 6 and ENVIRONMENTS
    for source in TEMPLATES:
        case = Case(source.path.read_text(), siblings=_siblings(source))
        check(case, ["validate"])
        check_cli(case, ["graph"])
